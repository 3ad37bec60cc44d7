"""Insights: clustered results of evaluation runs, as Foundry's ``/insights`` returns them.

Revision ID: 0015
Revises: 0014
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "insights",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("insights")
