"""The change stream, `GET /api/v1/workloads?watch=true`, against a real `lockstep serve` on
SQLite and on PostgreSQL: the list first, then each change as the reconciler (another process)
writes it, within the list's filter and the caller's projects; a bounded number of streams."""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import running
from tests.support.access import live_application
from tests.support.api import Api, poll
from tests.support.requests import sleeping
from tests.support.server import LiveServer

WAIT = 60.0


@dataclass(frozen=True, slots=True)
class Event:
    name: str
    data: dict[str, Any]


@dataclass
class Stream:
    """A change stream read on a thread of its own into `events`."""

    response: httpx.Response
    client: httpx.Client
    events: queue.Queue[Event] = field(default_factory=queue.Queue)
    seen: list[Event] = field(default_factory=list)
    thread: threading.Thread | None = None

    def start(self) -> Stream:
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        return self

    def _read(self) -> None:
        name, data = "message", ""
        try:
            for line in self.response.iter_lines():
                if line.startswith("event: "):
                    name = line.removeprefix("event: ")
                elif line.startswith("data: "):
                    data = line.removeprefix("data: ")
                elif line == "" and data:
                    self.events.put(Event(name, json.loads(data)))
                    name, data = "message", ""
        except (httpx.HTTPError, RuntimeError):
            pass  # closed by the test

    def next_matching(self, wanted: Any, what: str) -> Event:
        """The next event for which `wanted(event)` holds; every event read is kept in
        `seen`."""

        def check() -> Event | None:
            while True:
                try:
                    event = self.events.get_nowait()
                except queue.Empty:
                    return None
                self.seen.append(event)
                if wanted(event):
                    return event

        return poll(check, timeout=WAIT, what=lambda: f"{what}; saw {self.seen}")

    def close(self) -> None:
        self.response.close()
        self.client.close()
        if self.thread is not None:
            self.thread.join(timeout=WAIT)
            assert not self.thread.is_alive()


@pytest.fixture
def streams() -> Iterator[list[Stream]]:
    opened: list[Stream] = []
    yield opened
    for stream in opened:
        stream.close()


def open_stream(
    server: LiveServer, api: Api, streams: list[Stream], **params: Any
) -> httpx.Response | Stream:
    """A stream of the list with these parameters, or the refusal when one is refused."""
    client = httpx.Client(base_url=server.url, timeout=httpx.Timeout(30.0, read=None))
    request = client.build_request(
        "GET", "/api/v1/workloads", params={"watch": "true", **params}, headers=api.headers()
    )
    response = client.send(request, stream=True)
    if response.status_code != 200:
        response.read()
        client.close()
        return response
    assert response.headers["content-type"].startswith("text/event-stream")
    stream = Stream(response, client).start()
    streams.append(stream)
    return stream


def a_stream(server: LiveServer, api: Api, streams: list[Stream], **params: Any) -> Stream:
    opened = open_stream(server, api, streams, **params)
    assert isinstance(opened, Stream), opened.text
    return opened


def workload_event(workload_id: str, **item: Any) -> Any:
    def wanted(event: Event) -> bool:
        return (
            event.name == "workload"
            and event.data["id"] == workload_id
            and all(event.data.get(k) == v for k, v in item.items())
        )

    return wanted


def submit(api: Api, name: str, project_id: str = "1") -> str:
    body = sleeping(api.cluster_id(), name=name, project_id=project_id, workers=1)
    return str(api.create(body)["workloadId"])


def test_a_stream_shows_the_list_then_each_change_in_order(
    live_server_on_each_store: LiveServer, streams: list[Stream]
) -> None:
    server = live_server_on_each_store
    api = server.api()
    before = submit(api, "before")
    api.wait_for(before, ["Running"])
    stream = a_stream(server, api, streams)

    first = stream.next_matching(lambda e: e.name == "listed", "the end of the list")
    listed = [e.data for e in stream.seen if e.name == "workload"]
    assert [item["id"] for item in listed] == [before]
    assert first.data == {"count": 1}
    # Exactly the list's item, but for the seconds it has run meanwhile.
    running = "totalRunningTimeSeconds"
    item = api.get("/api/v1/workloads").json()["workloads"][0]
    assert 0 <= item[running] - listed[0][running] <= 5, (item, listed[0])
    assert {**listed[0], running: None} == {**item, running: None}

    created = submit(api, "after")
    shown = stream.next_matching(workload_event(created), "the new workload")
    running_event = workload_event(created, phase="Running", runningPods=2)
    if not running_event(shown):  # it may have started within one read of the feed
        stream.next_matching(running_event, "it running")
    assert api.post(f"/api/v1/workloads/distributed/{created}/suspend").status_code == 202
    stream.next_matching(workload_event(created, phase="Stopped"), "it stopped")
    history = api.get(f"/api/v1/workloads/{created}/history", params={"limit": 500})
    recorded = [
        r["spec"]["phaseUpdate"]["phase"]
        for r in history.json()["records"]
        if r["meta"]["type"] == "PhaseUpdate"
    ]
    assert api.delete(f"/api/v1/workloads/distributed/{created}").status_code == 202
    stream.next_matching(
        lambda e: e.name == "deleted" and e.data == {"id": created}, "its deletion"
    )

    phases = [
        e.data["phase"] for e in stream.seen if e.name == "workload" and e.data["id"] == created
    ]
    assert _in_order(phases[: phases.index("Stopped") + 1], recorded), (phases, recorded)
    assert all(e.data.get("id") != before for e in stream.seen[len(listed) + 1 :])


