"""Node pools (`/api/v1/node-pools`), with the `default` pool of every cluster; and the
default project created at the first start made unlimited, as it behaved before quotas.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01 12:30:00.000000
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

BOOTSTRAP_ACTOR = "lockstep"
POOL_LABEL_KEY = "lockstep.io/node-pool"
UNBOUNDED_RESOURCES = (
    '[{"gpu":{"deserved":-1,"limit":-1,"overQuotaWeight":1},'
    '"cpu":{"deserved":-1,"limit":-1,"overQuotaWeight":1},'
    '"memory":{"deserved":-1,"limit":-1,"overQuotaWeight":1,"units":"MB"}}]'
)
"""What `domain.quotas.unbounded_resources()` stores, frozen as this revision wrote it."""


def upgrade() -> None:
    op.create_table(
        "node_pools",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("label_key", sa.String(length=317), nullable=False),
        sa.Column("label_value", sa.String(length=63), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("updated_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_node_pools_cluster_id_clusters")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_node_pools")),
        sa.UniqueConstraint("cluster_id", "name", name=op.f("uq_node_pools_cluster_id_name")),
    )
    connection = op.get_bind()
    now = datetime.now(UTC)
    if connection.dialect.name == "sqlite":
        now = now.replace(tzinfo=None)
    pools = sa.table(
        "node_pools",
        *(
            sa.column(name)
            for name in (
                "name",
                "cluster_id",
                "label_key",
                "label_value",
                "created_by",
                "updated_by",
                "created_at",
                "updated_at",
            )
        ),
    )
    clusters = connection.execute(sa.text("SELECT id FROM clusters ORDER BY created_at")).all()
    for (cluster_id,) in clusters:
        connection.execute(
            sa.insert(pools).values(
                name="default",
                cluster_id=cluster_id,
                label_key=POOL_LABEL_KEY,
                label_value="default",
                created_by=BOOTSTRAP_ACTOR,
                updated_by=BOOTSTRAP_ACTOR,
                created_at=now,
                updated_at=now,
            )
        )
    connection.execute(
        sa.text(
            "UPDATE projects SET resources = :unbounded "
            "WHERE name = 'default' AND created_by = :actor AND resources = '[]'"
        ),
        {"unbounded": UNBOUNDED_RESOURCES, "actor": BOOTSTRAP_ACTOR},
    )


def downgrade() -> None:
    op.drop_table("node_pools")
