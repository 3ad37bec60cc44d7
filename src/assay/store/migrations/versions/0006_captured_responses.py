"""Captured responses: what the pass-through forwarded, stored under the response's id.

Revision ID: 0006
Revises: 0005
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "captured_responses",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(256), primary_key=True),
        sa.Column("api", sa.String(16), nullable=False),
        sa.Column("request", JSON, nullable=False),
        sa.Column("response", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("captured_responses")
