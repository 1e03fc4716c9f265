"""A pod's volumes on this machine: where each one lives (`mount_of`, pure), making them ready
before the pod starts (`prepare`), and what is owed after it ends (`finish`: s3 written back,
NFS unmounted).

Where they live:
- a claim (pvc) under `<data dir>/claims/<project id>/<claim>`, kept until deleted through
  lockstep, or under `<data dir>/claims/.ephemeral/<workload id>` when ephemeral (removed
  with the workload);
- git, s3, configMap and disk emptyDir volumes in the pod's directory (`volumes/<kind>-<n>`);
- secret volumes in memory, under /dev/shm (`memory_dir`), never on disk;
- hostPath and data volumes where they are on this machine.

Called by the local runtime when it starts a pod (runtime.py), and when the pod has ended.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.sandbox.asked import VolumeAsk, VolumeKind, volumes_of
from lockstep.runtimes.local.sandbox.definition import Identity, Mount, MountKind
from lockstep.runtimes.local.volumes import VolumeError

DEFAULT_FILE_MODE = 0o644
CLONE_TIMEOUT_SECONDS = 600.0
CLAIM_FILE = ".claim.json"


@dataclass(frozen=True, slots=True)
class Places:
    """Where one pod's volumes go."""

    pod_dir: Path
    workload_dir: Path
    claims_dir: Path
    """`<data dir>/claims`: the project's claims that outlive workloads."""
    memory_dir: Path
    """A directory in memory (under /dev/shm) for this pod's secret volumes."""
    project_id: str
    data_volumes: Mapping[str, Path]
    """Data volumes an administrator registered: id → directory on this machine."""
    s3fs: str | None = None
    """s3fs, when s3 volumes are mounted with it (None: they are synchronised)."""

    def claim(self, ask: VolumeAsk) -> Path:
        name = str(ask.source)
        if ask.ephemeral:
            return ephemeral_claims(self.claims_dir, self.workload_dir.name) / name
        return self.claims_dir / self.project_id / name

    def own(self, ask: VolumeAsk) -> Path:
        base = self.memory_dir if ask.kind is VolumeKind.SECRET else self.pod_dir / "volumes"
        return base / ask.directory_name


def ephemeral_claims(claims_dir: Path, workload_id: str) -> Path:
    """Where a workload's ephemeral claims are (removed with the workload)."""
    return claims_dir / ".ephemeral" / workload_id


def missing_claims(plan: ReplicaPlan, project_id: str, claims_dir: Path) -> list[str]:
    """The existing claims (existingPvc) the plan's pods mount that the project lacks."""
    missing: dict[str, None] = {}
    specs = {id(replica.spec): replica.spec for replica in plan.replicas}  # a leader's, workers'
    for spec in specs.values():
        if spec.storage is None or not spec.storage.pvc:
            continue
        try:
            volumes = volumes_of(spec)
        except PodStartError:
            continue  # the pod's start says what is wrong with it
        for volume in volumes:
            wanted = volume.kind is VolumeKind.PVC and not volume.create and volume.source
            if wanted and not (claims_dir / project_id / str(volume.source)).is_dir():
                missing[str(volume.source)] = None
    return list(missing)


def mount_of(ask: VolumeAsk, places: Places) -> Mount:
    """Where the prepared volume is on this machine, and how the pod sees it."""
    if ask.kind is VolumeKind.HOST_PATH:
        source = str(ask.source)
    elif ask.kind is VolumeKind.PVC:
        source = str(places.claim(ask))
    elif ask.kind is VolumeKind.DATA_VOLUME:
        found = places.data_volumes.get(str(ask.source))
        if found is None:
            raise VolumeError(f"dataVolume: no data volume has the id {ask.source}")
        source = str(found)
    elif ask.kind is VolumeKind.EMPTY_DIR and ask.memory:
        return Mount(ask.target, MountKind.TMPFS, size_bytes=ask.size_bytes)
    elif ask.kind is VolumeKind.CONFIG_MAP and ask.sub_path:
        source = str(places.own(ask) / ask.sub_path)
    else:
        source = str(places.own(ask))
    return Mount(ask.target, MountKind.BIND, source=source, read_only=ask.read_only)


