"""The initial schema: organization, identity, workloads, pods, events and phase history.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 22:25:54.106657
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:

    op.create_table(
        "access_rules",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("subject_type", sa.String(length=16), nullable=False),
        sa.Column("subject_id", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=64), nullable=False),
        sa.Column("scope_type", sa.String(length=16), nullable=False),
        sa.Column("scope_id", sa.String(length=64), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_access_rules")),
        sa.UniqueConstraint(
            "subject_type",
            "subject_id",
            "role",
            "scope_type",
            "scope_id",
            name=op.f("uq_access_rules_subject_type_subject_id_role_scope_type_scope_id"),
        ),
    )
    op.create_table(
        "applications",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("client_id", sa.String(length=255), nullable=False),
        sa.Column("secret_hash", sa.String(length=255), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_applications")),
        sa.UniqueConstraint("client_id", name=op.f("uq_applications_client_id")),
    )
    op.create_table(
        "clusters",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clusters")),
        sa.UniqueConstraint("name", name=op.f("uq_clusters_name")),
    )
    op.create_table(
        "departments",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("resources", sa.Text(), server_default="[]", nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_departments_cluster_id_clusters")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_departments")),
        sa.UniqueConstraint("cluster_id", "name", name=op.f("uq_departments_cluster_id_name")),
    )
    op.create_table(
        "projects",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("department_id", sa.Integer(), nullable=False),
        sa.Column("requested_namespace", sa.String(length=63), nullable=True),
        sa.Column("resources", sa.Text(), server_default="[]", nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_projects_cluster_id_clusters")
        ),
        sa.ForeignKeyConstraint(
            ["department_id"],
            ["departments.id"],
            name=op.f("fk_projects_department_id_departments"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_projects")),
        sa.UniqueConstraint("cluster_id", "name", name=op.f("uq_projects_cluster_id_name")),
    )
    op.create_table(
        "workloads",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("requested_name", sa.String(length=63), nullable=False),
        sa.Column("project_id", sa.Integer(), nullable=False),
        sa.Column("department_id", sa.Integer(), nullable=True),
        sa.Column("cluster_id", sa.String(length=36), nullable=False),
        sa.Column("created_by", sa.String(length=255), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("desired_phase", sa.String(length=16), nullable=False),
        sa.Column("actual_phase", sa.String(length=16), nullable=False),
        sa.Column("phase_message", sa.Text(), server_default="", nullable=False),
        sa.Column("phase_updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("framework", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=255), nullable=True),
        sa.Column("priority_class", sa.String(length=255), nullable=False),
        sa.Column("priority", sa.Integer(), nullable=False),
        sa.Column("allocated_gpus", sa.Float(), server_default="0", nullable=False),
        sa.Column("request", sa.Text(), nullable=False),
        sa.Column("running_pods", sa.Integer(), server_default="0", nullable=False),
        sa.Column("parked", sa.Boolean(), server_default=sa.text("(false)"), nullable=False),
        sa.ForeignKeyConstraint(
            ["cluster_id"], ["clusters.id"], name=op.f("fk_workloads_cluster_id_clusters")
        ),
        sa.ForeignKeyConstraint(
            ["department_id"],
            ["departments.id"],
            name=op.f("fk_workloads_department_id_departments"),
        ),
        sa.ForeignKeyConstraint(
            ["project_id"], ["projects.id"], name=op.f("fk_workloads_project_id_projects")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_workloads")),
    )
    with op.batch_alter_table("workloads", schema=None) as batch_op:
        batch_op.create_index(
            "ix_workloads_queue", ["actual_phase", "parked", "created_at"], unique=False
        )
        batch_op.create_index("ix_workloads_created_at", ["created_at"], unique=False)
        batch_op.create_index(
            "uq_workloads_live_name",
            ["project_id", "name"],
            unique=True,
            sqlite_where=sa.text("deleted_at IS NULL"),
            postgresql_where=sa.text("deleted_at IS NULL"),
        )

    op.create_table(
        "events",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("workload_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("type", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=255), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("object_kind", sa.String(length=64), nullable=False),
        sa.Column("object_name", sa.String(length=255), nullable=False),
        sa.Column("source", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["workload_id"], ["workloads.id"], name=op.f("fk_events_workload_id_workloads")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_events")),
    )
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_events_workload_created", ["workload_id", "created_at"], unique=False
        )

    op.create_table(
        "phase_changes",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("workload_id", sa.String(length=36), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["workload_id"], ["workloads.id"], name=op.f("fk_phase_changes_workload_id_workloads")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_phase_changes")),
    )
    with op.batch_alter_table("phase_changes", schema=None) as batch_op:
        batch_op.create_index("ix_phase_changes_workload", ["workload_id", "id"], unique=False)

    op.create_table(
        "pods",
        sa.Column("id", sa.String(length=36), nullable=False),
        sa.Column("workload_id", sa.String(length=36), nullable=False),
        sa.Column("name", sa.String(length=255), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("replica_index", sa.Integer(), nullable=False),
        sa.Column("phase", sa.String(length=16), nullable=False),
        sa.Column("image", sa.String(length=1024), nullable=False),
        sa.Column("node_name", sa.String(length=255), nullable=True),
        sa.Column("ip", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("restarts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("exit_code", sa.Integer(), nullable=True),
        sa.Column("message", sa.Text(), server_default="", nullable=False),
        sa.ForeignKeyConstraint(
            ["workload_id"], ["workloads.id"], name=op.f("fk_pods_workload_id_workloads")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pods")),
        sa.UniqueConstraint("workload_id", "name", name=op.f("uq_pods_workload_id_name")),
    )


def downgrade() -> None:

    op.drop_table("pods")
    with op.batch_alter_table("phase_changes", schema=None) as batch_op:
        batch_op.drop_index("ix_phase_changes_workload")

    op.drop_table("phase_changes")
    with op.batch_alter_table("events", schema=None) as batch_op:
        batch_op.drop_index("ix_events_workload_created")

    op.drop_table("events")
    with op.batch_alter_table("workloads", schema=None) as batch_op:
        batch_op.drop_index(
            "uq_workloads_live_name",
            sqlite_where=sa.text("deleted_at IS NULL"),
            postgresql_where=sa.text("deleted_at IS NULL"),
        )
        batch_op.drop_index("ix_workloads_created_at")
        batch_op.drop_index("ix_workloads_queue")

    op.drop_table("workloads")
    op.drop_table("projects")
    op.drop_table("departments")
    op.drop_table("clusters")
    op.drop_table("applications")
    op.drop_table("access_rules")
