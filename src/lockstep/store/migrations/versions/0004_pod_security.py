"""Each project's Pod Security level (privileged, baseline, restricted; baseline by default).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both backends: a batch operation would copy and drop the table on
# SQLite, which the foreign keys of the workloads that refer to projects forbid.


def upgrade() -> None:
    op.add_column(
        "projects",
        sa.Column("pod_security_level", sa.String(16), server_default="baseline", nullable=False),
    )


def downgrade() -> None:
    op.execute("ALTER TABLE projects DROP COLUMN pod_security_level")
