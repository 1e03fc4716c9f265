"""The named pipe between a server's API processes and its reconciler (reconciler/fifo.py):
lines reach the reader whoever writes them, a writer never blocks or fails when there is no
reader, and a reader that comes later gets what is written from then on."""

from __future__ import annotations

import errno
import os
import queue
import stat
import threading
import time
from pathlib import Path

import pytest

from lockstep.reconciler.fifo import MAX_LINE_BYTES, FifoWriter, make_fifo, read_lines


def reader(path: Path) -> queue.Queue[str]:
    """A reader of the pipe on a thread of its own, each line put in the queue returned; once
    it has the pipe open (a writer's non-blocking open succeeds only then), since a line written
    before is dropped by design."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=read_lines, args=(path, lines.put), daemon=True).start()
    deadline = time.monotonic() + 10
    while True:
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
            return lines
        except OSError as error:
            if error.errno != errno.ENXIO or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


def test_the_pipe_is_new_and_private(tmp_path: Path) -> None:
    path = tmp_path / "notifications"
    path.write_text("left by a run before")
    make_fifo(path)
    mode = path.stat().st_mode
    assert stat.S_ISFIFO(mode)
    assert stat.S_IMODE(mode) == 0o600


def test_lines_of_every_writer_reach_the_reader_whole(tmp_path: Path) -> None:
    path = tmp_path / "notifications"
    make_fifo(path)
    lines = reader(path)
    writers = [FifoWriter(path) for _ in range(3)]
    sent = {f"workload-{index:04d}" for index in range(300)}
    threads = [
        threading.Thread(
            target=lambda w=writer, n=number: [
                w.write(text) for text in sorted(sent) if int(text[-4:]) % 3 == n
            ]
        )
        for number, writer in enumerate(writers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    received = {lines.get(timeout=10) for _ in sent}
    assert received == sent
    for writer in writers:
        writer.close()


def test_a_writer_without_a_reader_drops_the_line_and_reaches_the_next_reader(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notifications"
    make_fifo(path)
    writer = FifoWriter(path)
    writer.write("nobody-reads-this")  # no reader yet: dropped, without blocking or raising
    lines = reader(path)
    writer.write("first")
    assert lines.get(timeout=10) == "first"
    writer.close()


def test_a_line_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "notifications"
    make_fifo(path)
    with pytest.raises(ValueError, match=f"at most {MAX_LINE_BYTES} bytes"):
        FifoWriter(path).write("x" * MAX_LINE_BYTES)


def test_only_a_named_pipe_is_read(tmp_path: Path) -> None:
    path = tmp_path / "notifications"
    path.write_text("a plain file\n")
    with pytest.raises(RuntimeError, match="is not a named pipe"):
        read_lines(path, print)
