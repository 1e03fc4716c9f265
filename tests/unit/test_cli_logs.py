"""`logs --follow` and `submit --follow` of a workload with many pods follow at most
FOLLOWED_PODS of them at once, saying so, so that they stay within the log streams a server
gives one caller (LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER, 20 by default)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lockstep.cli.workloads import FOLLOWED_PODS, print_logs


class FakeClient:
    def __init__(self) -> None:
        self.followed: list[str] = []

    def logs(self, workload_id: str, pod: str, **query: Any) -> Iterator[str]:
        self.followed.append(pod)
        yield f"{pod} says hi\n"


def test_following_many_pods_follows_the_first_few_and_says_so(
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = FakeClient()
    pods = [f"big-worker-{n}" for n in range(40)]
    print_logs(
        client,  # type: ignore[arg-type]
        "id",
        pods,
        prefix=True,
        follow=True,
        tail=None,
        since=None,
        timestamps=False,
    )
    assert sorted(client.followed) == sorted(pods[:FOLLOWED_PODS])
    assert FOLLOWED_PODS <= 20
    captured = capsys.readouterr()
    assert f"the first {FOLLOWED_PODS} of 40 pods" in captured.err
    assert captured.out.count("says hi") == FOLLOWED_PODS


def test_reading_without_follow_reads_every_pod_in_turn() -> None:
    client = FakeClient()
    pods = [f"big-worker-{n}" for n in range(40)]
    print_logs(
        client,  # type: ignore[arg-type]
        "id",
        pods,
        prefix=True,
        follow=False,
        tail=None,
        since=None,
        timestamps=False,
    )
    assert client.followed == pods
