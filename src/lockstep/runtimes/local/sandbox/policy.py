"""The sandbox this machine gives one pod: a container's defaults, what its spec's storage
and security context ask (turned into a `SandboxSpec` and the volumes to prepare), and
lockstep's own files kept out of reach — as far as this machine allows, or refused, by name,
when the spec asks for what this machine cannot give.

A pod gets what a container runtime gives a container unless its spec asks otherwise (who may
ask what is checked at submission: `lockstep.domain.pod_security`): the capabilities of
`CONTAINER_CAPABILITIES` plus those its spec adds, the default seccomp filter unless it asks
Unconfined, a pid namespace and a root of its own, and none of lockstep's files: its data
directory (database, keys, other workloads' files, claims) is veiled, with only the pod's own
workload directory and volumes bound back through it.

With the sandbox turned off (LOCKSTEP_SANDBOX=off) pods run as before, and every field only a
sandbox could apply is listed in the launch's `unapplied`, which the runtime reports as a
warning event: nothing is silently ignored. Used by `Launches` for every pod.
"""

from __future__ import annotations

import dataclasses
import os
import pwd
import shutil
import stat
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import lockstep
from lockstep.config import PodNetwork, S3Mount, SandboxMode, Settings
from lockstep.domain.cluster import Assignment
from lockstep.domain.errors import Violation
from lockstep.domain.pod_security import AllowedHostPath, PodSecurityLevel
from lockstep.domain.workload import Workload
from lockstep.frameworks import mpi
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.network import Networking, namespace
from lockstep.runtimes.local.network import probe as network_probe
from lockstep.runtimes.local.pod_bounds import bounds_of
from lockstep.runtimes.local.pod_launch import Launch
from lockstep.runtimes.local.sandbox.asked import (
    SecurityAsk,
    VolumeAsk,
    VolumeKind,
    isolation_asked,
    security_of,
    volumes_of,
)
from lockstep.runtimes.local.sandbox.bwrap import host_mount_points, layer_directories
from lockstep.runtimes.local.sandbox.definition import (
    Identity,
    Mount,
    MountKind,
    RootLayer,
    SandboxSpec,
    hidden,
    veil,
)
from lockstep.runtimes.local.sandbox.probe import Sandboxing, gpu_device_nodes, probe
from lockstep.runtimes.local.state import HOSTS_FILE, PodFiles
from lockstep.runtimes.local.volumes import s3_mount
from lockstep.runtimes.local.volumes.prepare import Places, mount_of
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.single_pod import CreationRequest

SECCOMP_FD = 4
"""The descriptor on which a pod's bwrap reads its seccomp filter."""
OFF_HINT = "run lockstep with LOCKSTEP_SANDBOX=off to start it without (none of it applied)"

CONTAINER_CAPABILITIES = (
    "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
    "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT",
)  # fmt: skip
"""The capabilities a pod keeps unless its spec adds others: a container runtime's defaults
(containerd's) but NET_RAW. A local pod may share this machine's network (LOCKSTEP_POD_NETWORK
host, or where it can have no network of its own), where raw sockets would read every pod's and
lockstep's loopback traffic; its spec may add NET_RAW where its project's Pod Security level
allows it (privileged)."""

ROOT_LAYER = "rootfs"
"""The directory, in a pod's own, of its root's copy-on-write layer."""


