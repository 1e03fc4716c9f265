"""Access rules are kept when deleted (`deleted_at`, `deleted_by`) and say when they last
changed (`updated_at`): one live rule per subject, role and scope, any number of deleted ones.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 03:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

_KEY = ["subject_type", "subject_id", "role", "scope_type", "scope_id"]
_LIVE = "deleted_at IS NULL"


def upgrade() -> None:
    with op.batch_alter_table("access_rules") as batch:
        batch.add_column(sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("deleted_by", sa.String(length=255), nullable=True))
        batch.drop_constraint(
            op.f("uq_access_rules_subject_type_subject_id_role_scope_type_scope_id"),
            type_="unique",
        )
    op.execute("UPDATE access_rules SET updated_at = created_at")
    with op.batch_alter_table("access_rules") as batch:
        batch.alter_column("updated_at", existing_type=sa.DateTime(timezone=True), nullable=False)
    op.create_index(
        "uq_access_rules_live",
        "access_rules",
        _KEY,
        unique=True,
        sqlite_where=sa.text(_LIVE),
        postgresql_where=sa.text(_LIVE),
    )


def downgrade() -> None:
    op.execute("DELETE FROM access_rules WHERE deleted_at IS NOT NULL")
    op.drop_index("uq_access_rules_live", "access_rules")
    with op.batch_alter_table("access_rules") as batch:
        batch.drop_column("deleted_by")
        batch.drop_column("deleted_at")
        batch.drop_column("updated_at")
        batch.create_unique_constraint(
            op.f("uq_access_rules_subject_type_subject_id_role_scope_type_scope_id"), _KEY
        )
