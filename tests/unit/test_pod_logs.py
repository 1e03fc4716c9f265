"""Pod logs on disk: the collector that stamps and rotates what pods print into their pipes,
and the reader that chooses lines by tail and since and follows a log until its pod ends."""

from __future__ import annotations

import asyncio
import os
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from lockstep.runtimes.base import LogQuery
from lockstep.runtimes.local.log_collector import LogCollector, make_pipe, parse, stamp
from lockstep.runtimes.local.log_reader import CHUNK_BYTES, LONGEST_LINE, LocalLogReader
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


async def collect(pieces: AsyncIterator[str]) -> list[str]:
    """The lines of the pieces a reader hands out, each piece whole lines."""
    text = "".join([piece async for piece in pieces])
    assert not text or text.endswith("\n")
    return text.splitlines(keepends=True)


def read(files: PodFiles, query: LogQuery, *, chunk_bytes: int = CHUNK_BYTES) -> list[str]:
    reader = LocalLogReader(files.directory.parent.parent, chunk_bytes=chunk_bytes)
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


def reference(texts: list[str], rotated: list[str], query: LogQuery) -> list[str]:
    """What a query chooses, as the whole log read at once would give it."""
    moments = [START + timedelta(seconds=n) for n in range(len(rotated) + len(texts))]
    lines = list(zip(moments, rotated + texts, strict=True))
    if query.since is not None:
        lines = [(at, text) for at, text in lines if at >= query.since]
    if query.tail_lines is not None:
        lines = lines[max(0, len(lines) - query.tail_lines) :]
    return [text + "\n" for _, text in lines]


@pytest.mark.parametrize("chunk_bytes", [7, 29, 64, 4096])
def test_tail_and_since_read_backwards_in_chunks_choose_what_a_whole_read_would(
    files: PodFiles, chunk_bytes: int
) -> None:
    """Lines shorter and longer than a chunk, empty ones among them, across both files."""
    rotated = [f"old {n} " + "x" * (n * 7 % 50) for n in range(12)] + [""]
    texts = ["", *(f"new {n} " + "y" * (n * 11 % 90) for n in range(15))]
    store(files, texts, rotated=tuple(rotated))
    total = len(rotated) + len(texts)
    for tail in (None, 0, 1, 2, 5, len(texts) - 1, len(texts), len(texts) + 3, total, total + 9):
        for since in (None, 0, 3, len(rotated), len(rotated) + 4, total, total + 5):
            query = LogQuery(
                tail_lines=tail,
                since=None if since is None else START + timedelta(seconds=since),
            )
            assert read(files, query, chunk_bytes=chunk_bytes) == reference(
                texts, rotated, query
            ), query


def test_a_last_line_without_a_newline_is_returned_and_followed_whole(
    files: PodFiles,
) -> None:
    files.log.write_text(f"{stamp(START)} whole\n{stamp(START)} half")
    assert read(files, LogQuery()) == ["whole\n", "half\n"]
    assert read(files, LogQuery(tail_lines=1)) == ["half\n"]
    finished(files, swept=False)
    reader = LocalLogReader(files.directory.parent.parent, poll_seconds=0.01)

    async def scenario() -> list[str]:
        stream = reader.stream(
            files.directory.parent.name, files.directory.name, LogQuery(follow=True)
        )
        seen = [await anext(stream)]
        with files.log.open("a") as log:
            log.write(" and the rest\n")
        seen.append(await anext(stream))
        finished(files, swept=True)
        return seen + [piece async for piece in stream]

    assert asyncio.run(scenario()) == ["whole\n", "half and the rest\n"]


def test_a_line_longer_than_the_longest_is_handed_out_in_pieces(files: PodFiles) -> None:
    long = "z" * (LONGEST_LINE * 2 + 5)
    files.log.write_text(f"{long}\nafter\n")
    assert read(files, LogQuery()) == [
        "z" * LONGEST_LINE + "\n",
        "z" * LONGEST_LINE + "\n",
        "zzzzz\n",
        "after\n",
    ]


def test_a_log_that_is_a_link_or_not_a_file_is_not_read(files: PodFiles, tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("the host's secret\n")
    files.log.symlink_to(secret)
    files.rotated_log.symlink_to(secret)
    assert read(files, LogQuery()) == []
    files.log.unlink()
    os.mkfifo(files.log)
    assert read(files, LogQuery(tail_lines=3)) == []


def big_log(files: PodFiles, *, lines: int) -> None:
    """`lines` short lines in each of the two files (about 64 bytes a line)."""
    line = f"{stamp(START)} " + "p" * 35 + "\n"
    files.rotated_log.write_text(line * lines)
    files.log.write_text(line * lines)


@pytest.mark.parametrize(
    "query",
    [LogQuery(), LogQuery(follow=True), LogQuery(tail_lines=10**9), LogQuery(timestamps=True)],
    ids=["whole", "follow", "tail", "timestamps"],
)
def test_a_reader_holds_a_piece_however_long_the_log(files: PodFiles, query: LogQuery) -> None:
    """8 MiB of log: taking the first piece, and then every piece one at a time, never holds
    more than a few pieces' worth (the reader of old read both files whole at once)."""
    big_log(files, lines=64 * 1024)
    finished(files, swept=True)
    reader = LocalLogReader(files.directory.parent.parent)

    async def scenario() -> tuple[int, int, int]:
        stream = reader.stream(files.directory.parent.name, files.directory.name, query)
        tracemalloc.start()
        try:
            first = await anext(stream)
            first_peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.reset_peak()
            read = len(first)
            async for piece in stream:
                read += len(piece)
            return first_peak, tracemalloc.get_traced_memory()[1], read
        finally:
            tracemalloc.stop()

    first_peak, peak, read = asyncio.run(scenario())
    assert read >= 2 * 64 * 1024 * 36  # every line was handed out
    assert first_peak < 8 * CHUNK_BYTES, first_peak
    assert peak < 8 * CHUNK_BYTES, peak


def test_each_line_reads_as_parse_renders_it(files: PodFiles) -> None:
    stored = [f"{stamp(START)} stamped", "no moment at all", f"{stamp(START)}without a space", ""]
    files.log.write_text("".join(f"{line}\n" for line in stored))
    for timestamps in (False, True):
        expected = [parse(line).render(timestamps=timestamps) + "\n" for line in stored]
        assert read(files, LogQuery(timestamps=timestamps)) == expected
