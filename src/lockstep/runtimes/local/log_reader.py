"""Pod logs, read: the lines a pod's log holds, chosen by tail and since, and followed as the
pod writes until it ends.

Runs in the API process and only reads what the runtime writes (see log_collector.py), so it
needs no runtime of its own. Moments sort as text, so `since` compares the stored prefix,
unparsed.

A reader costs a few pieces of `CHUNK_BYTES`, however long the log and however slowly its
client reads: the files are read a piece at a time and handed out as text of whole lines, one
piece per read, and the next piece is read only once the last one was taken (the response
takes the next piece only after the connection accepted the last). `tailLines` is found by
reading the files backwards, so it costs what it returns, not what the log holds.

A log file is opened without following a link and read only when it is a regular file: what
lies at a pod's log path is never trusted to be the log.
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import BinaryIO

from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.local.log_collector import parse, stamp
from lockstep.runtimes.local.state import PodFiles

FOLLOW_POLL_SECONDS = 0.1
CHUNK_BYTES = 16 * 1024
"""What one read takes of a log file, and about what one piece handed out holds."""
LONGEST_LINE = 64 * 1024
"""A line longer than this (the collector writes none: it cuts lines at 16 KiB) is handed out
in pieces of this size, each a line of its own."""

_STAMPED = re.compile(rb"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z ")
"""The moment the collector puts before each line (log_collector.py `stamp`), and a space."""
_STAMP_BYTES = len("2026-01-01T00:00:00.000000Z ")

_Source = tuple[BinaryIO, int]
"""A log file open for reading and its size when the read began."""


class LocalLogReader:
    def __init__(
        self,
        root: Path,
        *,
        poll_seconds: float = FOLLOW_POLL_SECONDS,
        chunk_bytes: int = CHUNK_BYTES,
    ) -> None:
        self._root = root.resolve()
        self._poll = poll_seconds
        self._chunk = chunk_bytes

    async def stream(self, workload_id: str, pod_name: str, query: LogQuery) -> AsyncIterator[str]:
        """The chosen lines, as text of whole lines each ending in a newline, a piece at a
        time; when following, then every line the pod prints until it has ended (or its
        workload is deleted)."""
        files = PodFiles(self._root / workload_id / pod_name)
        current, older = _open_both(files)
        handle = None if current is None else current[0]
        lines = _Lines(query)
        try:
            sources = [s for s in (older, current) if s is not None]
            chosen = self._start(sources, query)
            for index, (source, end) in enumerate(chosen):
                while end > (position := source.tell()):
                    data = source.read(min(self._chunk, end - position))
                    if not data:
                        break
                    if text := lines.add(data):
                        yield text
                last = index == len(chosen) - 1
                if (not last or not query.follow) and (text := lines.flush()):
                    yield text  # an older file ends with a whole line
            if not query.follow:
                return
            ended = False
            while True:
                data = b"" if handle is None else handle.read(self._chunk)
                if data:
                    if text := lines.add(data):
                        yield text
                    continue
                handle, renewed = _renewed(files, handle)
                if renewed:
                    continue
                if ended:  # what it printed before it ended has all been read
                    if text := lines.flush():
                        yield text
                    return
                ended = _has_ended(files)
                if not ended:
                    await asyncio.sleep(self._poll)
        finally:
            for opened in (handle, *(s[0] for s in (current, older) if s is not None)):
                if opened is not None:
                    opened.close()

    def _start(self, sources: list[_Source], query: LogQuery) -> list[_Source]:
        """The sources from where the chosen lines begin (each handle placed there)."""
        wanted = query.tail_lines
        if wanted is None:
            for handle, _ in sources:
                handle.seek(0)
            return sources
        if wanted == 0 or not sources:
            for handle, end in sources:
                handle.seek(end)
            return sources[-1:]
        floor = b"" if query.since is None else stamp(query.since).encode()
        found = 0
        for index in range(len(sources) - 1, -1, -1):
            handle, end = sources[index]
            for begin, prefix in _line_starts(handle, end, len(floor), self._chunk):
                if prefix >= floor:
                    found += 1
                    if found == wanted:
                        handle.seek(begin)
                        for later, _ in sources[index + 1 :]:
                            later.seek(0)
                        return sources[index:]
        for handle, _ in sources:
            handle.seek(0)
        return sources


class _Lines:
    """Bytes read, in order, as the text of the whole lines among them that the query keeps;
    what follows the last newline waits for the rest of its line."""

    def __init__(self, query: LogQuery) -> None:
        self._query = query
        self._floor = None if query.since is None else stamp(query.since).encode()
        self._pending = b""

    def add(self, data: bytes) -> str:
        data = self._pending + data
        cut = data.rfind(b"\n")
        lines = data[:cut].split(b"\n") if cut >= 0 else []
        self._pending = data[cut + 1 :]
        if len(self._pending) > LONGEST_LINE:
            whole = (len(self._pending) - 1) // LONGEST_LINE * LONGEST_LINE
            lines.append(self._pending[:whole])
            self._pending = self._pending[whole:]
        if any(len(line) > LONGEST_LINE for line in lines):
            lines = [
                line[start : start + LONGEST_LINE]
                for line in lines
                for start in range(0, max(len(line), 1), LONGEST_LINE)
            ]
        return self._text(lines)

    def flush(self) -> str:
        """The last line, though no newline ends it."""
        lines, self._pending = ([self._pending] if self._pending else []), b""
        return self._text(lines)

    def _text(self, lines: list[bytes]) -> str:
        floor = self._floor
        return "".join(
            self._render(line) for line in lines if floor is None or line[: len(floor)] >= floor
        )

    def _render(self, line: bytes) -> str:
        """The line as `parse` and `LogLine.render` would give it; a line stamped as the
        collector stamps it without parsing its moment (five times faster)."""
        timestamps = self._query.timestamps
        if _STAMPED.match(line):
            return (line if timestamps else line[_STAMP_BYTES:]).decode(errors="replace") + "\n"
        return parse(line.decode(errors="replace")).render(timestamps=timestamps) + "\n"


def _line_starts(handle: BinaryIO, end: int, width: int, chunk: int) -> Iterator[tuple[int, bytes]]:
    """Where each line of the file's first `end` bytes begins, with its first `width` bytes
    (less when the line is shorter), the last line first: read backwards, a chunk at a
    time."""
    position = end
    following = b""
    """The bytes at `position` and after, up to `width` of them."""
    while position > 0:
        start = max(0, position - chunk)
        handle.seek(start)
        block = handle.read(position - start)
        data = block + following
        index = len(block)
        while (index := block.rfind(b"\n", 0, index)) >= 0:
            begin = start + index + 1
            if begin < end:
                yield begin, data[index + 1 : index + 1 + width].split(b"\n", 1)[0]
        if start == 0:
            yield 0, data[:width].split(b"\n", 1)[0]
        following = data[:width]
        position = start


def _open(path: Path) -> BinaryIO | None:
    """The file at `path` when it is a regular file, not a link to one."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags)
    except OSError:  # absent, a link (ELOOP), or unreadable
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return os.fdopen(descriptor, "rb", buffering=0)


