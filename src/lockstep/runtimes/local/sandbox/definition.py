"""What one pod's sandbox is: its mounts, its root, who its processes are and what they keep.

A `SandboxSpec` is plain data, kept in the pod's launch (launch.json) so that a restarted
lockstep and MPI's worker agent rebuild the same sandbox. `bwrap.py` turns it into a command
line; `policy.py` makes one from a pod's spec and what this machine allows.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

DEFAULT_SHM_BYTES = 64 * 1024 * 1024
"""A pod's /dev/shm without largeShmRequest, as a container engine gives it."""


class MountKind(StrEnum):
    BIND = "bind"
    """A directory or file of this machine."""
    TMPFS = "tmpfs"
    """A new memory-backed file system (emptyDir medium Memory, or a veil)."""


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


def veil(path: str) -> Mount:
    """An empty read-only file system over `path`: what lies there is out of the pod's reach,
    but for what is bound back through it."""
    return Mount(path, MountKind.TMPFS, read_only=True)


def hidden(path: str) -> Mount:
    """A file made unreadable: this machine's /dev/null bound over it (on a nodev mount, which
    no one can open)."""
    return Mount(path, MountKind.BIND, source="/dev/null", read_only=True)


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the pod's processes are."""

    uid: int
    gid: int
    groups: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class RootLayer:
    """A root of the pod's own: this machine's file systems (`lower`: the root and each other
    disk file system mounted under it) as read-only layers under a copy-on-write layer in
    `directory`, overlaid in the pod's mount namespace. What the pod writes outside its
    volumes goes there, and is gone with the pod's directory."""

    directory: str
    lower: tuple[str, ...] = ("/",)


@dataclass(frozen=True, slots=True)
class SandboxSpec:
    mounts: tuple[Mount, ...] = ()
    read_only_root: bool = False
    root_layer: RootLayer | None = None
    """None: this machine's root itself (read-only with readOnlyRootFilesystem)."""
    identity: Identity | None = None
    """None: lockstep's own user (uidGidSource fromTheImage)."""
    capabilities: tuple[str, ...] | None = None
    """The only capabilities kept, the bounding set (names such as CHOWN); None: whatever
    lockstep's user has (only when lockstep does not run as root, where bwrap drops them)."""
    ambient_capabilities: tuple[str, ...] = ()
    """The capabilities a pod running as a user other than root holds (those its spec adds):
    a container's non-root user holds none of the defaults."""
    private_ipc: bool = True
    seccomp: bool = False
    shm_bytes: int | None = DEFAULT_SHM_BYTES
    """The size of the private /dev/shm; None: the kernel's default, half of memory."""
    tmp_bytes: int | None = None
    """The size of the private /tmp; None: the kernel's default, half of memory."""
    working_dir: str | None = None
    hostname: str | None = None
    """The pod's own host name (a UTS namespace of its own, as a pod's is its name)."""
    hosts_file: str | None = None
    """A file bound read-only at /etc/hosts: the names of the workload's pods."""
    gpu_devices: tuple[str, ...] = field(default=())
    """Device nodes of this machine to bind into the pod's /dev."""
    network: str | None = None
    """The workload's network namespace, bound at this path, which the pod joins (None: this
    machine's network)."""
    private_sources: tuple[str, ...] = ()
    """Bound directories that mounts made on this machine later must not reach (hostPath
    with mountPropagation None): made private mounts in a namespace between this machine's
    and the sandbox's, which otherwise follows this machine's mounts."""

    def to_json(self) -> dict[str, Any]:
        return {
            "mounts": [mount.to_json() for mount in self.mounts],
            "readOnlyRoot": self.read_only_root,
            "rootLayer": None
            if self.root_layer is None
            else {"directory": self.root_layer.directory, "lower": list(self.root_layer.lower)},
            "identity": None
            if self.identity is None
            else {
                "uid": self.identity.uid,
                "gid": self.identity.gid,
                "groups": list(self.identity.groups),
            },
            "capabilities": None if self.capabilities is None else list(self.capabilities),
            "ambientCapabilities": list(self.ambient_capabilities),
            "privateIpc": self.private_ipc,
            "seccomp": self.seccomp,
            "shmBytes": self.shm_bytes,
            "tmpBytes": self.tmp_bytes,
            "workingDir": self.working_dir,
            "hostname": self.hostname,
            "hostsFile": self.hosts_file,
            "gpuDevices": list(self.gpu_devices),
            "privateSources": list(self.private_sources),
            "network": self.network,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SandboxSpec:
        identity = data.get("identity")
        capabilities = data.get("capabilities")
        layer = data.get("rootLayer")
        return cls(
            mounts=tuple(Mount.from_json(m) for m in data.get("mounts") or ()),
            read_only_root=bool(data.get("readOnlyRoot")),
            root_layer=None
            if layer is None
            else RootLayer(layer["directory"], tuple(layer.get("lower") or ("/",))),
            identity=None
            if identity is None
            else Identity(identity["uid"], identity["gid"], tuple(identity.get("groups") or ())),
            capabilities=None if capabilities is None else tuple(capabilities),
            ambient_capabilities=tuple(data.get("ambientCapabilities") or ()),
            private_ipc=bool(data.get("privateIpc", True)),
            seccomp=bool(data.get("seccomp")),
            shm_bytes=data.get("shmBytes", DEFAULT_SHM_BYTES),
            tmp_bytes=data.get("tmpBytes"),
            working_dir=data.get("workingDir"),
            hostname=data.get("hostname"),
            hosts_file=data.get("hostsFile"),
            gpu_devices=tuple(data.get("gpuDevices") or ()),
            private_sources=tuple(data.get("privateSources") or ()),
            network=data.get("network"),
        )