@dataclass(frozen=True, slots=True)
class SandboxPolicy:
    sandboxing: Sandboxing | None
    """What this machine can do; None: the sandbox is turned off."""
    claims_dir: Path
    memory_root: Path
    """Where pods' in-memory files go (under /dev/shm)."""
    euid: int
    """lockstep's own user: the pods' user unless their spec or `image_user` names another."""
    image_user: Identity | None = None
    """Who pods whose identity comes from the image run as (LOCKSTEP_POD_USER); None:
    lockstep's own user."""
    data_volumes: Mapping[str, Path] = field(default_factory=dict)
    s3fs: str | None = None
    """s3fs, when s3 volumes are mounted with it rather than synchronised."""
    allowed_host_paths: tuple[AllowedHostPath, ...] = ()
    """Where pods of baseline projects may mount hostPath volumes (checked at submission, and
    again here on the path a hostPath resolves to: a symbolic link does not lead out)."""
    private_paths: tuple[str, ...] = ()
    """lockstep's own directories (its data directory, claims), veiled in every pod."""
    private_files: tuple[str, ...] = ()
    """lockstep's own files elsewhere (a SQLite database outside its data directory, and the
    journal files beside it), hidden in every pod where they exist when it starts."""
    tmp_bytes: int | None = None
    """The size of each pod's private /tmp (None: the kernel's default, half of memory)."""
    networking: Networking | None = None
    """What gives each workload a network of its own (None: pods share this machine's, as
    an administrator chose: LOCKSTEP_POD_NETWORK=host)."""
    installation: tuple[str, ...] = ()
    """lockstep's own installation (its interpreter, its venv, the checkout it runs from),
    which pods reach since they run lockstep's interpreter unless an image environment says
    otherwise, and MPI launchers run its remote-start agent: see `reachable`."""

    def places(
        self, workload_id: str, pod_name: str, project_id: str, runtime_root: Path
    ) -> Places:
        """Where the volumes of a pod go."""
        return Places(
            pod_dir=runtime_root / workload_id / pod_name,
            workload_dir=runtime_root / workload_id,
            claims_dir=self.claims_dir,
            memory_dir=self.memory_root / workload_id / pod_name,
            project_id=project_id,
            data_volumes=self.data_volumes,
            s3fs=self.s3fs,
        )

    def apply(
        self,
        launch: Launch,
        spec: PodSpec,
        *,
        workload: Workload,
        runtime_root: Path,
        on: Assignment | None,
    ) -> Launch:
        """`launch` in its sandbox; `PodStartError` naming what cannot be given here."""
        asked = isolation_asked(spec)
        if self.sandboxing is None:
            return dataclasses.replace(launch, unapplied=tuple(asked))
        if not self.sandboxing.available:
            if self.image_user is not None and security_of(spec).identity is None:
                asked.append(f"the user LOCKSTEP_POD_USER names (uid {self.image_user.uid})")
            if asked:
                raise PodStartError(
                    f"the pod asks for {', '.join(asked)}, which needs a sandbox, and "
                    f"{self.sandboxing.problem}: install bubblewrap, or {OFF_HINT}"
                )
            uncontained = (
                f"a sandbox ({self.sandboxing.problem}): the pod sees this machine's processes "
                "and files and keeps lockstep's user and privileges"
            )
            return dataclasses.replace(launch, unapplied=(*launch.unapplied, uncontained))
        security = security_of(spec)
        identity = security.identity or self.image_user
        if identity is not None and identity.uid != self.euid and not self.sandboxing.as_root:
            raise PodStartError(
                f"security: the pod asks to run as uid {identity.uid}, and lockstep (uid "
                f"{self.euid}) can start pods as another user only when it runs as root"
            )
        if security.added_capabilities and not self.sandboxing.as_root:
            raise PodStartError(
                "security: capabilities can be kept only when lockstep runs as root"
            )
        user = identity.uid if identity is not None else self.euid
        if security.run_as_non_root and user == 0:
            whose = (
                "its runAsUid"
                if security.identity is not None
                else "LOCKSTEP_POD_USER"
                if self.image_user is not None
                else "lockstep's own user; LOCKSTEP_POD_USER names another"
            )
            raise PodStartError(
                f"security: runAsNonRoot, and the pod would run as root (uid 0, {whose}): "
                "give it a runAsUid other than 0 with uidGidSource custom"
            )
        places = self.places(workload.id, launch.pod_name, workload.project_id, runtime_root)
        volumes = [
            # A claim without a name is named after its workload (and kept by that name).
            dataclasses.replace(volume, source=f"{workload.name}-pvc-{volume.index}")
            if volume.kind is VolumeKind.PVC and volume.source is None
            else volume
            for volume in volumes_of(spec)
        ]
        # Each hostPath bound at the path it resolves to now, checked; see `moved_host_paths`.
        resolved = self.check_host_paths(volumes, workload.pod_security)
        volumes = [
            dataclasses.replace(volume, source=resolved[volume.source])
            if volume.kind is VolumeKind.HOST_PATH and volume.source in resolved
            else volume
            for volume in volumes
        ]
        # Of lockstep's data directory, veiled, the pod sees its own directory alone (see
        # state.py: the rest of its pod's and workload's directories is lockstep's), bound
        # back at its path even where it lies under /tmp, which the sandbox replaces with its
        # own, or under a directory the pod's user may not enter.
        work = str(PodFiles(places.pod_dir).work)
        own = Mount(work, MountKind.BIND, source=work)
        reachable = self.reachable(identity, work)
        root_layer = self.root_layer(security, places.pod_dir)
        mounts = [
            *(veil(path) for path in self.private_paths),
            *(hidden(path) for path in self.private_files if os.path.lexists(path)),
            own,
            *reachable,
            *(mount_of(volume, places) for volume in volumes),
        ]
        private = private_host_paths(volumes)
        unapplied = tuple(
            f"mountPropagation None of the hostPath {source} (lockstep is not root: the pod "
            "sees what this machine mounts there later)"
            for source in private
            if not self.sandboxing.as_root
        )
        network = None
        if self.networking is not None and self.networking.available:
            network = str(namespace(places.workload_dir))
        elif self.networking is not None:
            unapplied += (
                f"a network of its own ({self.networking.problem}): the pod shares this "
                "machine's network, and reaches what listens on its loopback",
            )
        if root_layer is None and not security.read_only_root:
            unapplied += (
                f"a root of its own ({self.sandboxing.layer_problem}): what the pod writes "
                "outside its volumes is written on this machine, where lockstep's user may",
            )
        env = {k: v for k, v in launch.env.items() if k != "TMPDIR"}  # /tmp is the pod's own
        if launch.create_home_dir:
            # lockstep's directory for it, bound where the pod finds it: at its own path, or
            # where another user's home is (that user may not reach lockstep's directories).
            home = launch.env["HOME"]
            if identity is not None:
                env["HOME"] = home_of(identity.uid)
            mounts.append(Mount(env["HOME"], MountKind.BIND, source=home))
        as_root = self.sandboxing.as_root
        sandbox = SandboxSpec(
            mounts=tuple(mounts),
            read_only_root=security.read_only_root,
            root_layer=root_layer,
            identity=identity,
            capabilities=kept_capabilities(security, workload.pod_security) if as_root else None,
            ambient_capabilities=security.added_capabilities,
            private_ipc=security.private_ipc,
            seccomp=security.seccomp,
            # largeShmRequest: as large as the pod's memory limit.
            shm_bytes=security.shm_bytes or launch.limits.memory_bytes,
            tmp_bytes=self.tmp_bytes,
            working_dir=launch.working_dir or work,
            hostname=launch.pod_name,
            hosts_file=str(places.workload_dir / HOSTS_FILE),
            gpu_devices=gpu_device_nodes() if on is not None and on.gpus else (),
            private_sources=tuple(private) if self.sandboxing.as_root else (),
            network=network,
        )
        notes = tuple(n for n in launch.notes if not n.startswith("largeShmRequest"))
        return dataclasses.replace(
            launch,
            sandbox=sandbox,
            volumes=tuple(volumes),
            notes=notes,
            env=env,
            unapplied=launch.unapplied + unapplied,
        )

    def check_host_paths(
        self, volumes: Sequence[VolumeAsk], level: PodSecurityLevel
    ) -> dict[str, str]:
        """Where each hostPath resolves to now, by its path; `PodStartError` for one of a
        baseline project that resolves, through a symbolic link made since it was submitted,
        to a path no administrator allowed."""
        found: dict[str, str] = {}
        for volume in volumes:
            if volume.kind is not VolumeKind.HOST_PATH or volume.source is None:
                continue
            resolved = PurePosixPath(os.path.realpath(volume.source))
            found[volume.source] = str(resolved)
            if level is PodSecurityLevel.PRIVILEGED:
                continue
            allowance = next((a for a in self.allowed_host_paths if a.covers(resolved)), None)
            if allowance is None or (not volume.read_only and not allowance.writable):
                raise PodStartError(
                    f"storage: the hostPath {volume.source} leads to {resolved}, which its "
                    f"project's Pod Security level ({level}) does not allow"
                    + ("" if allowance is None else " writable")
                )
        return found

    def root_layer(self, security: SecurityAsk, pod_dir: Path) -> RootLayer | None:
        """The pod's root of its own, where this machine can give one and the root is not
        read-only anyway."""
        layers = None if self.sandboxing is None else self.sandboxing.layers
        if layers is None or security.read_only_root:
            return None
        directory = str(pod_dir / ROOT_LAYER)
        if any(c in directory for c in ",:\\"):
            raise PodStartError(
                f"the pod's directory {pod_dir} holds a comma, colon or backslash, which "
                "overlayfs cannot take: give lockstep a data directory without them"
            )
        return RootLayer(directory, layers)

    def reachable(self, identity: Identity | None, workload_dir: str) -> list[Mount]:
        """What keeps lockstep's installation and the workload's directory (bound by the
        caller) reachable in a pod's sandbox: the installation bound back over the pod's own
        /tmp where it lies there; and, for a pod running as another user, each directory
        above them that this user may not enter (a home directory with mode 0700, lockstep's
        data directory) veiled by an empty read-only file system, with them bound back
        through it. A veil hides nothing the pod's user could reach."""
        veils: list[str] = []
        if identity is not None and identity.uid not in (0, self.euid):
            veils = unenterable_above([*self.installation, workload_dir], identity)
        hidden = [PurePosixPath(path) for path in (*veils, "/tmp")]  # noqa: S108 - the pod's
        bound = [p for p in self.installation if any(h in PurePosixPath(p).parents for h in hidden)]
        return [
            *(Mount(veil, MountKind.TMPFS, read_only=True) for veil in veils),
            *(Mount(path, MountKind.BIND, source=path, read_only=True) for path in bound),
        ]

    def expose_mpi_files(self, launch: Launch, directory: Path, *, launcher: bool) -> Launch:
        """The hostfile and remote-start agent of an MPI workload (`directory`, lockstep's),
        bound read-only: where Kubeflow's MPI operator puts them, /etc/mpi, when lockstep
        sandboxes its pods as root (a launcher running as another user cannot enter lockstep's
        data directory), elsewhere at their own path, through the veiled data directory. The
        launcher's variables name them there; the workers have them too, since the daemons
        mpirun starts there are given the same paths."""
        if launch.sandbox is None or self.sandboxing is None:
            return launch
        at = MPI_FILES if self.sandboxing.as_root else str(directory)
        bound = Mount(at, MountKind.BIND, source=str(directory), read_only=True)
        env = dict(launch.env)
        if launcher and self.sandboxing.as_root:
            env |= mpi.paths(hostfile_path=f"{MPI_FILES}/hostfile", agent_path=f"{MPI_FILES}/rsh")
        return dataclasses.replace(
            launch,
            env=env,
            sandbox=dataclasses.replace(launch.sandbox, mounts=(*launch.sandbox.mounts, bound)),
        )


