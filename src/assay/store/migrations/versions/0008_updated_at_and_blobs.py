"""Evals remember when they were last updated (``order_by=updated_at``); the blob containers,
staged blocks and committed blobs behind Foundry's dataset upload flow.

Revision ID: 0008
Revises: 0007
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("evals", sa.Column("updated_at", sa.Integer, nullable=True))
    op.create_table(
        "blob_containers",
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("project", sa.String(128), nullable=False),
        sa.Column("signature", sa.String(128), nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )
    op.create_table(
        "blob_blocks",
        sa.Column("container", sa.String(64), primary_key=True),
        sa.Column("blob", sa.String(1024), primary_key=True),
        sa.Column("block_id", sa.String(128), primary_key=True),
        sa.Column("content", sa.LargeBinary, nullable=False),
    )
    op.create_table(
        "blobs",
        sa.Column("container", sa.String(64), primary_key=True),
        sa.Column("name", sa.String(1024), primary_key=True),
        sa.Column("file_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    for table in ("blobs", "blob_blocks", "blob_containers"):
        op.drop_table(table)
    op.drop_column("evals", "updated_at")
