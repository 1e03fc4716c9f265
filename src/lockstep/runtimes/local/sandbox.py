"""The sandbox a local pod runs in: a bubblewrap (`bwrap`) command line built from the pod's
mounts and security context, put in front of the pod's own command.

Inside, the pod sees this machine's root (read-only with readOnlyRootFilesystem), a minimal
/dev (plus the GPU device nodes), its own /proc, a private /tmp and /dev/shm (memory-backed;
largeShmRequest lifts the default size), and its volumes bound at their mount paths. Its
processes are this machine's processes (no pid namespace), so lockstep supervises, limits and
logs them as before; it shares the machine's network (hostNetwork). bwrap always sets
no_new_privs. The identity (uid, gid, supplementary groups) and the capabilities kept are set
by `setpriv` inside the sandbox, which needs lockstep to run as root; as another user, only
lockstep's own identity is possible (see `Sandboxing.check`).

Pure but for `probe`, which runs bwrap once at start-up. Used by the local runtime's launches.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any

DEFAULT_SHM_BYTES = 64 * 1024 * 1024
"""A pod's /dev/shm without largeShmRequest, as a container engine gives it."""

GPU_DEVICE_PREFIXES = ("nvidia",)
"""Device nodes under /dev a pod with GPUs needs (nvidia0…, nvidiactl, nvidia-uvm, …)."""


class MountKind(StrEnum):
    BIND = "bind"
    """A directory or file of this machine."""
    TMPFS = "tmpfs"
    """A new memory-backed file system (emptyDir medium Memory)."""


