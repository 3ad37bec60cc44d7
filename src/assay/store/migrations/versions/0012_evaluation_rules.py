"""Continuous evaluation: evaluation rules and the response events they sampled.

Revision ID: 0012
Revises: 0011
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "evaluation_rules",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(256), primary_key=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("agent_name", sa.String(256), nullable=True),
        sa.Column("action_type", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Integer, nullable=False),
        sa.Column("holder", sa.String(256), nullable=True),
        sa.Column("lease_until", sa.Float, nullable=True),
    )
    op.create_table(
        "rule_events",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("rule_id", sa.String(256), primary_key=True),
        sa.Column("response_id", sa.String(256), primary_key=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("run_id", sa.String(64), nullable=True),
    )
    op.create_index("rule_events_pending", "rule_events", ["project", "rule_id", "run_id"])


def downgrade() -> None:
    op.drop_table("rule_events")
    op.drop_table("evaluation_rules")
