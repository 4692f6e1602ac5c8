"""managed features: desired state per cluster

Revision ID: 0004_features
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0004_features"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "features",
        sa.Column("cluster", sa.String(length=63), nullable=False),
        sa.Column("feature", sa.String(length=64), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("settings", sa.JSON(), nullable=False),
        sa.Column("updated_by", sa.String(length=128), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("cluster", "feature"),
    )


def downgrade() -> None:
    op.drop_table("features")