MPI_FILES = "/etc/mpi"
"""Where sandboxed MPI pods find the hostfile and agent, as in Kubeflow's launcher."""


def host_path_sources(launch: Launch) -> list[str]:
    """The hostPaths of a launch: each the real path it had, checked, when the launch was made
    (see `host_paths.pin`, which holds them to it at every start)."""
    return [
        str(volume.source)
        for volume in launch.volumes
        if volume.kind is VolumeKind.HOST_PATH and volume.source is not None
    ]


def private_host_paths(volumes: Sequence[VolumeAsk]) -> list[str]:
    """The hostPath directories that this machine's later mounts must not reach
    (mountPropagation None, the default), each once."""
    found = (v.source for v in volumes if v.kind is VolumeKind.HOST_PATH and v.private)
    return list(dict.fromkeys(str(source) for source in found))


def home_of(uid: int) -> str:
    """Where a pod running as `uid` has its home in its sandbox: /home/<its name on this
    machine>, or /home/<uid> for a user this machine does not know."""
    try:
        return f"/home/{pwd.getpwuid(uid).pw_name}"
    except KeyError:
        return f"/home/{uid}"


def fresh_root_layer(layer: RootLayer) -> None:
    """An empty root layer where `layer` says, made before each start (a restarted pod gets a
    fresh root, as a restarted container does)."""
    shutil.rmtree(layer.directory, ignore_errors=True)
    for directory in layer_directories(layer):
        Path(directory).mkdir(parents=True, exist_ok=True)


