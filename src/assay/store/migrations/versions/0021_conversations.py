"""The Conversations API: conversations and their items, in order; and each project's Azure
Monitor ingestion key (its Application Insights connection's instrumentation key).

Revision ID: 0021
Revises: 0020
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0021"
down_revision = "0020"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "conversations",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("metadata", JSON, nullable=True),
        sa.Column("created_at", sa.Integer, nullable=False),
    )
    op.create_table(
        "conversation_items",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("conversation_id", sa.String(64), primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("id", sa.String(256), nullable=False),
        sa.Column("item", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )

    op.create_table(
        "ingestion_keys",
        sa.Column("project", sa.String(128), primary_key=True),
        sa.Column("key", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("ingestion_keys")
    op.drop_table("conversation_items")
    op.drop_table("conversations")
