"""A custom evaluator's details beside its definition: display name, description, tags, metadata,
categories (Foundry's ``EvaluatorVersion`` fields a create or an update sets).

Revision ID: 0018
Revises: 0017
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("evaluators") as batch:
        batch.add_column(sa.Column("details", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evaluators") as batch:
        batch.drop_column("details")