def _in_order(observed: list[str], recorded: list[str]) -> bool:
    """The phases observed, repeats merged, appear in the recorded history in that order."""
    merged = [p for i, p in enumerate(observed) if i == 0 or observed[i - 1] != p]
    remaining = iter(recorded)
    return all(any(p == r for r in remaining) for p in merged)


def test_a_stream_shows_only_what_its_filter_matches(
    live_server_on_each_store: LiveServer, streams: list[Stream]
) -> None:
    server = live_server_on_each_store
    api = server.api()
    stream = a_stream(server, api, streams, filterBy="name=@wanted")
    stream.next_matching(lambda e: e.name == "listed", "the (empty) list")
    other = submit(api, "other")
    api.wait_for(other, ["Running"])
    wanted = submit(api, "wanted")
    stream.next_matching(workload_event(wanted, phase="Running"), "the matching workload")
    assert api.delete(f"/api/v1/workloads/distributed/{other}").status_code == 202
    api.wait_gone(other)
    assert api.delete(f"/api/v1/workloads/distributed/{wanted}").status_code == 202
    stream.next_matching(lambda e: e.name == "deleted", "the matching workload's deletion")
    assert all(e.data.get("id") != other for e in stream.seen), stream.seen


def test_a_caller_sees_nothing_of_a_project_it_cannot_read(
    live_server_on_each_store: LiveServer, streams: list[Stream]
) -> None:
    server = live_server_on_each_store
    api = server.api()
    response = api.post(
        "/api/v1/org-unit/projects",
        json={"name": "hidden", "clusterId": api.cluster_id(), "resources": []},
    )
    assert response.status_code == 201, response.text
    hidden_project = str(response.json()["id"])
    viewer = live_application(server, "viewer-of-1", "Viewer", "project:1")
    stream = a_stream(server, viewer, streams)
    stream.next_matching(lambda e: e.name == "listed", "the (empty) list")

    hidden = submit(api, "hidden", hidden_project)
    api.wait_for(hidden, ["Running"])
    assert api.delete(f"/api/v1/workloads/distributed/{hidden}").status_code == 202
    api.wait_gone(hidden)
    visible = submit(api, "visible")
    stream.next_matching(workload_event(visible, phase="Running"), "the readable workload")
    assert all(e.data.get("id") != hidden for e in stream.seen), stream.seen
    viewer.client.close()


def _threads(server: LiveServer) -> int:
    assert server.process is not None
    return len(list(Path(f"/proc/{server.process.pid}/task").iterdir()))


@pytest.fixture
def two_streams_at_most(tmp_path: Path, database_url: str) -> Iterator[LiveServer]:
    settings = {"MAX_WATCH_STREAMS": "2"}
    with running(LiveServer(tmp_path / "data", database_url, settings=settings)) as server:
        yield server


def test_streams_are_bounded_and_leave_nothing_behind(
    two_streams_at_most: LiveServer, streams: list[Stream]
) -> None:
    server = two_streams_at_most
    api = server.api()
    api.get("/api/v1/workloads")
    threads_before = _threads(server)
    first = a_stream(server, api, streams)
    a_stream(server, api, streams)
    refused = open_stream(server, api, streams)
    assert isinstance(refused, httpx.Response)
    assert refused.status_code == 503
    body = refused.json()
    assert body["code"] == 503 and "2 change streams are open" in body["message"]

    first.close()
    streams.remove(first)

    def another() -> Stream | None:
        opened = open_stream(server, api, streams)
        return opened if isinstance(opened, Stream) else None

    replacement = poll(another, timeout=WAIT, what="a stream once one was closed")
    replacement.next_matching(lambda e: e.name == "listed", "its list")
    for stream in streams:
        stream.close()
    streams.clear()
    poll(
        lambda: True if _threads(server) <= threads_before else None,
        timeout=WAIT,
        what=lambda: f"the server's threads back to {threads_before}, not {_threads(server)}",
    )
    assert api.get("/api/v1/workloads").status_code == 200


@pytest.fixture
def shares_of_two(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """Two streams a caller, five in all."""
    settings = {"MAX_WATCH_STREAMS_PER_CALLER": "2", "MAX_WATCH_STREAMS": "5"}
    with running(LiveServer(tmp_path / "data", sqlite_url, settings=settings)) as server:
        yield server


def test_a_caller_past_its_share_is_refused_while_another_is_served(
    shares_of_two: LiveServer, streams: list[Stream]
) -> None:
    server = shares_of_two
    api = server.api()
    other = live_application(server, "viewer-of-1", "Viewer", "project:1")
    first = a_stream(server, api, streams)
    a_stream(server, api, streams)
    refused = open_stream(server, api, streams)
    assert isinstance(refused, httpx.Response)
    assert refused.status_code == 429, refused.text
    assert int(refused.headers["retry-after"]) >= 1
    body = refused.json()
    assert body["code"] == 429
    assert "2 change streams of this caller are open" in body["message"]
    assert "LOCKSTEP_MAX_WATCH_STREAMS_PER_CALLER" in body["message"]

    # The other caller is served, within its own share, and sees what happens.
    seen_by_other = a_stream(server, other, streams)
    seen_by_other.next_matching(lambda e: e.name == "listed", "the other caller's list")
    created = submit(api, "shared")
    seen_by_other.next_matching(workload_event(created), "the new workload")
    a_stream(server, other, streams)
    refused = open_stream(server, other, streams)
    assert isinstance(refused, httpx.Response)
    assert refused.status_code == 429

    # A stream that ends gives its caller's place back.
    first.close()
    streams.remove(first)

    def another() -> Stream | None:
        opened = open_stream(server, api, streams)
        return opened if isinstance(opened, Stream) else None

    poll(another, timeout=WAIT, what="a stream of the first caller once one was closed")
    other.client.close()
