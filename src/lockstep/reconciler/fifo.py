"""The named pipe through which the API processes of one server (LOCKSTEP_API_PROCESSES) tell
its reconciler process which workloads changed: a line per workload id, in the data dir,
readable and writable by lockstep's user alone.

A line is shorter than the kernel's atomic pipe write (PIPE_BUF), so lines from several API
processes never interleave. The pipe outlives a restart of the reconciler: its successor opens
the same pipe and reads what was written meanwhile. A line written while no reconciler has the
pipe open is dropped, which is harmless: a reconciler looks at every live workload as it
starts.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 512
"""Far below PIPE_BUF (4096 on Linux): each write is atomic."""


def make_fifo(path: Path) -> None:
    """A new, empty pipe at `path` (whatever was there is replaced), mode 0600."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    os.mkfifo(path, 0o600)


def read_lines(path: Path, on_line: Callable[[str], None]) -> None:
    """Call `on_line` with each line written to the pipe, forever (a thread of its own). The
    pipe is opened for writing too, so that it never reads as ended when writers come and go."""
    descriptor = os.open(path, os.O_RDWR)
    if not stat.S_ISFIFO(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        raise RuntimeError(f"{path} is not a named pipe")
    with os.fdopen(descriptor, "rb") as pipe:
        for line in pipe:
            text = line.strip().decode(errors="replace")
            if text:
                on_line(text)


class FifoWriter:
    """An API process's end of the pipe, opened when first needed and again after the
    reconciler went away. Never blocks: a line that cannot be written now is dropped."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._descriptor: int | None = None
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        line = text.encode() + b"\n"
        if len(line) > MAX_LINE_BYTES:
            raise ValueError(f"a line of the pipe holds at most {MAX_LINE_BYTES} bytes")
        with self._lock:
            try:
                if self._descriptor is None:
                    self._descriptor = os.open(self._path, os.O_WRONLY | os.O_NONBLOCK)
                os.write(self._descriptor, line)
            except BlockingIOError:
                log.warning("the reconciler is behind; %s waits for its next resync", text)
            except OSError as error:
                # ENXIO: no reconciler has the pipe open; EPIPE: the one that had it is gone.
                if error.errno not in (errno.ENXIO, errno.EPIPE, errno.ENOENT):
                    log.warning("could not tell the reconciler that %s changed: %s", text, error)
                self._close()

    def _close(self) -> None:
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None

    def close(self) -> None:
        with self._lock:
            self._close()
