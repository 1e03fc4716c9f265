"""The security context of a pod: identity, privileges, capabilities, seccomp, host namespaces."""

from __future__ import annotations

from enum import StrEnum

from lockstep.schemas.base import WireModel
from lockstep.schemas.bounds import Id32


class UidGidSource(StrEnum):
    FROM_THE_IMAGE = "fromTheImage"
    FROM_IDP_TOKEN = "fromIdpToken"
    CUSTOM = "custom"


class SeccompProfileType(StrEnum):
    RUNTIME_DEFAULT = "RuntimeDefault"
    UNCONFINED = "Unconfined"
    LOCALHOST = "Localhost"


class PodSecurityLevel(StrEnum):
    """A project's Pod Security level (see lockstep.domain.pod_security)."""

    PRIVILEGED = "privileged"
    BASELINE = "baseline"
    RESTRICTED = "restricted"


class Capability(StrEnum):
    AUDIT_CONTROL = "AUDIT_CONTROL"
    AUDIT_READ = "AUDIT_READ"
    AUDIT_WRITE = "AUDIT_WRITE"
    BLOCK_SUSPEND = "BLOCK_SUSPEND"
    CHOWN = "CHOWN"
    DAC_OVERRIDE = "DAC_OVERRIDE"
    DAC_READ_SEARCH = "DAC_READ_SEARCH"
    FOWNER = "FOWNER"
    FSETID = "FSETID"
    IPC_LOCK = "IPC_LOCK"
    IPC_OWNER = "IPC_OWNER"
    KILL = "KILL"
    LEASE = "LEASE"
    LINUX_IMMUTABLE = "LINUX_IMMUTABLE"
    MAC_ADMIN = "MAC_ADMIN"
    MAC_OVERRIDE = "MAC_OVERRIDE"
    MKNOD = "MKNOD"
    NET_ADMIN = "NET_ADMIN"
    NET_BIND_SERVICE = "NET_BIND_SERVICE"
    NET_BROADCAST = "NET_BROADCAST"
    NET_RAW = "NET_RAW"
    SETGID = "SETGID"
    SETFCAP = "SETFCAP"
    SETPCAP = "SETPCAP"
    SETUID = "SETUID"
    SYS_ADMIN = "SYS_ADMIN"
    SYS_BOOT = "SYS_BOOT"
    SYS_CHROOT = "SYS_CHROOT"
    SYS_MODULE = "SYS_MODULE"
    SYS_NICE = "SYS_NICE"
    SYS_PACCT = "SYS_PACCT"
    SYS_PTRACE = "SYS_PTRACE"
    SYS_RAWIO = "SYS_RAWIO"
    SYS_RESOURCE = "SYS_RESOURCE"
    SYS_TIME = "SYS_TIME"
    SYS_TTY_CONFIG = "SYS_TTY_CONFIG"
    SYSLOG = "SYSLOG"
    WAKE_ALARM = "WAKE_ALARM"


class Security(WireModel):
    allow_privilege_escalation: bool | None = None
    capabilities: list[Capability] | None = None
    host_ipc: bool | None = None
    host_network: bool | None = None
    read_only_root_filesystem: bool | None = None
    run_as_gid: Id32 | None = None
    run_as_non_root: bool | None = None
    run_as_uid: Id32 | None = None
    seccomp_profile_type: SeccompProfileType | None = None
    supplemental_groups: str | None = None
    uid_gid_source: UidGidSource | None = None
