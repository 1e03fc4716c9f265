"""The audit log: every call that changed something and every sign-in, by time
(domain/audit.py).

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 05:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014"
down_revision = "0013"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("seq", sa.Integer, autoincrement=True, nullable=False),
        sa.Column("id", sa.String(36), nullable=False),
        sa.Column("timestamp", sa.DateTime(timezone=True), nullable=False),
        sa.Column("tenant_id", sa.String(36), nullable=False),
        sa.Column("subject", sa.String(255), nullable=False),
        sa.Column("subject_type", sa.String(16), nullable=False),
        sa.Column("source_ip", sa.String(64), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("http_method", sa.String(16), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("entity_type", sa.String(64), nullable=True),
        sa.Column("entity_name", sa.String(255), nullable=True),
        sa.Column("entity_id", sa.String(255), nullable=True),
        sa.Column("result", sa.String(16), nullable=False),
        sa.Column("http_status_code", sa.Integer, nullable=False),
        sa.Column("cluster_name", sa.String(255), nullable=True),
        sa.Column("cluster_id", sa.String(36), nullable=True),
        sa.Column("request_id", sa.String(36), nullable=False),
        sa.Column("metadata", sa.Text, nullable=False, server_default="{}"),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_audit_log")),
        sa.UniqueConstraint("id", name=op.f("uq_audit_log_id")),
    )
    op.create_index("ix_audit_log_timestamp", "audit_log", ["timestamp", "seq"])


def downgrade() -> None:
    op.drop_index("ix_audit_log_timestamp", "audit_log")
    op.drop_table("audit_log")
