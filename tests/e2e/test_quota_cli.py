"""`lockstep project create|set-quota|delete`, `lockstep department …` and `lockstep
node-pool list` against a real `lockstep serve`."""

from __future__ import annotations

from tests.e2e.test_training_cli import Cli, cli

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
