"""A description of each project and department (the Run:ai document's `description`).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-01 10:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


# Plain ALTER TABLE on both backends: a batch operation would copy and drop the tables on
# SQLite, which their foreign keys forbid once projects and workloads exist (SQLite 3.35 and
# later drop a column in place).


def upgrade() -> None:
    for table in ("departments", "projects"):
        op.add_column(table, sa.Column("description", sa.Text(), server_default="", nullable=False))


def downgrade() -> None:
    for table in ("projects", "departments"):
        op.execute(f"ALTER TABLE {table} DROP COLUMN description")
