"""The SQLAlchemy tables, shared by SQLite and PostgreSQL. Migrations in ``migrations/`` create them."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects.postgresql import JSONB

from assay.store.values import StoreText, name_text_columns

CRITERION_NAME_LIMIT = 256
"""Characters in a testing criterion's name: its results are keyed by it."""

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
metadata = sa.MetaData()

files = sa.Table(
    "files",
    metadata,
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("project", StoreText(128), nullable=False, index=True),
    sa.Column("filename", StoreText(512), nullable=False),
    sa.Column("purpose", StoreText(32), nullable=False),
    sa.Column("bytes", sa.Integer, nullable=False),
    sa.Column("content", sa.LargeBinary, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

datasets = sa.Table(
    "datasets",
    metadata,
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("project", StoreText(128), nullable=False),
    sa.Column("name", StoreText(256), nullable=False),
    sa.Column("version", StoreText(64), nullable=False),
    sa.Column("uri", StoreText(), nullable=True),
    sa.Column("file_id", StoreText(64), nullable=True),
    sa.Column("description", StoreText(), nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.UniqueConstraint("project", "name", "version"),
)

# Foundry's dataset upload: startPendingUpload opens a container (its SAS signature is the
# credential), azure-storage-blob puts blocks or a whole blob into it, and a committed blob is a file.
blob_containers = sa.Table(
    "blob_containers",
    metadata,
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("project", StoreText(128), nullable=False),
    sa.Column("signature", StoreText(128), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

blob_blocks = sa.Table(
    "blob_blocks",
    metadata,
    sa.Column("container", StoreText(64), primary_key=True),
    sa.Column("blob", StoreText(1024), primary_key=True),
    sa.Column("block_id", StoreText(128), primary_key=True),
    sa.Column("content", sa.LargeBinary, nullable=False),
)

blobs = sa.Table(
    "blobs",
    metadata,
    sa.Column("container", StoreText(64), primary_key=True),
    sa.Column("name", StoreText(1024), primary_key=True),
    sa.Column("file_id", StoreText(64), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

evals = sa.Table(
    "evals",
    metadata,
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("project", StoreText(128), nullable=False, index=True),
    sa.Column("name", StoreText(512), nullable=True),
    sa.Column("data_source_config", JSON, nullable=False),
    sa.Column("testing_criteria", JSON, nullable=False),
    sa.Column("metadata", JSON, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.Integer, nullable=True),
)

runs = sa.Table(
    "runs",
    metadata,
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("project", StoreText(128), nullable=False, index=True),
    sa.Column("eval_id", StoreText(64), sa.ForeignKey("evals.id", ondelete="CASCADE"), nullable=False, index=True),
    sa.Column("name", StoreText(512), nullable=True),
    sa.Column("status", StoreText(16), nullable=False, index=True),
    sa.Column("data_source", JSON, nullable=False),
    sa.Column("options", JSON, nullable=False),
    sa.Column("summary", JSON, nullable=True),
    sa.Column("error", JSON, nullable=True),
    sa.Column("metadata", JSON, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("finished_at", sa.Integer, nullable=True),
    sa.Column("worker", StoreText(128), nullable=True),
    sa.Column("lease_until", sa.Float, nullable=True),
    # SQL NULL, not JSON null, when absent: a claim looks for runs that have inputs.
    sa.Column("inputs", sa.JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql"), nullable=True),
)

api_keys = sa.Table(
    "api_keys",
    metadata,
    sa.Column("digest", StoreText(64), primary_key=True),
    sa.Column("project", StoreText(128), nullable=False),
    sa.Column("prefix", StoreText(16), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

output_items = sa.Table(
    "output_items",
    metadata,
    sa.Column("run_id", StoreText(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("datasource_item_id", sa.Integer, primary_key=True),
    sa.Column("status", StoreText(16), nullable=False),
    sa.Column("datasource_item", JSON, nullable=False),
    sa.Column("sample", JSON, nullable=True),
    sa.Column("results", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("target_model", StoreText(256), nullable=True),
    sa.Column("target_calls", sa.Integer, nullable=False, server_default="0"),
    sa.Column("target_cache_hits", sa.Integer, nullable=False, server_default="0"),
    sa.Column("target_prompt_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("target_completion_tokens", sa.Integer, nullable=False, server_default="0"),
)

# One row per criterion per item, so summaries are plain GROUP BY queries on either database.
results = sa.Table(
    "results",
    metadata,
    sa.Column("run_id", StoreText(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("datasource_item_id", sa.Integer, primary_key=True),
    sa.Column("criterion", StoreText(CRITERION_NAME_LIMIT), primary_key=True),
    sa.Column("metric", StoreText(128), nullable=False),
    sa.Column("status", StoreText(16), nullable=False),
    sa.Column("passed", sa.Boolean, nullable=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("model", StoreText(256), nullable=True),
    sa.Column("calls", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cache_hits", sa.Integer, nullable=False, server_default="0"),
    sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cached_tokens", sa.Integer, nullable=False, server_default="0"),
)

# Calls an item cost besides its target's and its judges' (a simulated user's, an attacker's).
item_usage = sa.Table(
    "item_usage",
    metadata,
    sa.Column("run_id", StoreText(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("datasource_item_id", sa.Integer, primary_key=True),
    sa.Column("role", StoreText(32), primary_key=True),
    sa.Column("model", StoreText(256, clip=True), primary_key=True),
    sa.Column("calls", sa.Integer, nullable=False, server_default="0"),
    sa.Column("cache_hits", sa.Integer, nullable=False, server_default="0"),
    sa.Column("prompt_tokens", sa.Integer, nullable=False, server_default="0"),
    sa.Column("completion_tokens", sa.Integer, nullable=False, server_default="0"),
)

# The Batch API batches a run in batch mode created (assay.llm.batch): a resumed run collects them.
model_batches = sa.Table(
    "model_batches",
    metadata,
    sa.Column("run_id", StoreText(64), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
    sa.Column("batch_id", StoreText(256), primary_key=True),
    sa.Column("model", StoreText(256), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

evaluators = sa.Table(
    "evaluators",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("name", StoreText(256), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True),
    sa.Column("kind", StoreText(16), nullable=False),
    sa.Column("content", StoreText(), nullable=False),
    sa.Column("digest", StoreText(64), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("details", JSON, nullable=True),
)
"""Custom evaluators; ``details`` are what the catalog API was told beside the definition (display
name, description, tags, metadata, categories), changed in place by an update."""

llm_cache = sa.Table(
    "llm_cache",
    metadata,
    sa.Column("key", StoreText(64), primary_key=True),
    sa.Column("model", StoreText(256), nullable=False),
    sa.Column("response", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

captured_responses = sa.Table(
    "captured_responses",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(256), primary_key=True),
    sa.Column("api", StoreText(16), nullable=False),
    sa.Column("request", JSON, nullable=False),
    sa.Column("response", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)
"""Responses the capture pass-through forwarded, by id; ``api`` is ``chat`` or ``responses``."""

conversations = sa.Table(
    "conversations",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("metadata", JSON, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
)
"""The Conversations API's conversations: a thread of items a response may continue."""

conversation_items = sa.Table(
    "conversation_items",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("conversation_id", StoreText(64), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("id", StoreText(256), nullable=False),
    sa.Column("item", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)
"""A conversation's items in order (``position``), each under the id the API gave it."""

ingestion_keys = sa.Table(
    "ingestion_keys",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("key", StoreText(64), nullable=False, unique=True),
    sa.Column("created_at", sa.Integer, nullable=False),
)
"""Each project's Azure Monitor instrumentation key: what its telemetry is sent with, and found by."""

spans = sa.Table(
    "spans",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("trace_id", StoreText(32), primary_key=True),
    sa.Column("span_id", StoreText(16), primary_key=True),
    sa.Column("parent_span_id", StoreText(16), nullable=True),
    sa.Column("name", StoreText(clip=True), nullable=False),
    sa.Column("kind", sa.Integer, nullable=False),
    sa.Column("operation", StoreText(64, clip=True), nullable=False),
    sa.Column("agent_name", StoreText(256, clip=True), nullable=True),
    sa.Column("agent_version", StoreText(64, clip=True), nullable=True),
    sa.Column("conversation_id", StoreText(256, clip=True), nullable=True),
    sa.Column("start_ns", sa.BigInteger, nullable=False),
    sa.Column("end_ns", sa.BigInteger, nullable=False),
    sa.Column("status_code", sa.Integer, nullable=False),
    sa.Column("status_message", StoreText(clip=True), nullable=False),
    sa.Column("attributes", JSON, nullable=False),
    sa.Column("events", JSON, nullable=False),
    sa.Column("resource", JSON, nullable=False),
    sa.Column("dropped_attributes", sa.Integer, nullable=False),
    sa.Column("received_at", sa.Integer, nullable=False),
)
"""OpenTelemetry spans; ``operation``, ``agent_*`` and ``conversation_id`` are pulled out to select by."""


def _versioned(name: str) -> sa.Table:
    """A table of named bodies kept in versions (``assay.store.versioned``)."""
    return sa.Table(
        name,
        metadata,
        sa.Column("project", StoreText(128), primary_key=True),
        sa.Column("name", StoreText(256), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


evaluation_taxonomies = _versioned("evaluation_taxonomies")
"""Red-team taxonomies: every create or update is a new version, so a run keeps the one it named."""

agents = _versioned("agents")
"""Prompt agents made through Foundry's agents API (a model, its instructions and sampling), each
version kept: a run names one as its ``azure_ai_agent`` target."""

name_text_columns(metadata)

# Continuous evaluation: Foundry's evaluation rules (the body as the API takes it), and the events
# they sampled, each claimed by the run that evaluates it (``assay.api.rules``).
evaluation_rules = sa.Table(
    "evaluation_rules",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(256), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("agent_name", StoreText(256), nullable=True),
    sa.Column("action_type", StoreText(64), nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.Integer, nullable=False),
    sa.Column("holder", StoreText(256), nullable=True),
    sa.Column("lease_until", sa.Float, nullable=True),
)
rule_events = sa.Table(
    "rule_events",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("rule_id", StoreText(256), primary_key=True),
    sa.Column("response_id", StoreText(256), primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("run_id", StoreText(64), nullable=True),
)

# Schedules (Foundry's, the body as the API takes it) and what each firing did. ``next_fire`` moves
# on with a compare-and-set, so one server fires each trigger (``assay.api.schedules``).
schedules = sa.Table(
    "schedules",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(256), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("enabled", sa.Boolean, nullable=False),
    sa.Column("task_type", StoreText(64), nullable=False),
    sa.Column("next_fire", sa.Float, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("updated_at", sa.Integer, nullable=False),
)
schedule_runs = sa.Table(
    "schedule_runs",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("schedule_id", StoreText(256), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("trigger_time", sa.Float, nullable=False),
    sa.Column("success", sa.Boolean, nullable=False),
    sa.Column("error", StoreText(clip=True), nullable=True),
    sa.Column("eval_run_id", StoreText(64), nullable=True),
    sa.Column("eval_id", StoreText(64), nullable=True),
    sa.Column("insight_id", StoreText(64), nullable=True),
    sa.Column("fired_at", sa.Float, nullable=True),
)

# What each run an evaluation rule or a schedule made was found to need: an alert or none; one row
# per run, so no run is alerted on twice. An alert waits here, an outbox, until it is delivered:
# ``next_attempt_at`` when it is next tried, a lease so one server tries it at a time, and every
# attempt in ``attempt_log`` (``assay.api.alerts``).
alerts = sa.Table(
    "alerts",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("run_key", StoreText(64), primary_key=True),
    sa.Column("source", StoreText(16), nullable=False),
    sa.Column("source_id", StoreText(256), nullable=False),
    sa.Column("kind", StoreText(32), nullable=False),
    sa.Column("payload", JSON, nullable=True),
    sa.Column("delivered", sa.Boolean, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("status", sa.Integer, nullable=True),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.Column("state", StoreText(16), nullable=True),
    sa.Column("target", JSON, nullable=True),
    sa.Column("next_attempt_at", sa.Float, nullable=True),
    sa.Column("leased_until", sa.Float, nullable=True),
    sa.Column("leased_by", StoreText(256), nullable=True),
    sa.Column("attempt_log", JSON, nullable=True),
    sa.Index("alerts_due", "next_attempt_at"),
)

# Insights (Foundry's ``/insights``): the request and its result, as the API returns them.
insights = sa.Table(
    "insights",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

# Long-running jobs (data and evaluator generation jobs, agent insight runs): the job as the API
# returns it, by kind, with the process running it.
jobs = sa.Table(
    "jobs",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("kind", StoreText(16), nullable=False),
    sa.Column("status", StoreText(16), nullable=False),
    sa.Column("runner", StoreText(256), nullable=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)

# Agent insight monitors (``beta.agent_insight_monitors``): one per agent of a project, its
# configuration, overview and insights in ``body``; ``next_run_at`` is when it runs next on its own.
insight_monitors = sa.Table(
    "insight_monitors",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("agent_name", StoreText(256), nullable=False),
    sa.Column("next_run_at", sa.Integer, nullable=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
    sa.UniqueConstraint("project", "agent_name"),
)

# Human review. A label is what someone (or something) said of a result: entered in the review
# queue, received as an OpenTelemetry ``gen_ai.evaluation.result`` event, or read from a file.
# Labels are only ever added: a second answer is a new row, the newest of an annotator counting.
labels = sa.Table(
    "labels",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("annotator", StoreText(256, clip=True), nullable=False),
    sa.Column("actor_type", StoreText(32, clip=True), nullable=False),
    sa.Column("source", StoreText(16), nullable=False),
    sa.Column("criterion", StoreText(256, clip=True), nullable=False),
    sa.Column("label", StoreText(clip=True), nullable=True),
    sa.Column("passed", sa.Boolean, nullable=True),
    sa.Column("score", sa.Float, nullable=True),
    sa.Column("explanation", StoreText(clip=True), nullable=True),
    sa.Column("run_id", StoreText(64, clip=True), nullable=True),
    sa.Column("datasource_item_id", sa.Integer, nullable=True),
    sa.Column("queue_id", StoreText(64, clip=True), nullable=True),
    sa.Column("trace_id", StoreText(32, clip=True), nullable=True),
    sa.Column("span_id", StoreText(16, clip=True), nullable=True),
    sa.Column("response_id", StoreText(256, clip=True), nullable=True),
    sa.Index("labels_by_run", "project", "run_id"),
    sa.Index("labels_by_trace", "project", "trace_id"),
)

# A review queue (what is reviewed, how, by whom) and its items, each with its reviewer.
review_queues = sa.Table(
    "review_queues",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("id", StoreText(64), primary_key=True),
    sa.Column("body", JSON, nullable=False),
    sa.Column("created_at", sa.Integer, nullable=False),
)
review_items = sa.Table(
    "review_items",
    metadata,
    sa.Column("project", StoreText(128), primary_key=True),
    sa.Column("queue_id", StoreText(64), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True),
    sa.Column("datasource_item_id", sa.Integer, nullable=False),
    sa.Column("assignee", StoreText(256), nullable=True),
)
