"""Model calls: a content-addressed cache of answers, and token usage on each result.

Revision ID: 0002
Revises: 0001
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")
USAGE_COLUMNS = ("calls", "cache_hits", "prompt_tokens", "completion_tokens", "cached_tokens")


def upgrade() -> None:
    op.create_table(
        "llm_cache",
        sa.Column("key", sa.String(64), primary_key=True),
        sa.Column("model", sa.String(256), nullable=False),
        sa.Column("response", JSON, nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )
    with op.batch_alter_table("results") as batch:
        batch.add_column(sa.Column("model", sa.String(256), nullable=True))
        for name in USAGE_COLUMNS:
            batch.add_column(sa.Column(name, sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("results") as batch:
        for name in ("model", *USAGE_COLUMNS):
            batch.drop_column(name)
    op.drop_table("llm_cache")
