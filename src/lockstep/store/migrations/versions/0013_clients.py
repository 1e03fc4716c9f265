"""Applications become clients of two kinds: service accounts and users' access keys (an
owner), each with an id the API shows, a name, an enabled flag, its last sign-in and the
generation its tokens carry.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 04:00:00.000000
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("applications") as batch:
        batch.add_column(sa.Column("uid", sa.String(length=36), nullable=True))
        batch.add_column(sa.Column("name", sa.String(length=255), nullable=True))
        batch.add_column(
            sa.Column(
                "kind", sa.String(length=16), nullable=False, server_default="service-account"
            )
        )
        batch.add_column(sa.Column("owner_user_id", sa.String(length=36), nullable=True))
        batch.add_column(
            sa.Column("enabled", sa.Boolean(), nullable=False, server_default=sa.text("true"))
        )
        batch.add_column(sa.Column("updated_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("last_login", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(
            sa.Column("token_generation", sa.Integer(), nullable=False, server_default="0")
        )
    connection = op.get_bind()
    for (row_id,) in connection.execute(sa.text("SELECT id FROM applications")).all():
        connection.execute(
            sa.text(
                "UPDATE applications SET uid = :uid, name = client_id, updated_at = created_at "
                "WHERE id = :id"
            ),
            {"uid": str(uuid.uuid4()), "id": row_id},
        )
    with op.batch_alter_table("applications") as batch:
        batch.alter_column("uid", existing_type=sa.String(length=36), nullable=False)
        batch.alter_column("name", existing_type=sa.String(length=255), nullable=False)
        batch.alter_column("updated_at", existing_type=sa.DateTime(timezone=True), nullable=False)
        batch.create_unique_constraint(op.f("uq_applications_uid"), ["uid"])
    op.create_index("ix_applications_owner_user_id", "applications", ["owner_user_id"])


def downgrade() -> None:
    op.execute("DELETE FROM applications WHERE kind = 'access-key'")
    op.drop_index("ix_applications_owner_user_id", "applications")
    with op.batch_alter_table("applications") as batch:
        batch.drop_constraint(op.f("uq_applications_uid"), type_="unique")
        for column in (
            "token_generation",
            "last_login",
            "updated_at",
            "enabled",
            "owner_user_id",
            "kind",
            "name",
            "uid",
        ):
            batch.drop_column(column)
