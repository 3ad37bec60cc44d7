"""Custom evaluators registered with ``assay evaluators add``: one row per name and version.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "evaluators",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("name", sa.String(256), primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("content", sa.Text, nullable=False),
        sa.Column("digest", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("evaluators")
