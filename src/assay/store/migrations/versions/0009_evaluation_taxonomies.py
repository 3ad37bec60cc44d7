"""Red-team evaluation taxonomies, one row per version.

Revision ID: 0009
Revises: 0008
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "evaluation_taxonomies",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("name", sa.String(256), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("body", sa.JSON().with_variant(JSONB(), "postgresql"), nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("evaluation_taxonomies")
