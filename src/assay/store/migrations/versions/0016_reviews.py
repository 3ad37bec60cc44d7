"""Human review: labels (append-only), review queues with their items, and the insight a
schedule's firing made.

Revision ID: 0016
Revises: 0015
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "labels",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("annotator", sa.String(256), nullable=False),
        sa.Column("actor_type", sa.String(32), nullable=False),
        sa.Column("source", sa.String(16), nullable=False),
        sa.Column("criterion", sa.String(256), nullable=False),
        sa.Column("label", sa.Text, nullable=True),
        sa.Column("passed", sa.Boolean, nullable=True),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("explanation", sa.Text, nullable=True),
        sa.Column("run_id", sa.String(64), nullable=True),
        sa.Column("datasource_item_id", sa.Integer, nullable=True),
        sa.Column("queue_id", sa.String(64), nullable=True),
        sa.Column("trace_id", sa.String(32), nullable=True),
        sa.Column("span_id", sa.String(16), nullable=True),
        sa.Column("response_id", sa.String(256), nullable=True),
    )
    op.create_index("labels_by_run", "labels", ["project", "run_id"])
    op.create_index("labels_by_trace", "labels", ["project", "trace_id"])
    op.create_table(
        "review_queues",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )
    op.create_table(
        "review_items",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("queue_id", sa.String(64), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("datasource_item_id", sa.Integer, nullable=False),
        sa.Column("assignee", sa.String(256), nullable=True),
    )
    with op.batch_alter_table("schedule_runs") as batch:
        batch.add_column(sa.Column("insight_id", sa.String(64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("schedule_runs") as batch:
        batch.drop_column("insight_id")
    op.drop_table("review_items")
    op.drop_table("review_queues")
    op.drop_index("labels_by_trace", "labels")
    op.drop_index("labels_by_run", "labels")
    op.drop_table("labels")
