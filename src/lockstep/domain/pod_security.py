"""Who may ask for what: the Pod Security Standards' levels (`privileged`, `baseline`,
`restricted`), checked when a workload is submitted, on both runtimes.

Each project has a level, set by an administrator (default `baseline`). `violations` returns,
for every pod spec of a request (`spec` and `masterSpec`), each field its level forbids, named
by its path and by the level: what a user fixes in one round trip. Level by level (docs/security.md
has the same table):

- `storage.hostPath`: privileged any; baseline only under a path an administrator allowed
  (`LOCKSTEP_ALLOWED_HOST_PATHS`), read-only unless that path is allowed writable;
  restricted none.
- `storage.nfs`: restricted none.
- `security.capabilities`: privileged any; baseline `BASELINE_CAPABILITIES`; restricted
  NET_BIND_SERVICE only.
- `security.hostIpc`, `security.hostNetwork`: baseline and restricted, not true.
- `security.seccompProfileType`: baseline and restricted, not Unconfined.
- `security.runAsNonRoot`: restricted, true; `security.runAsUid`: restricted, not 0;
  `security.allowPrivilegeEscalation`: restricted, not true.

Beyond the checks, a `restricted` pod keeps no capability but those its spec adds (the
runtimes drop the rest). Pure: the service reads the project's level and the allowed paths.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from lockstep.domain.errors import Violation
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.security import PodSecurityLevel, SeccompProfileType
from lockstep.schemas.single_pod import CreationRequest

__all__ = [
    "BASELINE_CAPABILITIES",
    "DEFAULT_LEVEL",
    "RESTRICTED_CAPABILITIES",
    "AllowedHostPath",
    "PodSecurityLevel",
    "violations",
]

DEFAULT_LEVEL = PodSecurityLevel.BASELINE

BASELINE_CAPABILITIES = frozenset(
    {
        "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
        "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
    }
)  # fmt: skip
"""The capabilities the baseline level lets a pod add (the Pod Security Standards' list)."""

RESTRICTED_CAPABILITIES = frozenset({"NET_BIND_SERVICE"})


@dataclass(frozen=True, slots=True)
class AllowedHostPath:
    """A directory of this machine that pods of baseline projects may mount (and what lies
    under it), writable only if so allowed."""

    path: PurePosixPath
    writable: bool = False

    def covers(self, path: PurePosixPath) -> bool:
        return path == self.path or self.path in path.parents

    @classmethod
    def parse(cls, text: str) -> AllowedHostPath:
        """`/srv/data` (read-only) or `/srv/data:rw` (writable); ValueError for anything else."""
        path, _, mode = text.partition(":")
        if mode not in ("", "ro", "rw"):
            raise ValueError(f"{text!r}: a path, with :ro or :rw after it")
        if not path.startswith("/"):
            raise ValueError(f"{text!r}: the path must be absolute")
        return cls(_normal(path), writable=mode == "rw")


def violations(
    request: CreationRequest,
    level: PodSecurityLevel,
    allowed: Sequence[AllowedHostPath] = (),
) -> list[Violation]:
    """Every field of `request` that `level` forbids; empty when it may run as asked."""
    if level is PodSecurityLevel.PRIVILEGED:
        return []
    found: list[Violation] = []
    for where, pod in request.pod_specs():
        found += _pod_violations(where, pod, level, allowed)
    return found


def _pod_violations(
    where: str, pod: PodSpec, level: PodSecurityLevel, allowed: Sequence[AllowedHostPath]
) -> Iterator[Violation]:
    def forbidden(field: str, rule: str) -> Violation:
        return Violation(
            f"{where}.{field}", f"{rule} (the project's Pod Security level is {level})"
        )

    restricted = level is PodSecurityLevel.RESTRICTED
    storage = pod.storage
    for i, host in enumerate((storage.host_path if storage else None) or ()):
        if host.exclude:
            continue
        field = f"storage.hostPath[{i}]"
        if restricted:
            yield forbidden(field, "hostPath volumes are not allowed")
            continue
        path = _normal(host.path or "/")
        allowance = next((a for a in allowed if a.covers(path)), None)
        if allowance is None:
            paths = ", ".join(str(a.path) for a in allowed) or "none"
            yield forbidden(
                f"{field}.path",
                f"{path} is not under a host path an administrator allowed ({paths})",
            )
        elif host.read_only is False and not allowance.writable:
            yield forbidden(f"{field}.readOnly", f"{allowance.path} is allowed read-only only")
    if restricted:
        for i, nfs in enumerate((storage.nfs if storage else None) or ()):
            if not nfs.exclude:
                yield forbidden(f"storage.nfs[{i}]", "nfs volumes are not allowed")
    security = pod.security
    if security is None:
        if restricted:
            yield forbidden("security.runAsNonRoot", "must be true")
        return
    permitted = RESTRICTED_CAPABILITIES if restricted else BASELINE_CAPABILITIES
    for i, capability in enumerate(security.capabilities or ()):
        if capability.value not in permitted:
            names = ", ".join(sorted(permitted))
            yield forbidden(
                f"security.capabilities[{i}]", f"{capability.value} is not one of {names}"
            )
    if security.host_ipc:
        yield forbidden("security.hostIpc", "must not be true")
    if security.host_network:
        yield forbidden("security.hostNetwork", "must not be true")
    if security.seccomp_profile_type is SeccompProfileType.UNCONFINED:
        yield forbidden("security.seccompProfileType", "must not be Unconfined")
    if restricted:
        if security.run_as_non_root is not True:
            yield forbidden("security.runAsNonRoot", "must be true")
        if security.run_as_uid == 0:
            yield forbidden("security.runAsUid", "must not be 0")
        if security.allow_privilege_escalation:
            yield forbidden("security.allowPrivilegeEscalation", "must not be true")


def _normal(path: str) -> PurePosixPath:
    """`path` without `.` and `..` parts (a hostPath that climbs out of an allowed directory
    is judged where it lands)."""
    parts: list[str] = []
    for part in PurePosixPath(path).parts[1:]:
        if part == "..":
            if parts:
                parts.pop()
        elif part != ".":
            parts.append(part)
    return PurePosixPath("/", *parts)
