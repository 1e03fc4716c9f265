"""What this machine gives a sandbox: bwrap and the tools around it, found and tried once at
start-up, whether lockstep may set another identity (it runs as root), and whether it can
give each pod a root of its own (overlayfs, over which of this machine's file systems).

Used by the sandbox policy (policy.py) and MPI's worker agent.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from lockstep.runtimes.local.sandbox.bwrap import command, layer_directories
from lockstep.runtimes.local.sandbox.definition import RootLayer, SandboxSpec
from lockstep.runtimes.local.sandbox.host_paths import HostPaths

GPU_DEVICE_PREFIXES = ("nvidia",)
"""Device nodes under /dev a pod with GPUs needs (nvidia0…, nvidiactl, nvidia-uvm, …)."""

VIRTUAL_FILE_SYSTEMS = frozenset(
    {
        "autofs", "binfmt_misc", "bpf", "cgroup", "cgroup2", "configfs", "debugfs", "devpts",
        "devtmpfs", "efivarfs", "fusectl", "hugetlbfs", "mqueue", "nsfs", "proc", "pstore",
        "ramfs", "rpc_pipefs", "securityfs", "sysfs", "tmpfs", "tracefs",
    }
)  # fmt: skip
"""File systems that are no part of a pod's root (a pod gets its own /proc, /dev, /tmp)."""

OWN_TREES = ("/proc", "/sys", "/dev", "/run", "/tmp")  # noqa: S108 - the sandbox's own
"""Where a pod has its own file systems, or none of this machine's."""


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
    nsenter: str = "nsenter"
    layers: tuple[str, ...] | None = None
    """This machine's file systems that a pod's root of its own is made of (the root first);
    None: pods get this machine's root itself (see `layer_problem`)."""
    layer_problem: str = ""
    """Why pods get no root of their own here."""

    @property
    def available(self) -> bool:
        return self.bwrap is not None and not self.problem

    def command(
        self,
        spec: SandboxSpec,
        argv: Sequence[str],
        *,
        seccomp_fd: int | None = None,
        env_fd: int | None = None,
        host_paths: HostPaths | None = None,
    ) -> list[str]:
        """`bwrap.command` with the tools found on this machine."""
        return command(
            spec,
            argv,
            bwrap=self.bwrap or "bwrap",
            env=self.env,
            setpriv=self.setpriv,
            unshare=self.unshare,
            nsenter=self.nsenter,
            seccomp_fd=seccomp_fd,
            env_fd=env_fd,
            host_paths=host_paths,
        )


def probe(
    bwrap: str | None = None, *, scratch: Path | None = None, try_layers: bool = True
) -> Sandboxing:
    """Look for bwrap and run it once, as lockstep would, to see that it works here; as root,
    and unless `try_layers` is false (the caller builds sandboxes from stored specs, which say
    their layers), also overlay a root of a pod's own in `scratch` (a directory on the file
    system that pods' directories are on; a temporary one when None) to see that overlayfs
    works here."""
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
    problem = _fails(trial)
    if problem:
        return Sandboxing(found, f"bwrap cannot create a sandbox here: {problem}", as_root)
    works = Sandboxing(
        found,
        "",
        as_root,
        env=env,
        setpriv=setpriv,
        unshare=unshare,
        nsenter=shutil.which("nsenter") or "nsenter",
    )
    if not try_layers:
        return works
    if not as_root:
        reason = "lockstep does not run as root, and only root may mount overlayfs here"
        return dataclasses.replace(works, layer_problem=reason)
    layers = machine_file_systems(Path("/proc/self/mountinfo").read_text())
    with tempfile.TemporaryDirectory(dir=scratch, prefix=".lockstep-probe-") as directory:
        layer = RootLayer(directory, layers)
        for made in layer_directories(layer):
            Path(made).mkdir(parents=True, exist_ok=True)
        spec = SandboxSpec(root_layer=layer)
        problem = _fails(command(spec, ["/bin/true"], bwrap=found, env=env, unshare=unshare))
    if problem:
        return dataclasses.replace(
            works, layer_problem=f"overlayfs could not be mounted: {problem}"
        )
    return dataclasses.replace(works, layers=layers)


def _fails(line: Sequence[str]) -> str:
    """Why `line` failed ('' when it ran)."""
    try:
        done = subprocess.run(line, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if done.returncode != 0:
        return done.stderr.strip() or f"exit status {done.returncode}"
    return ""


def machine_file_systems(mountinfo: str) -> tuple[str, ...]:
    """This machine's root and the disk file systems mounted under it (from
    /proc/self/mountinfo), each a directory a pod's root has a layer of: not the virtual ones,
    nor those where a pod has its own (/proc, /dev, /tmp, …), nor those below a mount left out,
    nor one whose path overlayfs cannot take as an option (a comma, colon or backslash)."""
    found = ["/"]
    left_out: list[PurePosixPath] = [PurePosixPath(tree) for tree in OWN_TREES]
    entries: list[tuple[str, str]] = []
    for line in mountinfo.splitlines():
        before, _, after = line.partition(" - ")
        fields = before.split()
        if len(fields) < 5 or not after:
            continue
        entries.append((_unescape(fields[4]), after.split(" ", 1)[0]))
    for point, kind in sorted(entries, key=lambda entry: len(PurePosixPath(entry[0]).parts)):
        path = PurePosixPath(point)
        if point == "/" or point in found:
            continue
        excluded = (
            kind in VIRTUAL_FILE_SYSTEMS
            or kind.startswith("fuse")
            or any(c in point for c in ",:\\")
            or not Path(point).is_dir()
        )
        if excluded or any(out == path or out in path.parents for out in left_out):
            left_out.append(path)
            continue
        found.append(point)
    return tuple(found)


def _unescape(field: str) -> str:
    """A mountinfo path: spaces, tabs, newlines and backslashes are written as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def gpu_device_nodes(dev: Path = Path("/dev")) -> tuple[str, ...]:
    """This machine's GPU device nodes, bound into pods that were given GPUs."""
    try:
        names = sorted(p.name for p in dev.iterdir() if p.name.startswith(GPU_DEVICE_PREFIXES))
    except OSError:
        return ()
    return tuple(str(dev / name) for name in names)