def kept_capabilities(security: SecurityAsk, level: PodSecurityLevel) -> tuple[str, ...]:
    """A container's default capabilities and those the spec adds, each once; for a
    restricted project, those the spec adds alone (the level drops every other)."""
    defaults = () if level is PodSecurityLevel.RESTRICTED else CONTAINER_CAPABILITIES
    return tuple(dict.fromkeys((*defaults, *security.added_capabilities)))


def make_mount_points(spec: SandboxSpec) -> None:
    """Make the missing mount targets (and working directory) on this machine's root (see
    `host_mount_points`): empty directories, or empty files where a file is bound. A pod with
    a root of its own needs none: bwrap makes them in the pod's layer."""
    if spec.root_layer is not None:
        return
    files = {m.target for m in spec.mounts if m.source is not None and Path(m.source).is_file()}
    for path in map(Path, host_mount_points(spec)):
        if path.exists():
            continue
        if str(path) in files:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        else:
            path.mkdir(parents=True, exist_ok=True)


def seccomp_descriptor(capabilities: Sequence[str]) -> int:
    """A descriptor holding the default seccomp filter, for bwrap to read (close-on-exec: the
    spawn hands the pod a copy as `SECCOMP_FD`; the caller closes this one)."""
    from lockstep.runtimes.local.sandbox.seccomp import default_filter, filter_fd

    return filter_fd(default_filter(capabilities=capabilities))


