"""lockstep's configuration: `LOCKSTEP_*` environment variables, each mirrored by a CLI flag.

Instantiated by the entry point (or a test), never at import time.
"""

from __future__ import annotations

import grp
import os
import pwd
from decimal import Decimal
from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from lockstep.domain.cluster import DEFAULT_MAX_PODS
from lockstep.domain.pod_security import AllowedHostPath
from lockstep.domain.quantities import parse_quantity, share_or_quantity
from lockstep.schemas.bounds import (
    DEFAULT_MAX_COMMAND_LENGTH,
    DEFAULT_MAX_REQUEST_BYTES,
    DEFAULT_MAX_WORKERS,
    RequestBounds,
)

MAX_PODS_PER_NODE = 10_000
"""The most `max_pods` a node may be given: what the scheduler places pod by pod is bounded
by the pods the nodes run at once."""
MAX_GPUS_PER_NODE = 1024


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/lockstep`, or `~/.local/share/lockstep`."""
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base else Path.home() / ".local" / "share") / "lockstep"


def user_ids(text: str) -> tuple[int, int, tuple[int, ...]]:
    """`name`, `uid`, `uid:gid` or `name:group` as uid, gid and supplementary groups;
    `ValueError` naming what this machine does not know."""
    user, _, group = text.partition(":")
    groups: tuple[int, ...] = ()
    if user.isdigit():
        uid, gid = int(user), int(user)
    else:
        try:
            entry = pwd.getpwnam(user)
        except KeyError:
            raise ValueError(f"LOCKSTEP_POD_USER: this machine has no user {user!r}") from None
        uid, gid = entry.pw_uid, entry.pw_gid
        groups = tuple(g for g in os.getgrouplist(user, gid) if g != gid)
    if group.isdigit():
        gid = int(group)
    elif group:
        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            raise ValueError(f"LOCKSTEP_POD_USER: this machine has no group {group!r}") from None
    return uid, gid, groups


class LogFormat(StrEnum):
    AUTO = "auto"
    JSON = "json"
    TEXT = "text"


class TaintSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str = Field(min_length=1)
    value: str = ""
    effect: str = Field(default="NoSchedule", pattern="^(NoSchedule|NoExecute|PreferNoSchedule)$")


class NodeSettings(BaseModel):
    """One node of the local runtime: this machine, or a virtual node sharing it. Whatever is
    left out is this machine's own (its host name, its cores, memory and GPUs)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=63)
    pool: str = Field(default="default", min_length=1)
    labels: dict[str, str] = Field(default_factory=dict)
    taints: list[TaintSettings] = Field(default_factory=list)
    cpu_cores: float | None = Field(default=None, gt=0)
    memory: str | None = None
    """A quantity: `64Gi`."""
    gpus: int | None = Field(default=None, ge=0, le=MAX_GPUS_PER_NODE)
    gpu_memory: str | None = None
    """Each GPU's memory, a quantity (by default what the driver reports)."""
    max_pods: int = Field(default=DEFAULT_MAX_PODS, ge=0, le=MAX_PODS_PER_NODE)
    """The most pods it runs at once, as the kubelet's `maxPods`; more wait for room."""

    @field_validator("memory", "gpu_memory")
    @classmethod
    def _quantity(cls, value: str | None) -> str | None:
        if value is not None:
            parse_quantity(value)  # raises ValueError naming the rule
        return value


class RuntimeKind(StrEnum):
    LOCAL = "local"
    """Pods as supervised process groups on this machine."""
    KUBERNETES = "kubernetes"
    """Workloads as Kubeflow jobs on a Kubernetes cluster."""


class SandboxMode(StrEnum):
    AUTO = "auto"
    """Pods run in a bubblewrap sandbox; without one here, pods that need it are refused."""
    OFF = "off"
    """No sandbox: what only a sandbox applies is named in a warning of each pod."""


class S3Mount(StrEnum):
    AUTO = "auto"
    """s3 volumes mounted with s3fs (FUSE) where this machine can, else synchronised."""
    SYNC = "sync"
    """s3 volumes synchronised: downloaded before the pod starts, changes uploaded after."""


class PodNetwork(StrEnum):
    PRIVATE = "private"
    """Each workload's sandboxed pods share a network of their own (runtimes/local/network.py)."""
    HOST = "host"
    """Every pod shares this machine's network, its loopback included."""


class KubeScheduler(StrEnum):
    KAI = "kai"
    VOLCANO = "volcano"
    DEFAULT = "default"


MAX_API_PROCESSES = 32
"""Each holds a pool of store connections (up to 16) and a core when busy."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LOCKSTEP_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = None
    api_processes: int = Field(default=1, ge=1, le=MAX_API_PROCESSES)
    """How many processes serve the API (`lockstep serve`), each on a core of its own; more
    than one needs PostgreSQL and the local runtime (docs/operations.md, "Serving on several
    cores")."""
    bootstrap_client_id: str | None = None
    bootstrap_client_secret: SecretStr | None = None
    token_ttl_seconds: int = Field(default=3600, ge=60, le=31 * 86400)
    """How long an application's access token is good for."""
    user_token_ttl_seconds: int = Field(default=900, ge=60, le=86400)
    """How long a user's access token is good for; it is renewed with the refresh token."""
    refresh_token_ttl_seconds: int = Field(default=7 * 86400, ge=300, le=366 * 86400)
    """How long a user's refresh token is good for (unless the user is signed out first)."""
    resync_seconds: float = Field(default=30.0, gt=0)
    metrics_interval_seconds: float = Field(default=15.0, gt=0, le=3600)
    """How often the local runtime samples what each pod uses (docs/metrics.md)."""
    restart_backoff_seconds: float = Field(default=10.0, ge=0)
    """The wait before a failed gang's first restart; it doubles with each restart."""
    time_aware_fair_share: bool = False
    """Recent usage lowers a project's over-quota share (scheduler/quota/fair_share.py)."""
    fair_share_k_value: float = Field(default=1.0, ge=0, le=10)
    """With time-aware fair share: how much recent usage counts (0: not at all)."""
    fair_share_half_life_seconds: float = Field(default=3600.0, gt=0, le=30 * 86400)
    """With time-aware fair share: what a project held this long ago counts half as much."""
    pod_log_max_bytes: int = Field(default=10 * 1024 * 1024, ge=4096)
    """A pod's log is rotated past this size; it keeps the current file and the one before."""
    pod_pids_limit: int = Field(default=2048, ge=0, le=4_194_304)
    """The most processes and threads of one local pod at once (0: no limit)."""
    pod_memory_limit: str = Field(default="50%", max_length=64)
    """The memory limit of a local pod whose spec sets none: a quantity (`8Gi`), a share of
    this machine's memory (`50%`), or `none`."""
    pod_tmp_size: str = Field(default="512Mi", max_length=64)
    """The size of a sandboxed pod's private /tmp, in memory: a quantity, a share of this
    machine's memory, or `none` (the kernel's default, half of memory)."""
    pod_disk_limit: str = Field(default="10%", max_length=64)
    """What a local pod's root layer and own directory may hold on disk before it is evicted:
    a quantity, a share of the data directory's file system, or `none`."""
    pod_disk_check_seconds: float = Field(default=10.0, gt=0, le=3600)
    """How often what each pod holds on disk is measured."""
    pod_network: PodNetwork = PodNetwork.PRIVATE
    """Whether each workload's sandboxed pods get a network of their own (the default), or
    share this machine's."""
    pod_host_ports: list[int] = Field(default_factory=list, max_length=64)
    """This machine's loopback ports that pods with a network of their own may reach, as
    JSON (`[5000]`): none by default."""
    cgroup_dir: Path | None = None
    """A cgroup v2 directory delegated to lockstep for pod limits; by default
    `<cgroup2 mount>/lockstep` when running as root (see runtimes/local/sandbox/limits.py)."""
    public_host: str = "localhost"
    """The host name in the URLs of workloads' exposed ports (pods listen on this machine)."""
    public_url: str | None = Field(default=None, max_length=2048, pattern=r"^https?://[^/?#]+$")
    """lockstep's own URL as browsers reach it (`https://lockstep.example.com`), for the
    addresses it gives out: the redirect URI of single sign-on. By default, the address each
    request came to."""
    image_environments: dict[str, Path] = Field(default_factory=dict)
    """Image names (or repositories without a tag) and the local Python environment (venv or
    conda prefix) their pods run in, as JSON: `{"pytorch/pytorch": "/opt/envs/torch"}`."""
    nodes: list[NodeSettings] = Field(default_factory=list, max_length=256)
    """The local runtime's nodes, as JSON: `[{"name": "a", "pool": "a100", "gpus": 4}]`.
    Unset: one node, this machine as detected."""
    runtime: RuntimeKind = RuntimeKind.LOCAL
    sandbox: SandboxMode = SandboxMode.AUTO
    """Whether the local runtime runs pods in a sandbox (see runtimes/local/sandbox/)."""
    data_volumes: dict[str, Path] = Field(default_factory=dict)
    """The data volumes pods may mount (read-only), as JSON: `{"<id>": "/srv/imagenet"}`."""
    allowed_host_paths: list[str] = Field(default_factory=list, max_length=256)
    """The directories of this machine that pods of `baseline` projects may mount as hostPath
    volumes (and what lies under them), as JSON: `["/srv/datasets", "/scratch:rw"]`, read-only
    unless `:rw` follows. `privileged` projects may mount any; `restricted` ones none."""
    s3_mount: S3Mount = S3Mount.AUTO
    """How the local runtime makes s3 volumes available (runtimes/local/volumes/s3_mount.py)."""
    pod_user: str | None = Field(default=None, pattern=r"^[A-Za-z0-9._-]+(:[A-Za-z0-9._-]+)?$")
    """Who the local runtime's pods run as when their identity comes from the image
    (uidGidSource fromTheImage), as an image's USER would say: `name`, `uid`, `uid:gid` or
    `name:group`. Unset: lockstep's own user. Needs the sandbox, and lockstep running as root
    unless it is lockstep's own user."""
    kubeconfig: Path | None = None
    """The kubeconfig of the cluster (runtime kubernetes); unset: the in-cluster config."""
    kube_context: str | None = None
    """The kubeconfig's context to use; unset: its current context."""
    kube_scheduler: KubeScheduler = KubeScheduler.KAI
    """Who gang-schedules the pods on the cluster: KAI Scheduler, Volcano, or the default."""
    kube_node_pool_label: str = "kai.scheduler/node-pool"
    """The node label whose value names a node's pool."""
    kube_s3_csi_driver: str = "ru.yandex.s3.csi"
    """The CSI driver that mounts `s3` storage."""
    kube_ingress_class: str | None = None
    """The IngressClass of exposed URLs; unset: the cluster's default."""
    prometheus_url: str | None = None
    """The cluster's Prometheus (runtime kubernetes), whose HTTP API answers the measured
    metric types: `http://prometheus-operated.monitoring:9090`. Unset: those answer 503."""
    prometheus_timeout_seconds: float = Field(default=10.0, gt=0, le=300)
    """The longest wait for one answer of the Prometheus."""
    prometheus_min_range_seconds: float = Field(default=60.0, ge=1, le=86400)
    """The shortest range a point is measured over (a rate needs two scrapes in it: at least
    twice the Prometheus's scrape interval)."""
    log_level: str = "info"
    log_format: LogFormat = LogFormat.AUTO
    max_request_bytes: int = Field(default=DEFAULT_MAX_REQUEST_BYTES, ge=1024)
    """A request body larger than this is refused (413)."""
    audit_retention_days: int = Field(default=90, ge=1, le=36_500)
    """How long the audit log keeps a record (days); older ones are deleted within the hour
    (services/audit.py)."""
    list_items_remembered: int = Field(default=20_000, ge=0)
    """How many workloads' list items the API remembers as rendered (about a kilobyte each;
    services/workload_list.py)."""
    max_connections: int = Field(default=4096, ge=16, le=1_000_000)
    """The most connections one API process keeps open at once; one more is answered 503
    and closed (api/http_protocol.py)."""
    header_timeout_seconds: float = Field(default=10.0, gt=0, le=3600)
    """How long a client has to send a request's line and headers, from when it connected or
    was last answered; past it, 408 and the connection closed."""
    max_watch_streams: int = Field(default=100, ge=1)
    """The most change streams (`GET /api/v1/workloads?watch=true`) open at once; beyond, 503."""
    max_watch_streams_per_caller: int = Field(default=10, ge=1)
    """The most change streams one caller (a user or an application) holds open at once;
    beyond, 429 — so that one caller cannot take every stream from the others."""
    max_log_streams: int = Field(default=200, ge=1)
    """The most pod logs (`GET …/pods/{podName}/logs`) being answered at once; beyond, 429."""
    max_log_streams_per_caller: int = Field(default=20, ge=1)
    """The most pod logs one caller is being answered at once; beyond, 429."""
    max_workers: int = Field(default=DEFAULT_MAX_WORKERS, ge=1)
    """The most workers a workload may have (numWorkers, minReplicas, maxReplicas), so at
    most this many pods plus its master."""
    max_workloads_per_project: int = Field(default=200, ge=0, le=10_000_000)
    """The most workloads of one project not yet finished (neither Completed nor Failed:
    waiting, running or suspended); a submission beyond is refused with a 400 (0: no limit)."""
    max_pods_per_project: int = Field(default=100, ge=0, le=10_000_000)
    """The most pods of one project placed at once, in all pools; a workload whose pods would
    pass it waits Pending until pods of the project end (0: no limit; local runtime)."""
    max_command_length: int = Field(default=DEFAULT_MAX_COMMAND_LENGTH, ge=1)
    """The most characters of a pod's `command`, and of its `args`."""
    token_requests_per_minute: int = Field(default=60, ge=1, le=1_000_000)
    """How many checks of an application's secret (`POST /api/v1/token`, `/metrics` with
    Basic) one client address may ask a minute, and how many refused ones one application id
    may have; beyond, 429 with Retry-After (api/token_guard.py). Per API process."""
    token_checks_at_once: int = Field(default=4, ge=1, le=1024)
    """The most checks of a secret hashing at once (scrypt, 16 MiB each); the others wait
    their turn. Per API process."""

    @field_validator("pod_memory_limit", "pod_tmp_size", "pod_disk_limit")
    @classmethod
    def _share_or_quantity(cls, value: str) -> str:
        share_or_quantity(value, whole=Decimal(1))
        return value

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        """Pods run in their own directories, so every path lockstep hands out is absolute."""
        return value.expanduser().resolve()

    @field_validator("prometheus_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        scheme, _, rest = value.strip().partition("://")
        if scheme not in ("http", "https") or not rest.split("/", 1)[0]:
            raise ValueError(f"must be an http:// or https:// URL with a host, not {value!r}")
        return value.strip()

    @field_validator("allowed_host_paths")
    @classmethod
    def _host_paths(cls, value: list[str]) -> list[str]:
        for text in value:
            AllowedHostPath.parse(text)  # its ValueError names the entry and the rule
        return value

    @property
    def host_path_allowances(self) -> tuple[AllowedHostPath, ...]:
        return tuple(AllowedHostPath.parse(text) for text in self.allowed_host_paths)

    @model_validator(mode="after")
    def _pod_user_can_be_had(self) -> Settings:
        if self.pod_user is None:
            return self
        if self.sandbox is SandboxMode.OFF:
            raise ValueError(
                "LOCKSTEP_POD_USER needs the sandbox, which LOCKSTEP_SANDBOX=off turns off"
            )
        uid = user_ids(self.pod_user)[0]
        if uid != os.geteuid() and os.geteuid() != 0:
            raise ValueError(
                f"LOCKSTEP_POD_USER: pods can run as uid {uid} only when lockstep runs as root"
            )
        return self

    @model_validator(mode="after")
    def _api_processes_can_share(self) -> Settings:
        if self.api_processes == 1:
            return self
        if self.resolved_database_url.startswith("sqlite"):
            raise ValueError(
                "LOCKSTEP_API_PROCESSES above 1 needs PostgreSQL (LOCKSTEP_DATABASE_URL): "
                "SQLite is written by one process"
            )
        if self.runtime is not RuntimeKind.LOCAL:
            raise ValueError(
                "LOCKSTEP_API_PROCESSES above 1 needs the local runtime; on Kubernetes, "
                "run more replicas of lockstep instead"
            )
        return self

    @property
    def pod_identity(self) -> tuple[int, int, tuple[int, ...]] | None:
        """`pod_user` as uid, gid and supplementary groups (a name's groups from this
        machine's user database); None when unset."""
        return None if self.pod_user is None else user_ids(self.pod_user)

    @property
    def request_bounds(self) -> RequestBounds:
        """The bounds of what a request may hold (schemas/bounds.py)."""
        return RequestBounds(
            max_request_bytes=self.max_request_bytes,
            max_workers=self.max_workers,
            max_command_length=self.max_command_length,
        )

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to SQLite in the data dir."""
        return self.database_url or f"sqlite:///{self.data_dir / 'lockstep.db'}"

    @property
    def runtime_dir(self) -> Path:
        return self.data_dir / "runtime" / "local"

    @property
    def claims_dir(self) -> Path:
        """The local runtime's claims (pvc), per project."""
        return self.data_dir / "claims"

    @property
    def signing_key_path(self) -> Path:
        return self.data_dir / "token-signing.key"

    @property
    def sealing_key_path(self) -> Path:
        """The key that encrypts secrets' values in the store (see auth/sealing.py)."""
        return self.data_dir / "secrets-sealing.key"

    @property
    def credentials_path(self) -> Path:
        return self.data_dir / "admin-credentials.json"
