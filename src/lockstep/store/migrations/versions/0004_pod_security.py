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


def upgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.add_column(
            sa.Column(
                "pod_security_level",
                sa.String(length=16),
                server_default="baseline",
                nullable=False,
            )
        )


def downgrade() -> None:
    with op.batch_alter_table("projects") as batch:
        batch.drop_column("pod_security_level")
