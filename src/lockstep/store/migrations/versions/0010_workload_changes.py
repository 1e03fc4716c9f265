"""An index on workloads' `updated_at`: the change stream reads, every 50 ms while a stream is
open, the workloads written since its cursor (services/workload_watch.py).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-01 17:00:00.000000
"""

from __future__ import annotations

from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_workloads_updated_at", "workloads", ["updated_at"])


def downgrade() -> None:
    op.drop_index("ix_workloads_updated_at", "workloads")
