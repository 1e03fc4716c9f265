"""The change stream under load: `--streams` clients (200) hold `GET /api/v1/workloads?watch=true`
open while workloads are submitted one after another; for each submission, the time from its
request until each stream has received its item (an upper bound of the delivery, the commit
counted in), on SQLite and on PostgreSQL, in one run.

    .venv/bin/python -m bench.watch [--streams 200] [--changes 60] [--every 0.25]
        [--backends sqlite,postgresql] [--baseline REF]

Target on a 2-core machine: with 200 streams open, each change delivered within 100 ms (p99).

The streams are read by one asyncio process of plain sockets (a stream's bytes are searched for
the id of each workload still awaited), sharing the two cores with lockstep, so what it costs
to read them is counted in the figures. The submitted workloads ask for more CPU than the
machine has, so each is stored, scheduled and parked Pending and nothing runs.
`--baseline REF` also measures the lockstep of that git revision, one server after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

from bench.harness import Server, analyze, never_fitting, revisions, server, store

SEEDED = 50
"""Workloads listed by every stream when it opens."""


class Stream:
    """One open change stream, read from its socket; `awaited` maps what it has not yet
    received (a workload's `"name":"…"`) to the futures that are told when it does."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.awaited: dict[bytes, asyncio.Future[float]] = {}
        self.listed = asyncio.get_running_loop().create_future()
        self._tail = b""

    async def read(self) -> None:
        while chunk := await self.reader.read(65536):
            arrived = time.monotonic()
            text = self._tail + chunk
            if not self.listed.done() and b"event: listed" in text:
                self.listed.set_result(arrived)
            for key in [k for k in self.awaited if k in text]:
                future = self.awaited.pop(key)
                if not future.done():
                    future.set_result(arrived)
            self._tail = text[-64:]


async def open_stream(running: Server) -> Stream:
    address = urlsplit(running.url)
    reader, writer = await asyncio.open_connection(address.hostname, address.port)
    writer.write(
        b"GET /api/v1/workloads?watch=true HTTP/1.1\r\nHost: lockstep\r\n"
        b"Authorization: Bearer " + running.token.encode() + b"\r\n\r\n"
    )
    await writer.drain()
    return Stream(reader, writer)


async def measure(running: Server, options: argparse.Namespace) -> dict[str, float]:
    streams = [await open_stream(running) for _ in range(options.streams)]
    readers = [asyncio.create_task(s.read()) for s in streams]
    latencies: list[float] = []
    try:
        await asyncio.wait_for(asyncio.gather(*(s.listed for s in streams)), 60)
        async with httpx.AsyncClient(
            base_url=running.url, headers={"Authorization": f"Bearer {running.token}"}
        ) as client:
            for index in range(options.changes):
                name = f"w-{index}"
                loop = asyncio.get_running_loop()
                arrivals = []
                for stream in streams:  # awaited by name: the item may come before the 202
                    future: asyncio.Future[float] = loop.create_future()
                    stream.awaited[b'"name":"%s"' % name.encode()] = future
                    arrivals.append(future)
                started = time.monotonic()
                response = await client.post(
                    "/api/v1/workloads/trainings", json=never_fitting(running.cluster_id, name)
                )
                response.raise_for_status()
                done = await asyncio.wait_for(asyncio.gather(*arrivals), 30)
                latencies.extend(at - started for at in done)
                await asyncio.sleep(max(0.0, options.every - (time.monotonic() - started)))
    finally:
        for stream in streams:
            stream.writer.close()
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    ordered = sorted(latencies)
    return {
        "deliveries": len(ordered),
        "p50_ms": 1000 * statistics.median(ordered),
        "p99_ms": 1000 * ordered[int(0.99 * (len(ordered) - 1))],
        "max_ms": 1000 * ordered[-1],
    }


def run(backend: str, source: Path | None, options: argparse.Namespace) -> dict[str, float]:
    settings = {
        "LOCKSTEP_MAX_WATCH_STREAMS": str(options.streams + 10),
        "LOCKSTEP_MAX_WATCH_STREAMS_PER_CALLER": str(options.streams + 10),  # one caller opens all
    }
    with store(backend) as url, server(url, source=source, settings=settings) as running:
        for index in range(SEEDED):
            running.call(
                "POST",
                "/api/v1/workloads/trainings",
                never_fitting(running.cluster_id, f"s-{index}"),
            )
        analyze(url)
        return asyncio.run(measure(running, options))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--streams", type=int, default=200)
    parser.add_argument("--changes", type=int, default=60)
    parser.add_argument("--every", type=float, default=0.25, help="seconds between submissions")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--baseline", metavar="REF", help="also the lockstep of this revision")
    options = parser.parse_args()
    results: dict[str, dict[str, dict[str, float]]] = {}
    print(f"{'code':9} {'backend':11} {'deliveries':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}")
    with revisions(options.baseline) as sources:
        for backend in options.backends.split(","):
            for code, source in sources.items():
                found = run(backend, source, options)
                results.setdefault(code, {})[backend] = found
                print(
                    f"{code[:9]:9} {backend:11} {found['deliveries']:10.0f} {found['p50_ms']:8.1f}"
                    f" {found['p99_ms']:8.1f} {found['max_ms']:8.1f}",
                    flush=True,
                )
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    record = {"machine": platform.node(), "cpus": os.cpu_count(), "options": vars(options)}
    (out / f"watch-{int(time.time())}.json").write_text(
        json.dumps({**record, "results": results}, indent=2)
    )


if __name__ == "__main__":
    main()
