"""Pod logs, read: the lines a pod's log holds, chosen by tail and since, and followed as the
pod writes until it ends.

Runs in the API process and only reads what the runtime writes (see logs.py), so it needs no
runtime of its own. Moments sort as text, so `since` compares the stored prefix, unparsed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import BinaryIO

from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.local.log_collector import parse, stamp
from lockstep.runtimes.local.state import PodFiles

FOLLOW_POLL_SECONDS = 0.1


class LocalLogReader:
    def __init__(self, root: Path, *, poll_seconds: float = FOLLOW_POLL_SECONDS) -> None:
        self._root = root.resolve()
        self._poll = poll_seconds

    async def stream(self, workload_id: str, pod_name: str, query: LogQuery) -> AsyncIterator[str]:
        """The chosen lines, each ending in a newline; when following, then every line the pod
        prints until it has ended (or its workload is deleted)."""
        files = PodFiles(self._root / workload_id / pod_name)
        handle = _open(files.log)
        try:
            raw = _chosen(files, handle, query)
            for line in raw:
                yield _render(line, query)
            if not query.follow:
                return
            pending = b""
            while True:
                handle, data = _read_on(files, handle)
                data = pending + data
                cut = data.rfind(b"\n")
                pending = data[cut + 1 :]
                for line in data[:cut].split(b"\n") if cut >= 0 else []:
                    yield _render(line, query)
                if cut < 0 and _has_ended(files):
                    if pending:
                        yield _render(pending, query)
                    return
                if cut < 0:
                    await asyncio.sleep(self._poll)
        finally:
            if handle is not None:
                handle.close()


def _open(path: Path) -> BinaryIO | None:
    try:
        return path.open("rb")
    except FileNotFoundError:
        return None


def _chosen(files: PodFiles, handle: BinaryIO | None, query: LogQuery) -> list[bytes]:
    """The lines the query asks for from what the log holds now; `handle` is left at the end
    of what was read, where following goes on."""
    current = handle.read().splitlines() if handle is not None else []
    wanted = query.tail_lines
    older: list[bytes] = []
    if wanted is None or len(current) < wanted:
        with contextlib.suppress(FileNotFoundError):
            older = files.rotated_log.read_bytes().splitlines()
    lines = older + current
    if query.since is not None:
        floor = stamp(query.since).encode()
        lines = [line for line in lines if line[: len(floor)] >= floor]
    if wanted is not None:
        lines = lines[-wanted:] if wanted > 0 else []
    return lines


def _read_on(files: PodFiles, handle: BinaryIO | None) -> tuple[BinaryIO | None, bytes]:
    """What was appended since the last read, across a rotation: the rest of the old file
    (still open, though renamed), then the new one from its start."""
    if handle is None:
        handle = _open(files.log)
        return handle, handle.read() if handle is not None else b""
    data = handle.read()
    try:
        rotated = files.log.stat().st_ino != os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        rotated = False
    if rotated:
        handle.close()
        handle = _open(files.log)
        if handle is not None:
            data += handle.read()
    return handle, data


def _has_ended(files: PodFiles) -> bool:
    """Whether the pod's current attempt ended and its output is all in the log — or the pod
    is gone."""
    try:
        state = files.read_state()
    except FileNotFoundError:
        return True
    return state.swept or state.error is not None


def _render(raw: bytes, query: LogQuery) -> str:
    return parse(raw.decode(errors="replace")).render(timestamps=query.timestamps) + "\n"
