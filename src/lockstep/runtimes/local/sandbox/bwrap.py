"""The command line of a pod's sandbox: bubblewrap (`bwrap`) built from a `SandboxSpec`, put in
front of the pod's own command.

Inside, the pod sees a root of its own (this machine's file systems as read-only layers under
a copy-on-write layer of the pod's, overlaid in a mount namespace made before bwrap; or, where
lockstep cannot mount, this machine's root itself; read-only with readOnlyRootFilesystem), a
minimal /dev (plus the GPU device nodes), this machine's /sys read-only, a pid namespace of
its own with its own /proc (the pod sees and signals only its own processes), a private /tmp
and /dev/shm (memory-backed; largeShmRequest lifts the default size), and its volumes bound
at their mount paths. Every bound file system is mounted nodev and nosuid. It joins its
workload's network namespace (see network.py) where it has one, else it shares this machine's
network (hostNetwork). bwrap always sets no_new_privs. The identity (uid, gid,
supplementary groups) and the capabilities kept are set by `setpriv` inside the sandbox,
which needs lockstep to run as root.

Pure. Used by `probe.Sandboxing.command`, which fills in this machine's tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath

from lockstep.runtimes.local.sandbox.definition import Mount, MountKind, RootLayer, SandboxSpec
from lockstep.runtimes.local.sandbox.host_paths import HostPaths

PRIVATE_TMPFS = ("/tmp", "/dev/shm")  # noqa: S108 - the sandbox's own, not this machine's
ROOT = PurePosixPath("/")


def command(
    spec: SandboxSpec,
    argv: Sequence[str],
    *,
    bwrap: str = "bwrap",
    setpriv: str = "setpriv",
    env: str = "env",
    unshare: str = "unshare",
    nsenter: str = "nsenter",
    seccomp_fd: int | None = None,
    env_fd: int | None = None,
    host_paths: HostPaths | None = None,
) -> list[str]:
    """`argv` run inside the sandbox `spec` describes; with `env_fd`, in exactly the
    environment bwrap reads from that descriptor (`environment.descriptor`), not the one it
    runs in.

    Stopping a pod signals its whole process group, bwrap included: bwrap ignores SIGTERM
    (so that the pod's own exit status, not bwrap's death, is what is recorded), and the pod's
    command gets SIGTERM's default back (an ignored signal would otherwise be inherited). The
    pod's processes outside its process group end with it too: they are in its pid namespace,
    whose first process is bwrap's."""
    line = [] if spec.network is None else [nsenter, f"--net={spec.network}", "--"]
    pinned = host_paths or HostPaths()
    line += [env, "--ignore-signal=TERM", *_namespace_setup(spec, unshare=unshare, pinned=pinned)]
    line += [bwrap, "--die-with-parent", "--unshare-pid"]
    if env_fd is not None:
        line += ["--args", str(env_fd)]
    if spec.root_layer is not None:
        line += ["--bind", merged_root(spec.root_layer), "/", "--ro-bind", "/sys", "/sys"]
    else:
        line += ["--ro-bind" if spec.read_only_root else "--bind", "/", "/"]
    line += ["--dev", "/dev", "--proc", "/proc"]
    if spec.hostname is not None:
        line += ["--unshare-uts", "--hostname", spec.hostname]
    if spec.hosts_file is not None:
        line += ["--ro-bind", spec.hosts_file, "/etc/hosts"]
    for device in spec.gpu_devices:
        line += ["--dev-bind", device, device]
    for private, size in zip(PRIVATE_TMPFS, (spec.tmp_bytes, spec.shm_bytes), strict=True):
        line += [] if size is None else ["--size", str(size)]
        line += ["--perms", "1777", "--tmpfs", private]
    roots = _private_roots(spec)
    made: set[PurePosixPath] = set()
    for mount in sorted(spec.mounts, key=lambda m: len(PurePosixPath(m.target).parts)):
        target = PurePosixPath(mount.target)
        # Directories above the target that bwrap makes (in the sandbox's memory file systems,
        # or in a root of the pod's own) are made readable by all, as a container runtime
        # makes them (bwrap would make them 0700), after the file system they are in. One
        # that exists keeps its permissions.
        for parent in reversed(target.parents):
            if parent in made or parent == ROOT:
                continue
            if spec.root_layer is not None or any(root in parent.parents for root in roots):
                line += ["--perms", "0755", "--dir", str(parent)]
                made.add(parent)
        made = {path for path in made if target not in path.parents}
        line += _mounted(mount, pinned)
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