def prepare(
    asks: Sequence[VolumeAsk],
    places: Places,
    *,
    values: ProjectSecrets,
    owner: Identity | None,
) -> None:
    """Make every volume ready to mount; otherwise one `VolumeError` (shown as the pod's
    reason) naming each volume that could not be made ready. `owner`: the pod's identity, given
    the directories it must be able to write."""
    problems: list[str] = []
    for ask in asks:
        try:
            _prepare(ask, places, values=values, owner=owner)
        except VolumeError as error:
            problems.append(_named(ask, error))
    if problems:
        raise VolumeError("; ".join(problems))


def _prepare(
    ask: VolumeAsk, places: Places, *, values: ProjectSecrets, owner: Identity | None
) -> None:
    if ask.kind is VolumeKind.HOST_PATH:
        if not Path(str(ask.source)).exists():
            raise VolumeError(f"hostPath: {ask.source} does not exist on this machine")
    elif ask.kind is VolumeKind.PVC:
        _claim(ask, places, owner)
    elif ask.kind is VolumeKind.DATA_VOLUME:
        mount_of(ask, places)  # refuses an unknown id
    elif ask.kind is VolumeKind.CONFIG_MAP:
        _files(ask, places, values.config_maps, what="config map")
    elif ask.kind is VolumeKind.SECRET:
        _files(ask, places, values.secrets, what="secret")
    elif ask.kind is VolumeKind.EMPTY_DIR and not ask.memory:
        _directory(places.own(ask), owner)
    elif ask.kind is VolumeKind.NFS:
        _mount_nfs(ask, places)
    elif ask.kind is VolumeKind.GIT:
        _clone(ask, places, values, owner)
    elif ask.kind is VolumeKind.S3:
        _download(ask, places, values, owner)


def finish(
    asks: Sequence[VolumeAsk], places: Places, *, values: ProjectSecrets, write_back: bool = True
) -> list[str]:
    """After the pod has ended: s3 volumes written back (unless `write_back` is false: the pod
    never ran), NFS unmounted, secrets forgotten. Returns what could not be done (each a
    message for the pod's events)."""
    problems: list[str] = []
    for ask in asks:
        try:
            if ask.kind is VolumeKind.S3:
                _release_s3(ask, places, values, write_back=write_back)
            elif ask.kind is VolumeKind.NFS:
                _unmount(places.own(ask))
        except VolumeError as error:
            problems.append(_named(ask, error))
    shutil.rmtree(places.memory_dir, ignore_errors=True)
    return problems


def _named(ask: VolumeAsk, error: VolumeError) -> str:
    """The error, beginning with the kind of volume it is about."""
    text = str(error)
    return text if text.startswith(f"{ask.kind.value}:") else f"{ask.kind.value}: {text}"


def _directory(path: Path, owner: Identity | None) -> None:
    path.mkdir(parents=True, exist_ok=True)
    if owner is not None:
        os.chown(path, owner.uid, owner.gid)


def _claim(ask: VolumeAsk, places: Places, owner: Identity | None) -> None:
    path = places.claim(ask)
    if path.is_dir():
        if owner is not None and not ask.read_only:
            os.chown(path, owner.uid, owner.gid)  # made ahead (lockstep volume create)
        return
    if not ask.create:
        raise VolumeError(
            f"pvc: the claim {path.name!r} does not exist in this project "
            "(create it first, or set existingPvc false to have it made)"
        )
    _directory(path, owner)
    record = {"size": ask.size_bytes, "ephemeral": ask.ephemeral}
    (path.parent / f"{path.name}{CLAIM_FILE}").write_text(json.dumps(record))


