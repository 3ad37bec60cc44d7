"""Long-running jobs (Foundry's data and evaluator generation jobs, agent insight runs), kept as the
API returns them, and agent insight monitors.

Revision ID: 0019
Revises: 0018
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0019"
down_revision = "0018"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("runner", sa.String(256), nullable=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )

    op.create_table(
        "insight_monitors",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("agent_name", sa.String(256), nullable=False),
        sa.Column("next_run_at", sa.Integer, nullable=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
        sa.UniqueConstraint("project", "agent_name"),
    )


def downgrade() -> None:
    op.drop_table("insight_monitors")
    op.drop_table("jobs")
