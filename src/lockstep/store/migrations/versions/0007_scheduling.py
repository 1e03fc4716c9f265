"""Why a pending workload waits, as the scheduler says it: its phase reason
(`NonPreemptibleOverQuota`, `OverLimit`) and its pending scheduling messages; the queue heads
read per project; each project's and department's fair share as the last cycle found it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 13:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("workloads", sa.Column("phase_reason", sa.String(32), nullable=True))
    op.add_column("workloads", sa.Column("pending_messages", sa.Text(), nullable=True))
    op.create_index(
        "ix_workloads_project_queue", "workloads", ["project_id", "actual_phase", "parked"]
    )

    op.create_table(
        "fair_shares",
        sa.Column("org_type", sa.String(16), primary_key=True),
        sa.Column("org_id", sa.Integer(), primary_key=True),
        sa.Column("pool", sa.String(255), primary_key=True),
        sa.Column("shares", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("fair_shares")
    op.drop_index("ix_workloads_project_queue", "workloads")
    for column in ("pending_messages", "phase_reason"):
        op.execute(f"ALTER TABLE workloads DROP COLUMN {column}")
