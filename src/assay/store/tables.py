"""The SQLAlchemy tables, shared by SQLite and PostgreSQL. Migrations in ``migrations/`` create them."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
metadata = sa.MetaData()

files = sa.Table(
    "files", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(128), nullable=False, index=True),
    sa.Column("filename", sa.String(512), nullable=False),
    sa.Column("purpose", sa.String(32), nullable=False),
    sa.Column("bytes", sa.Integer, nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)  # fmt: skip

datasets = sa.Table(
    "datasets", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(128), nullable=False),
    sa.Column("name", sa.String(256), nullable=False),
    sa.Column("version", sa.String(64), nullable=False),
    sa.Column("uri", sa.Text, nullable=True),
    sa.Column("file_id", sa.String(64), nullable=True),
    sa.Column("description", sa.Text, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.UniqueConstraint("project", "name", "version"),
)  # fmt: skip

evals = sa.Table(
    "evals", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(128), nullable=False, index=True),
    sa.Column("name", sa.String(512), nullable=True),
    sa.Column("data_source_config", JSON, nullable=False),
    sa.Column("testing_criteria", JSON, nullable=False),
    sa.Column("metadata", JSON, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
)  # fmt: skip

runs = sa.Table(
    "runs", metadata,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(128), nullable=False, index=True),
    sa.Column("eval_id", sa.String(64), sa.ForeignKey("evals.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("name", sa.String(512), nullable=True),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("data_source", JSON, nullable=False),
    sa.Column("options", JSON, nullable=False),
    sa.Column("summary", JSON, nullable=True),
    sa.Column("error", JSON, nullable=True),
    sa.Column("metadata", JSON, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("finished_at", sa.Integer, nullable=True),
    sa.Column("worker", sa.String(128), nullable=True),
    sa.Column("lease_until", sa.Float, nullable=True),
)  # fmt: skip

api_keys = sa.Table(
    "api_keys", metadata,
    sa.Column("digest", sa.String(64), primary_key=True),
    sa.Column("project", sa.String(128), nullable=False),
    sa.Column("prefix", sa.String(16), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)  # fmt: skip

output_items = sa.Table(
    "output_items", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("datasource_item_id", sa.Integer, primary_key=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("datasource_item", JSON, nullable=False),
    sa.Column("sample", JSON, nullable=True),
    sa.Column("results", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("target_model", sa.String(256), nullable=True),
    sa.Column("target_calls", sa.Integer, nullable=False, server_default="0"),
    sa.Column("target_cache_hits", sa.Integer, nullable=False, server_default="0"),
    sa.Column("target_prompt_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("target_completion_tokens", sa.Integer, nullable=False, server_default="0"),
)  # fmt: skip

# One row per criterion per item, so summaries are plain GROUP BY queries on either database.
results = sa.Table(
    "results", metadata,
    sa.Column("run_id", sa.String(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("datasource_item_id", sa.Integer, primary_key=True),
    sa.Column("criterion", sa.String(256), primary_key=True),
    sa.Column("metric", sa.String(128), nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("passed", sa.Boolean, nullable=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("model", sa.String(256), nullable=True),
    sa.Column("calls", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cache_hits", sa.Integer, nullable=False, server_default="0"),
    sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cached_tokens", sa.Integer, nullable=False, server_default="0"),
)  # fmt: skip

evaluators = sa.Table(
    "evaluators", metadata,
    sa.Column("project", sa.String(128), primary_key=True),
    sa.Column("name", sa.String(256), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("content", sa.Text, nullable=False),
    sa.Column("digest", sa.String(64), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)  # fmt: skip

llm_cache = sa.Table(
    "llm_cache", metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("model", sa.String(256), nullable=False),
    sa.Column("response", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)  # fmt: skip

captured_responses = sa.Table(
    "captured_responses", metadata,
    sa.Column("project", sa.String(128), primary_key=True),
    sa.Column("id", sa.String(256), primary_key=True),
    sa.Column("api", sa.String(16), nullable=False),
    sa.Column("request", JSON, nullable=False),
    sa.Column("response", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)  # fmt: skip
"""Responses the capture pass-through forwarded, by id; ``api`` is ``chat`` or ``responses``."""

spans = sa.Table(
    "spans", metadata,
    sa.Column("project", sa.String(128), primary_key=True),
    sa.Column("trace_id", sa.String(32), primary_key=True),
    sa.Column("span_id", sa.String(16), primary_key=True),
    sa.Column("parent_span_id", sa.String(16), nullable=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("kind", sa.Integer, nullable=False),
    sa.Column("operation", sa.String(64), nullable=False),
    sa.Column("agent_name", sa.String(256), nullable=True),
    sa.Column("agent_version", sa.String(64), nullable=True),
    sa.Column("conversation_id", sa.String(256), nullable=True),
    sa.Column("start_ns", sa.BigInteger, nullable=False),
    sa.Column("end_ns", sa.BigInteger, nullable=False),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("status_message", sa.Text, nullable=False),
    sa.Column("attributes", JSON, nullable=False),
    sa.Column("events", JSON, nullable=False),
    sa.Column("resource", JSON, nullable=False),
    sa.Column("dropped_attributes", sa.Integer, nullable=False),
    sa.Column("received_at", sa.Integer, nullable=False),
)  # fmt: skip
"""OpenTelemetry spans; ``operation``, ``agent_*`` and ``conversation_id`` are pulled out to select by."""