def _mounted(mount: Mount, pinned: HostPaths) -> list[str]:
    """bwrap's arguments for one mount: a memory file system, or a bind — of a pinned hostPath,
    from its descriptor or its private place of lockstep's; else from its path."""
    if mount.kind is MountKind.TMPFS:
        size = [] if mount.size_bytes is None else ["--size", str(mount.size_bytes)]
        return [*size, "--perms", "0755" if mount.read_only else "1777", "--tmpfs", mount.target]
    if mount.source is None:
        raise ValueError(f"the bind mount at {mount.target} has no source")
    bind = "--ro-bind" if mount.read_only else "--bind"
    if mount.source in pinned.staged:
        return [bind, pinned.staged[mount.source], mount.target]
    if mount.source in pinned.descriptors:
        return [f"{bind}-fd", str(pinned.descriptors[mount.source]), mount.target]
    return [bind, mount.source, mount.target]


def merged_root(layer: RootLayer) -> str:
    """Where the pod's root is assembled in its mount namespace, bound as / by bwrap."""
    return f"{layer.directory}/merged"


_SETUP = (
    'fail() { echo "lockstep: $*" >&2; exit 1; }; '
    'while [ "$1" != -- ]; do case "$1" in '
    'private) mount --bind "$2" "$3" && mount --make-private "$3" || '
    'fail "could not keep the mounts of this machine out of $3"; shift 3;; '
    'layer) mount -t overlay -o "nodev,nosuid,lowerdir=$2,upperdir=$3,workdir=$4" lockstep-root '
    '"$5" || fail "could not give the pod a root of its own over $2"; shift 5;; '
    '*) fail "unknown step $1";; esac; done; shift; exec "$@"'
)


def _namespace_setup(spec: SandboxSpec, *, unshare: str, pinned: HostPaths) -> list[str]:
    """What runs bwrap in a mount namespace of its own (a follower of this machine's, so
    nothing made in it leaks out), made ready first: each private source a private mount
    (bound from there, it no longer receives this machine's later mounts) — bound from its
    descriptor onto its place of lockstep's when it is pinned, else onto itself — and the pod's
    root layers overlaid. Nothing when neither is asked."""
    steps: list[str] = []
    for source in spec.private_sources:
        if source in pinned.staged:
            descriptor = f"/proc/self/fd/{pinned.descriptors[source]}"
            steps += ["private", descriptor, pinned.staged[source]]
        else:
            steps += ["private", source, source]
    if spec.root_layer is not None:
        steps += layer_steps(spec.root_layer)
    if not steps:
        return []
    script = ["/bin/sh", "-c", _SETUP, "lockstep-sandbox", *steps, "--"]
    return [unshare, "--mount", "--propagation", "slave", *script]


def layer_steps(layer: RootLayer) -> list[str]:
    """The set-up steps overlaying each of this machine's file systems in `layer.lower`
    (the root first, then each below its parent) with the pod's own copy-on-write layer. The
    directories they name must exist (`layer_directories`): the caller makes them."""
    steps: list[str] = []
    for lower, upper, work, target in _layers(layer):
        steps += ["layer", lower, upper, work, target]
    return steps


def layer_directories(layer: RootLayer) -> list[str]:
    """The directories of a root layer that must exist before the pod starts: each layer's
    upper and work directories, and the merged root."""
    return [
        merged_root(layer),
        *(path for _, upper, work, _ in _layers(layer) for path in (upper, work)),
    ]


def _layers(layer: RootLayer) -> list[tuple[str, str, str, str]]:
    merged = merged_root(layer)
    ordered = sorted(layer.lower, key=lambda path: len(PurePosixPath(path).parts))
    return [
        (
            lower,
            f"{layer.directory}/upper/{number}",
            f"{layer.directory}/work/{number}",
            merged if lower == "/" else merged + lower,
        )
        for number, lower in enumerate(ordered)
    ]


def _private_roots(spec: SandboxSpec) -> list[PurePosixPath]:
    tmpfs = [m.target for m in spec.mounts if m.kind is MountKind.TMPFS]
    return [PurePosixPath(path) for path in (*PRIVATE_TMPFS, *tmpfs)]


def host_mount_points(spec: SandboxSpec) -> list[str]:
    """Mount targets outside the sandbox's memory file systems, and the working directory
    when it is under no mount either: they are on this machine's root, which bwrap cannot add
    to once it is bound read-only, so the runtime makes any that are missing (empty
    directories) before the pod starts. (With a root layer of its own, bwrap makes them in
    the pod's layer; making them on this machine as well does no harm.)"""
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
            ambient = "".join(f",+{name.lower()}" for name in spec.ambient_capabilities)
            line.append(f"--ambient-caps=-all{ambient}")
    return [*line, "--"]
