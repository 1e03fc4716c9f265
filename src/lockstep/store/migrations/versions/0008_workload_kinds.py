"""Workload kinds: every workload has a kind (Distributed, Training, Workspace); a training's
or workspace's `framework` is empty.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01 16:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "workloads",
        sa.Column("kind", sa.String(16), nullable=False, server_default="Distributed"),
    )


def downgrade() -> None:
    """Trainings and workspaces cannot be told apart from distributed workloads without their
    kind: they are removed, with their pods, events and history."""
    others = "SELECT id FROM workloads WHERE kind != 'Distributed'"
    for table in ("pods", "events", "phase_changes"):
        op.execute(f"DELETE FROM {table} WHERE workload_id IN ({others})")
    op.execute("DELETE FROM workloads WHERE kind != 'Distributed'")
    op.execute("ALTER TABLE workloads DROP COLUMN kind")
