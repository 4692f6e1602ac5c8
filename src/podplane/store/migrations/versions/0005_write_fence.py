"""the write fence: one counter moved by every step end (ADR 0013)

Revision ID: 0005_write_fence
Revises: 0004_features
"""

import sqlalchemy as sa
from alembic import op

revision = "0005_write_fence"
down_revision = "0004_features"
branch_labels = None
depends_on = None


def upgrade() -> None:
    table = op.create_table(
        "write_fence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("mark", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    op.bulk_insert(table, [{"id": 1, "mark": 0}])


def downgrade() -> None:
    op.drop_table("write_fence")
