"""operations engine: target lock, revision counter, error in step history

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("operations", schema=None) as batch_op:
        batch_op.add_column(sa.Column("active_target", sa.String(length=256), nullable=True))
        batch_op.add_column(
            sa.Column("revision", sa.Integer(), nullable=False, server_default="0")
        )
        batch_op.create_index("ux_operations_active_target", ["active_target"], unique=True)
    with op.batch_alter_table("operation_step_events", schema=None) as batch_op:
        batch_op.add_column(sa.Column("error", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("operation_step_events", schema=None) as batch_op:
        batch_op.drop_column("error")
    with op.batch_alter_table("operations", schema=None) as batch_op:
        batch_op.drop_index("ux_operations_active_target")
        batch_op.drop_column("revision")
        batch_op.drop_column("active_target")