@dataclass(frozen=True, slots=True)
class Mount:
    target: str
    kind: MountKind = MountKind.BIND
    source: str | None = None
    read_only: bool = False
    size_bytes: int | None = None
    """A tmpfs's size limit."""

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kind": self.kind.value,
            "source": self.source,
            "readOnly": self.read_only,
            "sizeBytes": self.size_bytes,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Mount:
        return cls(
            target=data["target"],
            kind=MountKind(data["kind"]),
            source=data.get("source"),
            read_only=bool(data.get("readOnly")),
            size_bytes=data.get("sizeBytes"),
        )


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the pod's processes are."""

    uid: int
    gid: int
    groups: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    mounts: tuple[Mount, ...] = ()
    read_only_root: bool = False
    identity: Identity | None = None
    """None: lockstep's own user (uidGidSource fromTheImage)."""
    capabilities: tuple[str, ...] | None = None
    """The only capabilities kept (names such as CHOWN); None: the user's usual ones."""
    private_ipc: bool = True
    seccomp: bool = False
    shm_bytes: int | None = DEFAULT_SHM_BYTES
    """The size of the private /dev/shm; None: no limit but memory (largeShmRequest)."""
    working_dir: str | None = None
    gpu_devices: tuple[str, ...] = field(default=())
    """Device nodes of this machine to bind into the pod's /dev."""
    private_sources: tuple[str, ...] = ()
    """Bound directories that mounts made on this machine later must not reach (hostPath
    with mountPropagation None): made private mounts in a namespace between this machine's
    and the sandbox's, which otherwise follows this machine's mounts."""

    def to_json(self) -> dict[str, Any]:
        return {
            "mounts": [mount.to_json() for mount in self.mounts],
            "readOnlyRoot": self.read_only_root,
            "identity": None
            if self.identity is None
            else {
                "uid": self.identity.uid,
                "gid": self.identity.gid,
                "groups": list(self.identity.groups),
            },
            "capabilities": None if self.capabilities is None else list(self.capabilities),
            "privateIpc": self.private_ipc,
            "seccomp": self.seccomp,
            "shmBytes": self.shm_bytes,
            "workingDir": self.working_dir,
            "gpuDevices": list(self.gpu_devices),
            "privateSources": list(self.private_sources),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SandboxSpec:
        identity = data.get("identity")
        capabilities = data.get("capabilities")
        return cls(
            mounts=tuple(Mount.from_json(m) for m in data.get("mounts") or ()),
            read_only_root=bool(data.get("readOnlyRoot")),
            identity=None
            if identity is None
            else Identity(identity["uid"], identity["gid"], tuple(identity.get("groups") or ())),
            capabilities=None if capabilities is None else tuple(capabilities),
            private_ipc=bool(data.get("privateIpc", True)),
            seccomp=bool(data.get("seccomp")),
            shm_bytes=data.get("shmBytes", DEFAULT_SHM_BYTES),
            working_dir=data.get("workingDir"),
            gpu_devices=tuple(data.get("gpuDevices") or ()),
            private_sources=tuple(data.get("privateSources") or ()),
        )


def command(
    spec: SandboxSpec,
    argv: Sequence[str],
    *,
    bwrap: str = "bwrap",
    setpriv: str = "setpriv",
    env: str = "env",
    unshare: str = "unshare",
    seccomp_fd: int | None = None,
) -> list[str]:
    """`argv` run inside the sandbox `spec` describes.

    Stopping a pod signals its whole process group, bwrap included: bwrap ignores SIGTERM
    (so that the pod's own exit status, not bwrap's death, is what is recorded), and the pod's
    command gets SIGTERM's default back (an ignored signal would otherwise be inherited)."""
    line = [env, "--ignore-signal=TERM", *_privately(spec.private_sources, unshare=unshare)]
    line += [bwrap, "--die-with-parent"]
    line += ["--ro-bind" if spec.read_only_root else "--bind", "/", "/"]
    line += ["--dev", "/dev", "--proc", "/proc"]
    for device in spec.gpu_devices:
        line += ["--dev-bind", device, device]
    line += ["--perms", "1777", "--tmpfs", "/tmp"]  # noqa: S108 - the sandbox's own /tmp
    if spec.shm_bytes is not None:
        line += ["--size", str(spec.shm_bytes)]
    line += ["--perms", "1777", "--tmpfs", "/dev/shm"]  # noqa: S108 - the sandbox's own
    roots = _private_roots(spec)
    made: set[PurePosixPath] = set()
    for mount in sorted(spec.mounts, key=lambda m: len(PurePosixPath(m.target).parts)):
        target = PurePosixPath(mount.target)
        # Directories above the target in the sandbox's memory file systems exist nowhere
        # else: made readable by all (bwrap would make them 0700), after the tmpfs they are in.
        for parent in reversed(target.parents):
            if parent not in made and any(root in parent.parents for root in roots):
                line += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        made = {path for path in made if target not in path.parents}
        if mount.kind is MountKind.TMPFS:
            if mount.size_bytes is not None:
                line += ["--size", str(mount.size_bytes)]
            perms = "0755" if mount.read_only else "1777"
            line += ["--perms", perms, "--tmpfs", mount.target]
        elif mount.source is None:
            raise ValueError(f"the bind mount at {mount.target} has no source")
        else:
            line += ["--ro-bind" if mount.read_only else "--bind", mount.source, mount.target]
    for mount in spec.mounts:  # once what is mounted in them is there
        if mount.kind is MountKind.TMPFS and mount.read_only:
            line += ["--remount-ro", mount.target]
    if spec.private_ipc:
        line.append("--unshare-ipc")
    if spec.seccomp:
        if seccomp_fd is None:
            raise ValueError("a sandbox with seccomp needs the filter's file descriptor")
        line += ["--seccomp", str(seccomp_fd)]
    if spec.working_dir:  # made when missing, as container runtimes make it
        line += ["--dir", spec.working_dir, "--chdir", spec.working_dir]
    line.append("--")
    line += _privileges(spec, setpriv=setpriv)
    return [*line, env, "--default-signal=TERM", *argv]


_MAKE_PRIVATE = (
    'while [ "$1" != -- ]; do '
    'mount --bind "$1" "$1" && mount --make-private "$1" || '
    '{ echo "lockstep: could not keep the mounts of this machine out of $1" >&2; exit 1; }; '
    'shift; done; shift; exec "$@"'
)


def _privately(sources: Sequence[str], *, unshare: str) -> list[str]:
    """What runs bwrap in a mount namespace of its own (a follower of this machine's, so
    nothing made in it leaks out) where each of `sources` is a private mount: bound from there,
    it no longer receives this machine's later mounts."""
    if not sources:
        return []
    script = ["/bin/sh", "-c", _MAKE_PRIVATE, "lockstep-mounts", *sources, "--"]
    return [unshare, "--mount", "--propagation", "slave", *script]


PRIVATE_TMPFS = ("/tmp", "/dev/shm")  # noqa: S108 - the sandbox's own, not this machine's


def _private_roots(spec: SandboxSpec) -> list[PurePosixPath]:
    tmpfs = [m.target for m in spec.mounts if m.kind is MountKind.TMPFS]
    return [PurePosixPath(path) for path in (*PRIVATE_TMPFS, *tmpfs)]


def host_mount_points(spec: SandboxSpec) -> list[str]:
    """Mount targets outside the sandbox's memory file systems, and the working directory
    when it is under no mount either: they are on this machine's root, which bwrap cannot add
    to once it is bound read-only, so the runtime makes any that are missing (empty
    directories) before the pod starts."""
    roots = _private_roots(spec)
    found = [mount.target for mount in spec.mounts if not _under(mount.target, roots)]
    if spec.working_dir and not _under(
        spec.working_dir, [*roots, *(PurePosixPath(m.target) for m in spec.mounts)]
    ):
        found.append(spec.working_dir)
    return found


def _under(path: str, roots: Sequence[PurePosixPath]) -> bool:
    at = PurePosixPath(path)
    return any(root == at or root in at.parents for root in roots)


def _privileges(spec: SandboxSpec, *, setpriv: str) -> list[str]:
    """`setpriv` with the identity and capabilities asked for (nothing when neither is)."""
    if spec.identity is None and spec.capabilities is None:
        return []
    line = [setpriv]
    if spec.identity is not None:
        line += ["--reuid", str(spec.identity.uid), "--regid", str(spec.identity.gid)]
        if spec.identity.groups:
            line += ["--groups", ",".join(str(g) for g in spec.identity.groups)]
        else:
            line.append("--clear-groups")
    if spec.capabilities is not None:
        kept = "".join(f",+{name.lower()}" for name in spec.capabilities)
        line += [f"--bounding-set=-all{kept}", f"--inh-caps=-all{kept}"]
        if spec.identity is not None and spec.identity.uid != 0:
            line.append(f"--ambient-caps=-all{kept}")
    return [*line, "--"]


@dataclass(frozen=True, slots=True)
class Sandboxing:
    """What this machine allows: bwrap found and able to create the namespaces, and whether
    lockstep may set another identity (it runs as root)."""

    bwrap: str | None
    problem: str = ""
    """Why there is no sandbox (bwrap missing, or refused to run)."""
    as_root: bool = False
    env: str = "env"
    setpriv: str = "setpriv"
    unshare: str = "unshare"

    @property
    def available(self) -> bool:
        return self.bwrap is not None and not self.problem

    def command(
        self, spec: SandboxSpec, argv: Sequence[str], *, seccomp_fd: int | None = None
    ) -> list[str]:
        """`command` with the tools found on this machine."""
        return command(
            spec,
            argv,
            bwrap=self.bwrap or "bwrap",
            env=self.env,
            setpriv=self.setpriv,
            unshare=self.unshare,
            seccomp_fd=seccomp_fd,
        )


def probe(bwrap: str | None = None) -> Sandboxing:
    """Look for bwrap and run it once, as lockstep would, to see that it works here."""
    found = bwrap or shutil.which("bwrap")
    as_root = os.geteuid() == 0
    if found is None:
        return Sandboxing(None, "bubblewrap (bwrap) is not installed", as_root)
    env, setpriv, unshare = (shutil.which(name) for name in ("env", "setpriv", "unshare"))
    if env is None or setpriv is None or unshare is None:
        return Sandboxing(
            found, "env, setpriv or unshare (coreutils, util-linux) is missing", as_root
        )
    trial = command(SandboxSpec(), ["/bin/true"], bwrap=found, env=env)
    try:
        done = subprocess.run(trial, capture_output=True, text=True, timeout=10, check=False)
    except OSError as error:
        return Sandboxing(found, f"bwrap could not run: {error}", as_root)
    if done.returncode != 0:
        reason = done.stderr.strip() or f"exit status {done.returncode}"
        return Sandboxing(found, f"bwrap cannot create a sandbox here: {reason}", as_root)
    return Sandboxing(found, "", as_root, env=env, setpriv=setpriv, unshare=unshare)


def gpu_device_nodes(dev: Path = Path("/dev")) -> tuple[str, ...]:
    """This machine's GPU device nodes, bound into pods that were given GPUs."""
    try:
        names = sorted(p.name for p in dev.iterdir() if p.name.startswith(GPU_DEVICE_PREFIXES))
    except OSError:
        return ()
    return tuple(str(dev / name) for name in names)
