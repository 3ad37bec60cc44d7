"""What a target's model call cost, per output item, so per-run usage counts targets too.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

COUNTS = ("target_calls", "target_cache_hits", "target_prompt_tokens", "target_completion_tokens")


def upgrade() -> None:
    with op.batch_alter_table("output_items") as batch:
        batch.add_column(sa.Column("target_model", sa.String(256), nullable=True))
        for name in COUNTS:
            batch.add_column(sa.Column(name, sa.Integer, nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("output_items") as batch:
        for name in ("target_model", *COUNTS):
            batch.drop_column(name)
