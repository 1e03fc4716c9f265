"""Pod logs on disk: the collector that stamps and rotates what pods print into their pipes,
and the reader that chooses lines by tail and since and follows a log until its pod ends."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.local.log_collector import LogCollector, make_pipe, parse, stamp
from lockstep.runtimes.local.log_reader import LocalLogReader
from lockstep.runtimes.local.state import PodFiles, PodState
from tests.support.api import poll

START = datetime(2026, 11, 30, 12, 0, 0, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = START

    def __call__(self) -> float:
        return self.now.timestamp()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def files(tmp_path: Path) -> PodFiles:
    directory = tmp_path / "workload" / "train-master-0"
    directory.mkdir(parents=True)
    return PodFiles(directory)


@pytest.fixture
def collector(clock: Clock) -> Iterator[LogCollector]:
    logs = LogCollector(max_bytes=200, clock=clock)
    yield logs
    logs.close()


def write(files: PodFiles, data: bytes) -> None:
    """What a pod does: write into its pipe."""
    descriptor = os.open(make_pipe(files), os.O_WRONLY | os.O_NONBLOCK)
    try:
        os.write(descriptor, data)
    finally:
        os.close(descriptor)


def stored(files: PodFiles) -> list[str]:
    return files.log.read_text().splitlines() if files.log.exists() else []


def wait_for_lines(files: PodFiles, count: int) -> list[str]:
    return poll(
        lambda: stored(files) if len(stored(files)) >= count else None,
        timeout=10,
        what=f"{count} lines in the log",
    )


def test_each_complete_line_is_stored_with_the_moment_it_arrived(
    collector: LogCollector, files: PodFiles, clock: Clock
) -> None:
    collector.attach(files)
    write(files, b"first\nsecond\npart")
    assert wait_for_lines(files, 2) == [f"{stamp(START)} first", f"{stamp(START)} second"]
    clock.now = START + timedelta(seconds=5)
    write(files, b" of a line\n")
    lines = wait_for_lines(files, 3)
    assert lines[2] == f"{stamp(clock.now)} part of a line"


def test_a_pod_run_again_with_a_new_pipe_is_read_from_it(
    collector: LogCollector, files: PodFiles
) -> None:
    collector.attach(files)
    write(files, b"first run\n")
    wait_for_lines(files, 1)
    files.pipe.unlink()  # the pod is forgotten but for its log, and runs again
    collector.attach(files)
    write(files, b"second run\n")
    assert [parse(line).text for line in wait_for_lines(files, 2)] == ["first run", "second run"]


def test_finishing_stores_a_last_line_without_a_newline(
    collector: LogCollector, files: PodFiles
) -> None:
    collector.attach(files)
    write(files, b"done\nno newline at the end")
    collector.finish(files)
    assert [parse(line).text for line in stored(files)] == ["done", "no newline at the end"]


def test_a_line_longer_than_16_kib_is_stored_in_pieces(clock: Clock, files: PodFiles) -> None:
    logs = LogCollector(max_bytes=1 << 20, clock=clock)
    try:
        logs.attach(files)
        write(files, b"x" * (16 * 1024 * 2 + 10))
        logs.finish(files)
    finally:
        logs.close()
    assert [len(parse(line).text) for line in stored(files)] == [16 * 1024, 16 * 1024, 10]


def test_past_the_cap_the_log_rotates_keeping_one_older_file(
    collector: LogCollector, files: PodFiles
) -> None:
    collector.attach(files)
    for number in range(12):  # each stored line takes 36 bytes, against a cap of 200
        write(files, f"line {number:02}\n".encode())
        collector.finish(files)  # drains the pipe now
        collector.attach(files)
    newest = [parse(line).text for line in stored(files)]
    older = [parse(line).text for line in files.rotated_log.read_text().splitlines()]
    assert older == [f"line {n:02}" for n in range(5, 10)]
    assert newest == ["line 10", "line 11"]


def test_output_written_while_nobody_collected_is_stored_once_collection_starts(
    clock: Clock, files: PodFiles
) -> None:
    holder = os.open(make_pipe(files), os.O_RDWR)  # the pod keeps its pipe open
    try:
        os.write(holder, b"printed while lockstep restarted\n")
        logs = LogCollector(clock=clock)
        try:
            logs.attach(files)
            assert [parse(line).text for line in wait_for_lines(files, 1)] == [
                "printed while lockstep restarted"
            ]
        finally:
            logs.close()
    finally:
        os.close(holder)


# --- reading ------------------------------------------------------------------------------


def store(files: PodFiles, texts: list[str], *, rotated: tuple[str, ...] = ()) -> None:
    """A log whose n-th line was printed n seconds after START (rotated lines come first)."""
    moments = (START + timedelta(seconds=n) for n in range(len(rotated) + len(texts)))
    if rotated:
        files.rotated_log.write_text("".join(f"{stamp(next(moments))} {t}\n" for t in rotated))
    files.log.write_text("".join(f"{stamp(next(moments))} {t}\n" for t in texts))


def finished(files: PodFiles, *, swept: bool) -> None:
    files.write_state(
        PodState(uid="u", role="master", index=0, image="", created_at=0, swept=swept)
    )


async def collect(lines: AsyncIterator[str]) -> list[str]:
    return [line async for line in lines]


def read(files: PodFiles, query: LogQuery) -> list[str]:
    reader = LocalLogReader(files.directory.parent.parent)
    workload, pod = files.directory.parent.name, files.directory.name
    return asyncio.run(collect(reader.stream(workload, pod, query)))


def test_every_line_of_both_files_oldest_first(files: PodFiles) -> None:
    store(files, ["c", "d"], rotated=("a", "b"))
    assert read(files, LogQuery()) == ["a\n", "b\n", "c\n", "d\n"]


def test_tail_reaches_into_the_rotated_file_only_when_it_must(files: PodFiles) -> None:
    store(files, ["c", "d"], rotated=("a", "b"))
    assert read(files, LogQuery(tail_lines=1)) == ["d\n"]
    assert read(files, LogQuery(tail_lines=3)) == ["b\n", "c\n", "d\n"]
    assert read(files, LogQuery(tail_lines=0)) == []


def test_since_keeps_lines_printed_at_or_after_the_moment(files: PodFiles) -> None:
    store(files, ["c", "d"], rotated=("a", "b"))
    assert read(files, LogQuery(since=START + timedelta(seconds=2))) == ["c\n", "d\n"]
    assert read(files, LogQuery(since=START + timedelta(seconds=1), tail_lines=2)) == [
        "c\n",
        "d\n",
    ]


def test_timestamps_prefix_each_line_with_its_moment(files: PodFiles) -> None:
    store(files, ["a b c"])
    assert read(files, LogQuery(timestamps=True)) == [f"{stamp(START)} a b c\n"]


def test_a_pod_without_a_log_has_no_lines(files: PodFiles) -> None:
    assert read(files, LogQuery(follow=True)) == []  # and following a pod that is gone ends


def test_follow_streams_new_lines_across_a_rotation_until_the_pod_ended(
    files: PodFiles,
) -> None:
    store(files, ["before"])
    finished(files, swept=False)
    reader = LocalLogReader(files.directory.parent.parent, poll_seconds=0.01)

    async def scenario() -> list[str]:
        stream = reader.stream(
            files.directory.parent.name, files.directory.name, LogQuery(follow=True)
        )
        seen = [await anext(stream)]
        with files.log.open("a") as log:
            log.write(f"{stamp(START)} appended\n{stamp(START)} then rot")
        seen.append(await anext(stream))
        with files.log.open("a") as log:
            log.write("ated away\n")
        files.log.replace(files.rotated_log)
        files.log.write_text(f"{stamp(START)} in the new file\n{stamp(START)} last")
        seen += [await anext(stream), await anext(stream)]
        finished(files, swept=True)
        seen += [line async for line in stream]
        return seen

    assert asyncio.run(scenario()) == [
        "before\n",
        "appended\n",
        "then rotated away\n",
        "in the new file\n",
        "last\n",
    ]
