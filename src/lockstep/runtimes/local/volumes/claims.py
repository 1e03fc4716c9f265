"""A project's claims (pvc volumes) on this machine: create, list, get and delete them.

A claim is a directory `<claims dir>/<project id>/<name>` with a record beside it,
`<name>.claim.json`: `{"size": bytes | null, "ephemeral": false, "createdAt": ISO-8601}` —
the layout the local runtime uses when it makes a claim itself for a workload
(`existingPvc: false`, see prepare.py), so those claims are listed here too. A workload's
ephemeral claims live apart (`<claims dir>/.ephemeral/<workload id>`) and are its own: they
are never listed. A claim's usage is measured as `du` measures it (the blocks its files take,
each file once), when it is looked at; a claim may use more than its size (nothing enforces
it), which `Claim.over_size` says.

Called by the claim service (services/claims.py), which checks the caller's access first.
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from lockstep.domain.claims import Claim, check_claim
from lockstep.domain.clock import Clock, iso, parse_moment, utc_now
from lockstep.domain.errors import Conflict, InvalidRequest
from lockstep.runtimes.local.volumes.prepare import CLAIM_FILE

DELETING_PREFIX = ".deleting-"
"""A claim being deleted is first renamed to a hidden name, so that it is gone at once."""
BYTES_PER_BLOCK = 512
"""`st_blocks` counts 512-byte blocks, whatever the file system's block size."""


class Claims:
    """The claims under one claims dir (`Settings.claims_dir`): a `ClaimStore`."""

    def __init__(self, claims_dir: Path, *, clock: Clock = utc_now) -> None:
        self.claims_dir = claims_dir
        self._clock = clock

    def create(self, project_id: str, name: str, *, size_bytes: int | None) -> Claim:
        """A new, empty claim; `InvalidRequest` for a name that is not a DNS-1123 label or a
        size below one byte, `Conflict` when the project already has a claim of that name."""
        violations = check_claim(name, size_bytes)
        if violations:
            raise InvalidRequest(violations)
        project_dir = self._project_dir(project_id)
        project_dir.mkdir(parents=True, exist_ok=True)
        path = project_dir / name
        try:
            path.mkdir()
        except FileExistsError as error:
            raise Conflict(f"project {project_id} already has a claim named {name!r}") from error
        created_at = self._clock()
        record = {"size": size_bytes, "ephemeral": False, "createdAt": iso(created_at)}
        try:
            _write_atomically(_record_path(path), json.dumps(record))
        except BaseException:
            path.rmdir()
            raise
        return Claim(
            name=name,
            project_id=project_id,
            size_bytes=size_bytes,
            used_bytes=disk_usage(path),
            created_at=_record_time(record) or created_at,
        )

    def list(self, project_id: str) -> list[Claim]:
        """The project's claims, by name, each with its usage measured now."""
        project_dir = self._project_dir(project_id)
        found = [self._measure(project_id, path) for path in _claim_dirs(project_dir)]
        return sorted((claim for claim in found if claim is not None), key=lambda c: c.name)

    def get(self, project_id: str, name: str) -> Claim | None:
        """The claim, its usage measured now; None when the project has none of that name."""
        path = self._existing(project_id, name)
        return None if path is None else self._measure(project_id, path)

    def exists(self, project_id: str, name: str) -> bool:
        """Whether the project has the claim (without measuring it)."""
        return self._kept(project_id, name) is not None

    def delete(self, project_id: str, name: str) -> bool:
        """Remove the claim and everything in it; False when there is no such claim. The claim
        is gone at once (renamed to a hidden name), then its files are removed."""
        path = self._kept(project_id, name)
        if path is None:
            return False
        doomed = path.with_name(f"{DELETING_PREFIX}{name}-{uuid.uuid4().hex[:8]}")
        try:
            path.rename(doomed)
        except FileNotFoundError:
            return False  # deleted meanwhile
        _record_path(path).unlink(missing_ok=True)
        shutil.rmtree(doomed, ignore_errors=True)
        return True

    # --- helpers ------------------------------------------------------------------------

    def _project_dir(self, project_id: str) -> Path:
        """`<claims dir>/<project id>`; a hidden id (`.ephemeral`, where workloads' ephemeral
        claims are) or one that is not a single path component is refused."""
        if not _is_plain_name(project_id):
            raise ValueError(f"{project_id!r} cannot be a project's id")
        return self.claims_dir / project_id

    def _existing(self, project_id: str, name: str) -> Path | None:
        """The claim's directory; None when there is none (or no claim can have that name)."""
        if not _is_plain_name(name) or name.endswith(CLAIM_FILE):
            return None
        path = self._project_dir(project_id) / name
        return path if path.is_dir() and not path.is_symlink() else None

    def _kept(self, project_id: str, name: str) -> Path | None:
        """The directory of a claim of the project's own (not a workload's ephemeral one)."""
        path = self._existing(project_id, name)
        if path is None or _read_record(_record_path(path)).get("ephemeral") is True:
            return None
        return path

    def _measure(self, project_id: str, path: Path) -> Claim | None:
        """The claim at `path`; None when its record says it is ephemeral."""
        record = _read_record(_record_path(path))
        if record.get("ephemeral") is True:
            return None
        size = record.get("size")
        return Claim(
            name=path.name,
            project_id=project_id,
            size_bytes=size if isinstance(size, int) and not isinstance(size, bool) else None,
            used_bytes=disk_usage(path),
            created_at=_record_time(record) or _modified(_record_path(path), path),
        )


