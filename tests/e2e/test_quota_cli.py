"""`lockstep project create|set-quota|delete`, `lockstep department …` and `lockstep
node-pool list` against a real `lockstep serve`."""

from __future__ import annotations

import sys

from tests.e2e.test_training_cli import Cli, cli
from tests.support.api import poll

__all__ = ["cli"]


def _project(cli: Cli, name: str) -> dict[str, object]:
    found = [p for p in cli.json("project", "list", "--json") if p["name"] == name]
    assert len(found) == 1, found
    return dict(found[0])


def test_projects_and_departments_with_quotas(cli: Cli) -> None:
    created = cli("department", "create", "research", "--gpu-deserved", "8", "--gpu-limit", "16")
    assert "department research created" in created.stdout
    listed = cli("department", "list").stdout
    assert "research" in listed and "default: 8" in listed
    cli(
        "project", "create", "vision", "--department", "research",
        "--gpu-deserved", "4", "--gpu-limit", "8", "--gpu-weight", "2",
        "--cpu-deserved", "2000", "--memory-deserved", "1000",
    )  # fmt: skip
    project = _project(cli, "vision")
    resources = project["resources"]
    assert resources == [
        {
            "nodePool": {"id": resources[0]["nodePool"]["id"], "name": "default"},  # type: ignore[index]
            "gpu": {"deserved": 4, "limit": 8, "overQuotaWeight": 2},
            "cpu": {"deserved": 2000},
            "memory": {"deserved": 1000, "units": "MB"},
        }
    ]
    cli("project", "set-quota", "vision", "--gpu-limit", "12")
    gpu = _project(cli, "vision")["resources"][0]["gpu"]  # type: ignore[index]
    assert gpu == {"deserved": 4, "limit": 12, "overQuotaWeight": 2}
    refused = cli("project", "set-quota", "vision", "--gpu-limit", "2", status=2)
    assert "at least deserved" in refused.stderr
    cli("department", "set-quota", "research", "--gpu-deserved", "10")
    departments = cli.json("department", "list", "-o", "json")
    research = next(d for d in departments if d["name"] == "research")
    assert research["resources"][0]["gpu"] == {"deserved": 10, "limit": 16}
    busy = cli("department", "delete", "research", status=1)
    assert "vision" in busy.stderr
    cli("project", "delete", "vision")
    assert all(p["name"] != "vision" for p in cli.json("project", "list", "--json"))
    cli("department", "delete", "research")
    assert "research" not in cli("department", "list").stdout


def test_node_pools_are_listed(cli: Cli) -> None:
    listed = cli("node-pool", "list").stdout
    assert "default" in listed
    pools = cli.json("node-pool", "list", "-o", "json")
    assert [p["name"] for p in pools] == ["default"]
    assert pools[0]["isDefault"] is True


def test_the_queue_and_why_a_workload_waits(cli: Cli) -> None:
    cli("project", "create", "capped", "--gpu-deserved", "0", "--cpu-deserved", "0",
        "--cpu-limit", "1000")  # fmt: skip
    for name in ("first", "second"):
        cli(
            "training", "pytorch", "submit", name, "-p", "capped", "-i", "x", "--workers", "1",
            "--cpu-core-request", "0.5", "--", sys.executable, "-c", "import time; time.sleep(600)",
        )  # fmt: skip

    def second_waits() -> str | None:
        shown = cli("training", "describe", "second", "-p", "capped").stdout
        return shown if "Reason:     OverLimit" in shown else None

    described = poll(second_waits, timeout=30, what="second waiting on its limit")
    assert "Queue:      1 in its project's queue" in described
    assert "project capped would pass its CPU limit" in described, described

    def shown_queue() -> str | None:
        shown = cli("queue", "-p", "capped").stdout
        return shown if " second " in shown else None

    table = poll(shown_queue, timeout=30, what="the queue of capped").splitlines()
    header = table[0].split()
    assert header[:3] == ["PROJECT", "POOL", "RESOURCE"], table
    cpu = next(line.split() for line in table if line.split()[2:3] == ["cpu"])
    # deserved 0, fair share, allocated 1 core (first), requested 2 cores — shown in cores
    assert cpu[:3] == ["capped", "default", "cpu"] and cpu[3] == "0" and cpu[5:7] == ["1", "2"]
    waiting = next(line for line in table if " second " in f" {line} ")
    assert waiting.split()[:4] == ["capped", "1", "second", "Pending"], waiting
    listed = cli.json("queue", "--json")
    assert {q["projectName"] for q in listed} >= {"capped", "default"}
