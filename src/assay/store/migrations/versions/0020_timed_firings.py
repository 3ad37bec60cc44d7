"""The production loop keeps time: each schedule firing's own time (``fired_at``), and alerts as an
outbox (where each goes, when it is next tried, who is trying it, every attempt).

Revision ID: 0020
Revises: 0019
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0020"
down_revision = "0019"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.add_column("schedule_runs", sa.Column("fired_at", sa.Float, nullable=True))
    with op.batch_alter_table("alerts") as alerts:
        alerts.add_column(sa.Column("state", sa.String(16), nullable=True))
        alerts.add_column(sa.Column("target", JSON, nullable=True))
        alerts.add_column(sa.Column("next_attempt_at", sa.Float, nullable=True))
        alerts.add_column(sa.Column("leased_until", sa.Float, nullable=True))
        alerts.add_column(sa.Column("leased_by", sa.String(256), nullable=True))
        alerts.add_column(sa.Column("attempt_log", JSON, nullable=True))
    op.create_index("alerts_due", "alerts", ["next_attempt_at"])


def downgrade() -> None:
    op.drop_index("alerts_due", "alerts")
    with op.batch_alter_table("alerts") as alerts:
        for column in ("attempt_log", "leased_by", "leased_until", "next_attempt_at", "target", "state"):
            alerts.drop_column(column)
    op.drop_column("schedule_runs", "fired_at")
