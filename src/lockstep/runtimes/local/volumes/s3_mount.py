"""The s3 volume, mounted: the bucket prefix as a live file system at the entry's path, through
s3fs (FUSE), where this machine has s3fs and /dev/fuse and lockstep runs as root
(`available`). Elsewhere, or with LOCKSTEP_S3_MOUNT=sync, the volume is synchronised (s3.py).

- s3fs runs in the foreground, a child of the pod's set-up process, in a session of its own so
  that its memory is not counted as the pod's (as a CSI driver's is not); it carries the pod's
  marker, so stopping the pod stops it. `mount` returns once the mount is there, or raises
  VolumeError with s3fs's own reason when s3fs ends first (bad credentials, no such bucket).
- The access keys reach s3fs through a password file in the pod's memory directory (0600),
  removed as soon as the mount is made: never through its argv or environment.
- The files belong to the pod's user (uid, gid, umask 022), and other users may enter the
  mount (allow_other): the pod may run as another user than lockstep's.
- Requests go to the entry's endpoint in path style, so any S3-compatible server works.
- `unmount` once the pod has ended; what a killed set-up process left mounted, the runtime
  detaches (mounts.py).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from lockstep.runtimes.local.sandbox.definition import Identity
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.runtimes.local.volumes.s3 import S3Source

MOUNT_TIMEOUT_SECONDS = 60.0
FUSE_DEVICE = Path("/dev/fuse")


def available() -> str | None:
    """s3fs, where it can mount here (found, /dev/fuse usable, lockstep running as root)."""
    found = shutil.which("s3fs")
    usable = os.access(FUSE_DEVICE, os.R_OK | os.W_OK) and os.geteuid() == 0
    return found if found is not None and usable else None


def mount(
    s3fs: str, source: S3Source, target: Path, *, owner: Identity | None, work_dir: Path
) -> None:
    """Mount the source's bucket prefix at `target` (made if need be); `work_dir` is private
    (0700, in memory) and holds the password file for as long as the mount takes."""
    target.mkdir(parents=True, exist_ok=True)
    work_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = target.name
    bucket = source.bucket + (f":/{source.prefix.rstrip('/')}" if source.prefix else "")
    options = [
        f"url={source.url}",
        "use_path_request_style",
        "allow_other",
        "umask=0022",
        "mp_umask=0022",
        "dbglevel=err",
    ]
    if owner is not None:
        options += [f"uid={owner.uid}", f"gid={owner.gid}"]
    passwords = work_dir / f"{name}.passwd"
    if source.anonymous:
        options.append("public_bucket=1")
    else:
        descriptor = os.open(passwords, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(f"{source.access_key_id}:{source.secret_access_key}\n")
        options.append(f"passwd_file={passwords}")
    messages = work_dir / f"{name}.s3fs.log"
    try:
        pid = os.posix_spawn(
            s3fs,
            [s3fs, "-f", bucket, str(target), "-o", ",".join(options)],
            dict(os.environ),
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, str(messages), os.O_WRONLY | os.O_CREAT, 0o600),
                (os.POSIX_SPAWN_DUP2, 1, 2),
            ],
            setsid=True,  # its memory is not the pod's (as a CSI driver's is not)
        )
        _wait_for(pid, target, messages, source)
    finally:
        passwords.unlink(missing_ok=True)


def _wait_for(pid: int, target: Path, messages: Path, source: S3Source) -> None:
    """Until the mount is there; VolumeError with s3fs's last word if it ends first."""
    deadline = time.monotonic() + MOUNT_TIMEOUT_SECONDS
    while not target.is_mount():
        ended = os.waitpid(pid, os.WNOHANG) != (0, 0)
        if ended or time.monotonic() >= deadline:
            if not ended:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            said = _last_word(messages.read_text(errors="replace"))
            reason = (
                said
                if said
                else "s3fs ended without a word"
                if ended
                else f"no mount within {MOUNT_TIMEOUT_SECONDS:g} s"
            )
            raise VolumeError(f"cannot mount s3 bucket {source.bucket!r} at {source.url}: {reason}")
        time.sleep(0.02)


def _last_word(output: str) -> str:
    """What s3fs said last at its most severe (critical before error), without its time stamp
    and source location: `invalid credentials(host=…) - result of checking service.`"""
    lines = [line for line in output.splitlines() if line.strip()]
    for level in ("[CRT]", "[ERR]"):
        found = [line for line in lines if level in line]
        if found:
            return found[-1].split("): ", 1)[-1].strip()
    return lines[-1].strip() if lines else ""


def unmount(target: Path) -> None:
    """Take the mount down (s3fs then ends by itself)."""
    done = subprocess.run(["umount", str(target)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise VolumeError(f"could not unmount the s3 volume at {target}: {done.stderr.strip()}")