def _files(
    ask: VolumeAsk,
    places: Places,
    stores: Mapping[str, Mapping[str, str]],
    *,
    what: str,
) -> None:
    found = stores.get(str(ask.source))
    if found is None:
        raise VolumeError(f"{ask.kind.value}: the project has no {what} named {ask.source!r}")
    if ask.sub_path is not None and ask.sub_path not in found:
        raise VolumeError(f"{ask.kind.value}: {what} {ask.source!r} has no key {ask.sub_path!r}")
    directory = places.own(ask)
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True, mode=0o755)
    for key, value in found.items():
        if "/" in key or key in {".", ".."}:
            raise VolumeError(
                f"{ask.kind.value}: {what} {ask.source!r} has a key {key!r} that is not a file name"
            )
        path = directory / key
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(value)
        path.chmod(ask.mode if ask.mode is not None else DEFAULT_FILE_MODE)


def _mount_nfs(ask: VolumeAsk, places: Places) -> None:
    if not any(Path(d, "mount.nfs").exists() for d in ("/sbin", "/usr/sbin")):
        raise VolumeError(
            f"nfs: could not mount {ask.source}: this machine cannot mount NFS (no mount.nfs, "
            "which the Debian package nfs-common has)"
        )
    target = places.own(ask)
    target.mkdir(parents=True, exist_ok=True)
    options = "ro" if ask.read_only else "rw"
    try:
        done = subprocess.run(
            [
                "mount",
                "-t",
                "nfs",
                "-o",
                f"{options},soft,timeo=50,retrans=2",
                str(ask.source),
                str(target),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise VolumeError(f"nfs: could not mount {ask.source}: {error}") from error
    if done.returncode != 0:
        reason = (done.stderr or done.stdout).strip() or f"mount exited with {done.returncode}"
        raise VolumeError(f"nfs: could not mount {ask.source}: {reason}")


def _unmount(target: Path) -> None:
    if not target.is_mount():
        return
    done = subprocess.run(
        ["umount", "-l", str(target)], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise VolumeError(f"nfs: could not unmount {target}: {done.stderr.strip()}")


def _clone(ask: VolumeAsk, places: Places, values: ProjectSecrets, owner: Identity | None) -> None:
    from lockstep.runtimes.local.volumes import git

    assert ask.git is not None
    target = places.own(ask)
    shutil.rmtree(target, ignore_errors=True)
    source = git.source_of(ask.git, values)
    git.clone(source, target, timeout=CLONE_TIMEOUT_SECONDS)
    _own_tree(target, owner)


def _download(
    ask: VolumeAsk, places: Places, values: ProjectSecrets, owner: Identity | None
) -> None:
    from lockstep.runtimes.local.volumes import s3

    assert ask.s3 is not None
    target = places.own(ask)
    source = s3.source_of(ask.s3, values)
    if places.s3fs is not None:
        from lockstep.runtimes.local.volumes import s3_mount

        s3_mount.mount(places.s3fs, source, target, owner=owner, work_dir=places.memory_dir)
        return
    target.mkdir(parents=True, exist_ok=True)
    s3.download(source, target)
    _own_tree(target, owner)


def _release_s3(
    ask: VolumeAsk, places: Places, values: ProjectSecrets, *, write_back: bool
) -> None:
    """Unmounted, when s3fs mounted it (what the pod wrote is in the bucket already); else
    the pod's changes uploaded, if `write_back`."""
    from lockstep.runtimes.local.volumes import s3

    assert ask.s3 is not None
    target = places.own(ask)
    if target.is_mount():
        from lockstep.runtimes.local.volumes import s3_mount

        s3_mount.unmount(target)
    elif write_back and target.is_dir():
        s3.upload(s3.source_of(ask.s3, values), target)


def _own_tree(root: Path, owner: Identity | None) -> None:
    """Give a prepared tree to the pod's user, so that it may write in it."""
    if owner is None:
        return
    for directory, _, files in os.walk(root):
        os.chown(directory, owner.uid, owner.gid)
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                os.chown(Path(directory, name), owner.uid, owner.gid, follow_symlinks=False)
