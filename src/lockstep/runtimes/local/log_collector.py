"""Pod logs, written: every line a pod prints, time-stamped, capped and rotated.

Each pod writes its stdout and stderr into a named pipe in its directory, which it holds open
read-write, so it never gets SIGPIPE, even while nobody collects. A `LogCollector` thread reads
every pipe, stamps each line with the moment it arrived and appends it to the pod's `log`; past
`max_bytes` that file becomes `log.1` (replacing the one before), so a pod keeps at most twice
the cap. While lockstep restarts, a pipe holds up to a megabyte before the pod blocks on a
write; what a pod printed into its pipe and then ended before lockstep came back is lost.

On disk each line is `<moment> <text>`, the moment in RFC 3339 with microseconds and a Z.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import selectors
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from lockstep.runtimes.local.state import PodFiles

DEFAULT_MAX_BYTES = 10 * 1024 * 1024
_PIPE_BYTES = 1024 * 1024
_READ_BYTES = 65536
_LONGEST_LINE = 16 * 1024
"""A longer line is stored in pieces of this size, each a line of its own."""
_MOMENT = "%Y-%m-%dT%H:%M:%S.%fZ"


def stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(_MOMENT)


@dataclass(frozen=True, slots=True)
class LogLine:
    at: datetime
    text: str

    def render(self, *, timestamps: bool) -> str:
        return f"{stamp(self.at)} {self.text}" if timestamps else self.text


_EPOCH = datetime.fromtimestamp(0, UTC)


def parse(raw: str) -> LogLine:
    """A line as stored; one without a moment (written by hand) counts as very old."""
    moment, _, text = raw.partition(" ")
    try:
        at = datetime.strptime(moment, _MOMENT).replace(tzinfo=UTC)
    except ValueError:
        return LogLine(_EPOCH, raw)
    return LogLine(at, text)


def _identity(path: Path) -> tuple[int, int]:
    found = path.stat()
    return found.st_dev, found.st_ino


def make_pipe(files: PodFiles) -> Path:
    """The pod's output pipe, created if missing."""
    if not files.pipe.exists():
        os.mkfifo(files.pipe, 0o600)
    return files.pipe


@dataclass(slots=True)
class _Stream:
    files: PodFiles
    descriptor: int
    size: int
    pipe: tuple[int, int]
    """The pipe read (device, inode): a pod run again may have a new one at the same path."""
    pending: bytes = b""


class LogCollector:
    """One thread that collects the output of every pod of a runtime."""

    def __init__(
        self, *, max_bytes: int = DEFAULT_MAX_BYTES, clock: Callable[[], float] = time.time
    ) -> None:
        self._max_bytes = max_bytes
        self._clock = clock
        self._selector = selectors.DefaultSelector()
        self._streams: dict[Path, _Stream] = {}
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        self._selector.register(self._wake_read, selectors.EVENT_READ, None)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lockstep-logs", daemon=True)
        self._thread.start()

    def attach(self, files: PodFiles) -> None:
        """Collect what the pod in `files` prints (a no-op when already collecting its pipe;
        a stream still reading a pipe that was replaced — the pod runs again — is finished
        first, so that the new run's lines are read)."""
        with self._lock:
            if self._closed:
                return
            pipe = make_pipe(files)
            found = self._streams.get(files.directory)
            if found is not None:
                if found.pipe == _identity(pipe):
                    return
                self._finish(found)
            descriptor = os.open(pipe, os.O_RDWR | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
            with contextlib.suppress(OSError):
                fcntl.fcntl(descriptor, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            size = files.log.stat().st_size if files.log.exists() else 0
            stream = _Stream(files, descriptor, size, _identity(pipe))
            self._streams[files.directory] = stream
            self._selector.register(descriptor, selectors.EVENT_READ, stream)
        os.write(self._wake_write, b"x")

    def finish(self, files: PodFiles) -> None:
        """Every process of the pod has ended: store what is left in its pipe, including a last
        line without a newline, and stop collecting it."""
        with self._lock:
            stream = self._streams.get(files.directory)
            if stream is not None:
                self._finish(stream)

    def _finish(self, stream: _Stream) -> None:
        del self._streams[stream.files.directory]
        self._selector.unregister(stream.descriptor)
        self._drain(stream, final=True)
        os.close(stream.descriptor)

    def finish_under(self, directory: Path) -> None:
        """Stop collecting every pod under `directory` (a workload being deleted)."""
        with self._lock:
            chosen = [
                s.files for s in self._streams.values() if s.files.directory.parent == directory
            ]
        for files in chosen:
            self.finish(files)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            for stream in self._streams.values():
                self._selector.unregister(stream.descriptor)
                self._drain(stream, final=True)
                os.close(stream.descriptor)
            self._streams.clear()
        os.write(self._wake_write, b"x")
        self._thread.join(timeout=5)
        self._selector.close()
        os.close(self._wake_read)
        os.close(self._wake_write)

    def _run(self) -> None:
        while True:
            events = self._selector.select()
            with self._lock:
                if self._closed:
                    return
                for key, _ in events:
                    if key.data is None:
                        with contextlib.suppress(BlockingIOError):
                            os.read(self._wake_read, 4096)
                    elif key.data.files.directory in self._streams:
                        self._drain(key.data, final=False)

    def _drain(self, stream: _Stream, *, final: bool) -> None:
        chunks = [stream.pending]
        while True:
            try:
                chunk = os.read(stream.descriptor, _READ_BYTES)
            except BlockingIOError:
                break
            if not chunk:
                break
            chunks.append(chunk)
        data = b"".join(chunks)
        cut = data.rfind(b"\n")
        lines = data[:cut].split(b"\n") if cut >= 0 else []
        rest = data[cut + 1 :]
        while len(rest) > _LONGEST_LINE:
            lines.append(rest[:_LONGEST_LINE])
            rest = rest[_LONGEST_LINE:]
        if final and rest:
            lines.append(rest)
            rest = b""
        stream.pending = rest
        if lines:
            with contextlib.suppress(OSError):  # the workload is being deleted
                self._append(stream, lines)

    def _append(self, stream: _Stream, lines: list[bytes]) -> None:
        prefix = stamp(datetime.fromtimestamp(self._clock(), UTC)).encode() + b" "
        text = b"".join(prefix + line + b"\n" for line in lines)
        if stream.size and stream.size + len(text) > self._max_bytes:
            stream.files.log.replace(stream.files.rotated_log)
            stream.size = 0
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        with os.fdopen(os.open(stream.files.log, flags, 0o600), "ab") as log:
            log.write(text)
        stream.size += len(text)