def disk_usage(root: Path) -> int:
    """What the contents of `root` take on disk, as `du` counts them: the blocks of every file
    and directory under it, a file with several links once, symbolic links not followed. The
    directory's own blocks are left out (an empty claim uses nothing), and so is whatever
    cannot be read."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for status in _statuses(root):
        key = (status.st_dev, status.st_ino)
        if key in seen:
            continue
        seen.add(key)
        total += status.st_blocks * BYTES_PER_BLOCK
    return total


def _statuses(root: Path) -> Iterator[os.stat_result]:
    """The status of everything under `root` (not of `root` itself)."""
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                yield entry.stat(follow_symlinks=False)
                if entry.is_dir(follow_symlinks=False):
                    pending.append(Path(entry.path))
            except OSError:
                continue


def _claim_dirs(project_dir: Path) -> Iterator[Path]:
    """The directories of a project's claims (hidden ones, such as a claim being deleted,
    left out)."""
    try:
        entries = list(os.scandir(project_dir))
    except FileNotFoundError:
        return
    for entry in entries:
        if _is_plain_name(entry.name) and entry.is_dir(follow_symlinks=False):
            yield Path(entry.path)


def _is_plain_name(name: str) -> bool:
    """One visible path component: not empty, no '/', not starting with '.'."""
    return bool(name) and "/" not in name and "\0" not in name and not name.startswith(".")


def _record_path(claim_dir: Path) -> Path:
    return claim_dir.with_name(f"{claim_dir.name}{CLAIM_FILE}")


def _read_record(path: Path) -> dict[str, Any]:
    """The claim's record; empty when there is none or it cannot be read."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _record_time(record: dict[str, Any]) -> datetime | None:
    text = record.get("createdAt")
    if not isinstance(text, str):
        return None
    try:
        return parse_moment(text)
    except ValueError:
        return None


def _modified(*paths: Path) -> datetime:
    """When the first of `paths` that exists was last written (a record is written once)."""
    for path in paths:
        try:
            return datetime.fromtimestamp(path.stat().st_mtime, UTC)
        except OSError:
            continue
    return datetime.fromtimestamp(0, UTC)


def _write_atomically(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}")
    partial.write_text(text)
    partial.replace(path)
