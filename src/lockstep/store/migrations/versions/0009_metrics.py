"""Metrics: the samples the local runtime's sampler takes of each pod.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-08 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "metric_samples",
        sa.Column("id", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("workload_id", sa.String(36), nullable=False),
        sa.Column("pod", sa.String(255), nullable=False),
        sa.Column("node", sa.String(255), nullable=False),
        sa.Column("metric", sa.String(64), nullable=False),
        sa.Column("gpu", sa.String(16), nullable=False, server_default=""),
        sa.Column("value", sa.Float, nullable=False),
        sa.Column("weight", sa.Integer, nullable=False, server_default="1"),
        sa.Column("rolled_up", sa.Boolean, nullable=False, server_default=sa.text("false")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_metric_samples")),
    )
    op.create_index("ix_metric_samples_workload", "metric_samples", ["workload_id", "metric", "at"])
    op.create_index("ix_metric_samples_node", "metric_samples", ["node", "metric", "at"])
    op.create_index("ix_metric_samples_age", "metric_samples", ["rolled_up", "at"])


def downgrade() -> None:
    op.drop_table("metric_samples")