def _open_both(files: PodFiles) -> tuple[_Source | None, _Source | None]:
    """The current log and the one before, each with its size now. A rotation between the two
    opens makes the one opened first the older one."""
    current = _open(files.log)
    older = _open(files.rotated_log)
    if current is not None and older is not None and _same(current, older):
        older.close()
        older, current = current, _open(files.log)
    return _sized(current), _sized(older)


def _sized(handle: BinaryIO | None) -> _Source | None:
    return None if handle is None else (handle, os.fstat(handle.fileno()).st_size)


def _same(one: BinaryIO, other: BinaryIO) -> bool:
    first, second = os.fstat(one.fileno()), os.fstat(other.fileno())
    return (first.st_dev, first.st_ino) == (second.st_dev, second.st_ino)


def _renewed(files: PodFiles, handle: BinaryIO | None) -> tuple[BinaryIO | None, bool]:
    """Once `handle` is read to its end: the log to read on from, and whether it is another
    file than `handle` (the log was rotated, or created) — the old one is closed then."""
    try:
        found = files.log.lstat()
    except FileNotFoundError:
        return handle, False
    if handle is not None:
        mine = os.fstat(handle.fileno())
        if (found.st_dev, found.st_ino) == (mine.st_dev, mine.st_ino):
            return handle, False
    fresh = _open(files.log)
    if fresh is None:
        return handle, False
    if handle is not None:
        handle.close()
    return fresh, True


def _has_ended(files: PodFiles) -> bool:
    """Whether the pod's current attempt ended and its output is all in the log — or the pod
    is gone."""
    try:
        state = files.read_state()
    except FileNotFoundError:
        return True
    return state.swept or state.error is not None
