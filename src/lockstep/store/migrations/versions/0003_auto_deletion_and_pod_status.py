"""When a finished workload is due for deletion; where an admitted workload's pods were placed;
a pod's ports, readiness and end reason.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-30 02:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("workloads") as batch:
        batch.add_column(sa.Column("auto_delete_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("placement", sa.Text(), nullable=True))
    with op.batch_alter_table("pods") as batch:
        batch.add_column(sa.Column("reason", sa.String(length=64), nullable=True))
        batch.add_column(
            sa.Column("ready", sa.Boolean(), server_default=sa.text("false"), nullable=False)
        )
        batch.add_column(sa.Column("ports", sa.Text(), server_default="[]", nullable=False))


def downgrade() -> None:
    with op.batch_alter_table("pods") as batch:
        batch.drop_column("ports")
        batch.drop_column("ready")
        batch.drop_column("reason")
    with op.batch_alter_table("workloads") as batch:
        batch.drop_column("placement")
        batch.drop_column("auto_delete_at")
