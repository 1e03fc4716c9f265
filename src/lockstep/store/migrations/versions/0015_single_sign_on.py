"""Single sign-on: the OpenID Connect providers people sign in with, and the sign-ins through
them under way.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06 07:00:00.000000
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "identity_providers",
        sa.Column("alias", sa.String(63), nullable=False),
        sa.Column("discovery_url", sa.String(2048), nullable=False),
        sa.Column("client_id", sa.String(1024), nullable=False),
        sa.Column("client_secret", sa.Text, nullable=False),
        sa.Column("scopes", sa.Text, nullable=False),
        sa.Column("mandatory_claim", sa.Text, nullable=True),
        sa.Column("mappers", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("alias", name=op.f("pk_identity_providers")),
    )
    op.create_table(
        "sso_sign_ins",
        sa.Column("state_hash", sa.String(64), nullable=False),
        sa.Column("alias", sa.String(63), nullable=False),
        sa.Column("code_verifier", sa.Text, nullable=False),
        sa.Column("nonce", sa.String(64), nullable=False),
        sa.Column("return_uri", sa.String(2048), nullable=False),
        sa.Column("return_state", sa.String(1024), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=True),
        sa.Column("code_hash", sa.String(64), nullable=True),
        sa.PrimaryKeyConstraint("state_hash", name=op.f("pk_sso_sign_ins")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_sso_sign_ins_code_hash")),
    )
    op.create_index("ix_sso_sign_ins_expiry", "sso_sign_ins", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_sso_sign_ins_expiry", table_name="sso_sign_ins")
    op.drop_table("sso_sign_ins")
    op.drop_table("identity_providers")
