"""Schedules and their firings.

Revision ID: 0013
Revises: 0012
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "schedules",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(256), primary_key=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("task_type", sa.String(64), nullable=False),
        sa.Column("next_fire", sa.Float, nullable=True),
        sa.Column("created_at", sa.Integer, nullable=False),
        sa.Column("updated_at", sa.Integer, nullable=False),
    )
    op.create_table(
        "schedule_runs",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("schedule_id", sa.String(256), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("trigger_time", sa.Float, nullable=False),
        sa.Column("success", sa.Boolean, nullable=False),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("eval_run_id", sa.String(64), nullable=True),
        sa.Column("eval_id", sa.String(64), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("schedule_runs")
    op.drop_table("schedules")
