"""Spans received over OTLP (or imported), with the GenAI fields runs select by pulled out.

Revision ID: 0007
Revises: 0006
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "spans",
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
    )
    op.create_index("spans_by_agent", "spans", ["project", "operation", "agent_name", "start_ns"])
    op.create_index("spans_by_conversation", "spans", ["project", "conversation_id"])


def downgrade() -> None:
    op.drop_index("spans_by_conversation", "spans")
    op.drop_index("spans_by_agent", "spans")
    op.drop_table("spans")
