"""Prompt agents made through Foundry's agents API, each version kept.

Revision ID: 0017
Revises: 0016
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "agents",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("name", sa.String(256), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("body", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("agents")