MEMORY_ROOT = Path("/dev/shm/lockstep")  # noqa: S108 - this machine's memory file system
"""Where pods' in-memory files (secret volumes, set-up files) go."""


def policy_of(settings: Settings) -> SandboxPolicy:
    """The sandbox policy of this machine: probed (bwrap found and working) unless the
    settings turn the sandbox off."""
    image_user = settings.pod_identity
    sandboxing = None
    if settings.sandbox is SandboxMode.AUTO:
        settings.runtime_dir.mkdir(parents=True, exist_ok=True)
        sandboxing = probe(scratch=settings.runtime_dir)
    return SandboxPolicy(
        sandboxing=sandboxing,
        claims_dir=settings.claims_dir,
        memory_root=MEMORY_ROOT,
        euid=os.geteuid(),
        image_user=None if image_user is None else Identity(*image_user),
        data_volumes=settings.data_volumes,
        s3fs=s3_mount.available() if settings.s3_mount is S3Mount.AUTO else None,
        allowed_host_paths=settings.host_path_allowances,
        private_paths=(str(settings.data_dir),),
        private_files=database_files(settings),
        tmp_bytes=bounds_of(settings).tmp_bytes,
        networking=None
        if settings.pod_network is PodNetwork.HOST
        else network_probe(settings.pod_host_ports),
        installation=installation(),
    )


def database_files(settings: Settings) -> tuple[str, ...]:
    """A SQLite database kept outside lockstep's data directory, with its journal files."""
    url = settings.resolved_database_url
    if not url.startswith("sqlite:///"):
        return ()
    database = Path(url.removeprefix("sqlite:///")).resolve()
    if settings.data_dir in database.parents:
        return ()
    return tuple(f"{database}{suffix}" for suffix in ("", "-wal", "-shm", "-journal"))


def installation() -> tuple[str, ...]:
    """The directories of lockstep's installation: its interpreter's, its Python environment,
    and the checkout it runs from (an editable install); one inside another is left out."""
    package = Path(lockstep.__file__).resolve().parent
    checkout = package.parent.parent if package.parent.name == "src" else package.parent
    found = {str(p.resolve()) for p in (Path(sys.base_prefix), Path(sys.prefix), checkout)}
    return tuple(sorted(p for p in found if not any(Path(q) in Path(p).parents for q in found)))


def unenterable_above(paths: Sequence[str], identity: Identity) -> list[str]:
    """For each of `paths`, the highest directory above it that `identity` may not enter
    (no search permission for it), each once."""
    found: dict[str, None] = {}
    for path in paths:
        for parent in reversed(PurePosixPath(path).parents):
            if not _may_enter(Path(parent), identity):
                found.setdefault(str(parent))
                break
    return list(found)


def _may_enter(directory: Path, identity: Identity) -> bool:
    try:
        status = directory.stat()
    except OSError:
        return True  # nothing to veil: the pod meets the same error as lockstep would
    if status.st_uid == identity.uid:
        return bool(status.st_mode & stat.S_IXUSR)
    if status.st_gid == identity.gid or status.st_gid in identity.groups:
        return bool(status.st_mode & stat.S_IXGRP)
    return bool(status.st_mode & stat.S_IXOTH)


def unknown_data_volumes(
    request: CreationRequest, data_volumes: Mapping[str, Path]
) -> list[Violation]:
    """The data volumes a request mounts that no administrator registered on this machine
    (checked when it is submitted, so that it is refused rather than failing later)."""
    found: list[Violation] = []
    for where, pod in request.pod_specs():
        storage = pod.storage
        for i, volume in enumerate((storage.data_volume if storage else None) or ()):
            if volume.exclude or volume.id is None or str(volume.id) in data_volumes:
                continue
            found.append(
                Violation(
                    f"{where}.storage.dataVolume[{i}].id",
                    f"no data volume {volume.id} is registered on this server "
                    "(LOCKSTEP_DATA_VOLUMES)",
                )
            )
    return found
