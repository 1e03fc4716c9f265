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
    workloads = sa.table("workloads", sa.column("id"), sa.column("kind"))
    others = sa.select(workloads.c.id).where(workloads.c.kind != "Distributed")
    for name in ("pods", "events", "phase_changes"):
        table = sa.table(name, sa.column("workload_id"))
        op.execute(sa.delete(table).where(table.c.workload_id.in_(others)))
    op.execute("DELETE FROM workloads WHERE kind != 'Distributed'")
    op.execute("ALTER TABLE workloads DROP COLUMN kind")
