"""The mounts a pod's volumes left on this machine (NFS, s3 through FUSE), found and taken down
before its directory is removed.

A pod's set-up process unmounts its volumes when the pod's command ends; killed first (the pod
stopped at its deadline, lockstep gone), it cannot. Removing the pod's directory would then
walk into the mount and delete what the server holds. So the runtime unmounts whatever is still
mounted under a pod's directory when the pod has ended, and under a workload's directory before
removing it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

MOUNTINFO = Path("/proc/self/mountinfo")
_ESCAPED = re.compile(r"\\([0-7]{3})")


def mount_points(mountinfo: str) -> list[Path]:
    """The mount points of a mountinfo table, as the kernel lists them (octal escapes of space,
    tab, newline and backslash undone)."""
    found = []
    for line in mountinfo.splitlines():
        fields = line.split(" ")
        if len(fields) > 4:
            found.append(Path(_ESCAPED.sub(lambda m: chr(int(m.group(1), 8)), fields[4])))
    return found


def mounts_under(directory: Path, *, mountinfo: Path = MOUNTINFO) -> list[Path]:
    """Mount points inside `directory` (not itself), deepest first."""
    try:
        table = mountinfo.read_text()
    except OSError:
        return []
    inside = [p for p in mount_points(table) if directory in p.parents]
    return sorted(set(inside), key=lambda p: (-len(p.parts), str(p)))


def unmount_under(directory: Path) -> list[str]:
    """Detach every mount inside `directory` (lazily: a server that no longer answers cannot
    hold it up). Returns what could not be detached."""
    problems = []
    for point in mounts_under(directory):
        done = subprocess.run(
            ["umount", "--lazy", str(point)], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            problems.append(f"could not unmount {point}: {done.stderr.strip()}")
    return problems
