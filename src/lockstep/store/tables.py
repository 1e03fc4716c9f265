"""The tables of lockstep's store. Migrations under migrations/ create exactly these."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    UniqueConstraint,
    text,
)
from sqlalchemy.types import TypeDecorator


class UtcDateTime(TypeDecorator[datetime]):
    """A timezone-aware UTC timestamp on every backend (SQLite keeps no zone)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are not stored")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

clusters = Table(
    "clusters",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

departments = Table(
    "departments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False),
    Column("cluster_id", String(36), ForeignKey("clusters.id"), nullable=False),
    Column("resources", Text, nullable=False, server_default="[]"),
    Column("description", Text, nullable=False, server_default=""),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    UniqueConstraint("cluster_id", "name"),
)

projects = Table(
    "projects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False),
    Column("cluster_id", String(36), ForeignKey("clusters.id"), nullable=False),
    Column("department_id", Integer, ForeignKey("departments.id"), nullable=False),
    Column("requested_namespace", String(63)),
    Column("resources", Text, nullable=False, server_default="[]"),
    Column("pod_security_level", String(16), nullable=False, server_default="baseline"),
    Column("description", Text, nullable=False, server_default=""),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    UniqueConstraint("cluster_id", "name"),
)

node_pools = Table(
    "node_pools",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(63), nullable=False),
    Column("cluster_id", String(36), ForeignKey("clusters.id"), nullable=False),
    Column("label_key", String(317), nullable=False),
    Column("label_value", String(63), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("updated_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    UniqueConstraint("cluster_id", "name"),
)

applications = Table(
    "applications",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("client_id", String(255), nullable=False, unique=True),
    Column("secret_hash", String(255), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("uid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=False),
    Column("kind", String(16), nullable=False, server_default="service-account"),
    Column("owner_user_id", String(36), nullable=True),
    Column("enabled", Boolean, nullable=False, server_default=text("true")),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("last_login", UtcDateTime, nullable=True),
    Column("token_generation", Integer, nullable=False, server_default="0"),
    Index("ix_applications_owner_user_id", "owner_user_id"),
)

access_rules = Table(
    "access_rules",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("subject_type", String(16), nullable=False),
    Column("subject_id", String(255), nullable=False),
    Column("role", String(64), nullable=False),
    Column("scope_type", String(16), nullable=False),
    Column("scope_id", String(64), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("deleted_at", UtcDateTime, nullable=True),
    Column("deleted_by", String(255), nullable=True),
    Index(
        "uq_access_rules_live",
        "subject_type",
        "subject_id",
        "role",
        "scope_type",
        "scope_id",
        unique=True,
        sqlite_where=text("deleted_at IS NULL"),
        postgresql_where=text("deleted_at IS NULL"),
    ),
)

users = Table(
    "users",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("username", String(254), nullable=False, unique=True),
    Column("password_hash", String(255), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("last_login", UtcDateTime, nullable=True),
    Column("is_local", Boolean, nullable=False, server_default=text("true")),
    Column("groups", Text, nullable=False, server_default="[]"),
    Column("token_generation", Integer, nullable=False, server_default="0"),
    Column("failed_sign_ins", Integer, nullable=False, server_default="0"),
    Column("locked_until", UtcDateTime, nullable=True),
)

identity_providers = Table(
    "identity_providers",
    metadata,
    Column("alias", String(63), primary_key=True),
    Column("discovery_url", String(2048), nullable=False),
    Column("client_id", String(1024), nullable=False),
    Column("client_secret", Text, nullable=False),
    Column("scopes", Text, nullable=False),
    Column("mandatory_claim", Text, nullable=True),
    Column("mappers", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)
"""OpenID Connect providers people sign in with; the client secret sealed, scopes, the
mandatory claim and the mappers as JSON."""

sso_sign_ins = Table(
    "sso_sign_ins",
    metadata,
    Column("state_hash", String(64), primary_key=True),
    Column("alias", String(63), nullable=False),
    Column("code_verifier", Text, nullable=False),
    Column("nonce", String(64), nullable=False),
    Column("return_uri", String(2048), nullable=False),
    Column("return_state", String(1024), nullable=False),
    Column("expires_at", UtcDateTime, nullable=False),
    Column("user_id", String(36), nullable=True),
    Column("code_hash", String(64), nullable=True, unique=True),
    Index("ix_sso_sign_ins_expiry", "expires_at"),
)
"""Sign-ins through a provider under way: from the redirect to the provider (the PKCE
verifier sealed, kept under the hash of the state) to the one-time code the console or the CLI
exchanges (kept as its hash), then deleted."""

workloads = Table(
    "workloads",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(63), nullable=False),
    Column("requested_name", String(63), nullable=False),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("department_id", Integer, ForeignKey("departments.id")),
    Column("cluster_id", String(36), ForeignKey("clusters.id"), nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    Column("deleted_at", UtcDateTime),
    Column("completed_at", UtcDateTime),
    Column("desired_phase", String(16), nullable=False),
    Column("actual_phase", String(16), nullable=False),
    Column("phase_message", Text, nullable=False, server_default=""),
    Column("phase_updated_at", UtcDateTime, nullable=False),
    Column("framework", String(16), nullable=False),
    # A distributed workload's framework; empty for a training or a workspace.
    Column("kind", String(16), nullable=False, server_default="Distributed"),
    Column("category", String(255)),
    Column("priority_class", String(255), nullable=False),
    Column("priority", Integer, nullable=False),
    Column("allocated_gpus", Float, nullable=False, server_default="0"),
    Column("request", Text, nullable=False),
    Column("running_pods", Integer, nullable=False, server_default="0"),
    Column("parked", Boolean, nullable=False, server_default=text("false")),
    Column("auto_delete_at", UtcDateTime),
    Column("placement", Text),
    Column("phase_reason", String(32)),
    Column("pending_messages", Text),
    Index(
        "uq_workloads_live_name",
        "project_id",
        "name",
        unique=True,
        sqlite_where=text("deleted_at IS NULL"),
        postgresql_where=text("deleted_at IS NULL"),
    ),
    Index("ix_workloads_created_at", "created_at"),
    Index("ix_workloads_updated_at", "updated_at"),
    Index("ix_workloads_queue", "actual_phase", "parked", "created_at"),
    Index("ix_workloads_project_queue", "project_id", "actual_phase", "parked"),
)

pods = Table(
    "pods",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("workload_id", String(36), ForeignKey("workloads.id"), nullable=False),
    Column("name", String(255), nullable=False),
    Column("role", String(16), nullable=False),
    Column("replica_index", Integer, nullable=False),
    Column("phase", String(16), nullable=False),
    Column("image", String(1024), nullable=False),
    Column("node_name", String(255)),
    Column("ip", String(64)),
    Column("created_at", UtcDateTime, nullable=False),
    Column("started_at", UtcDateTime),
    Column("completed_at", UtcDateTime),
    Column("deleted_at", UtcDateTime),
    Column("restarts", Integer, nullable=False, server_default="0"),
    Column("exit_code", Integer),
    Column("message", Text, nullable=False, server_default=""),
    Column("reason", String(64)),
    Column("ready", Boolean, nullable=False, server_default=text("false")),
    Column("ports", Text, nullable=False, server_default="[]"),
    UniqueConstraint("workload_id", "name"),
)

events = Table(
    "events",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("workload_id", String(36), ForeignKey("workloads.id"), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("type", String(16), nullable=False),
    Column("reason", String(255), nullable=False),
    Column("message", Text, nullable=False),
    Column("object_kind", String(64), nullable=False),
    Column("object_name", String(255), nullable=False),
    Column("source", String(64), nullable=False),
    Index("ix_events_workload_created", "workload_id", "created_at"),
)

phase_changes = Table(
    "phase_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("workload_id", String(36), ForeignKey("workloads.id"), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("phase", String(16), nullable=False),
    Column("message", Text, nullable=False),
    Index("ix_phase_changes_workload", "workload_id", "id"),
)

secrets = Table(
    "secrets",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("name", String(63), nullable=False),
    Column("key_names", Text, nullable=False),
    Column("data", Text, nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    UniqueConstraint("project_id", "name"),
)
"""`key_names` is a JSON list in clear, so listing opens nothing; `data` is sealed JSON."""

config_maps = Table(
    "config_maps",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("name", String(63), nullable=False),
    Column("data", Text, nullable=False),
    Column("created_by", String(255), nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
    UniqueConstraint("project_id", "name"),
)

fair_shares = Table(
    "fair_shares",
    metadata,
    Column("org_type", String(16), primary_key=True),
    Column("org_id", Integer, primary_key=True),
    Column("pool", String(255), primary_key=True),
    Column("shares", Text, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)
"""What the scheduler's last cycle found for each project and department in each node pool:
per resource its deserved share, fair share, allocation and request (JSON; -1: unlimited)."""

metric_samples = Table(
    "metric_samples",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("at", UtcDateTime, nullable=False),
    Column("workload_id", String(36), nullable=False),
    Column("pod", String(255), nullable=False),
    Column("node", String(255), nullable=False),
    Column("metric", String(64), nullable=False),
    Column("gpu", String(16), nullable=False, server_default=""),
    Column("value", Float, nullable=False),
    Column("weight", Integer, nullable=False, server_default="1"),
    Column("rolled_up", Boolean, nullable=False, server_default=text("false")),
    Index("ix_metric_samples_workload", "workload_id", "metric", "at"),
    Index("ix_metric_samples_node", "node", "metric", "at"),
    Index("ix_metric_samples_age", "rolled_up", "at"),
)
"""What the sampler took of each pod (domain/metrics.py `Sample`): full resolution for a day,
then 5-minute averages (`rolled_up`, `weight` samples each) for 30 days. No foreign key: the
samples of a workload outlive neither its record nor their retention."""

audit_log = Table(
    "audit_log",
    metadata,
    Column("seq", Integer, primary_key=True, autoincrement=True),
    Column("id", String(36), nullable=False, unique=True),
    Column("timestamp", UtcDateTime, nullable=False),
    Column("tenant_id", String(36), nullable=False),
    Column("subject", String(255), nullable=False),
    Column("subject_type", String(16), nullable=False),
    Column("source_ip", String(64), nullable=False),
    Column("action", String(32), nullable=False),
    Column("http_method", String(16), nullable=False),
    Column("url", String(2048), nullable=False),
    Column("entity_type", String(64), nullable=True),
    Column("entity_name", String(255), nullable=True),
    Column("entity_id", String(255), nullable=True),
    Column("result", String(16), nullable=False),
    Column("http_status_code", Integer, nullable=False),
    Column("cluster_name", String(255), nullable=True),
    Column("cluster_id", String(36), nullable=True),
    Column("request_id", String(36), nullable=False),
    Column("metadata", Text, nullable=False, server_default="{}"),
    Index("ix_audit_log_timestamp", "timestamp", "seq"),
)
"""Every call that changed something, and every sign-in (domain/audit.py): written in batches
by the audit writer (services/audit.py), read by time range, deleted past the retention.
`seq` orders records written in the same instant; `metadata` is a JSON object of strings."""
