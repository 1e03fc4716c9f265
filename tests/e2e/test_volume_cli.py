"""`lockstep volume create|list|delete` run as a user runs them (subprocesses) against a live
server: what they print (a table, JSON, YAML), the claim's directory they make and remove on the
server's machine, and the documented exit statuses — 2 usage, 3 not found, 4 not authorized,
1 for any other refusal (a name already taken)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from lockstep.domain.claims import readable
from lockstep.runtimes.local.volumes.claims import disk_usage
from tests.e2e.test_cli import lockstep
from tests.e2e.test_training_cli import Cli
from tests.support.api import ADMIN_ID, ADMIN_SECRET
from tests.support.server import LiveServer

MiB = 1024 * 1024


def logged_in(server: LiveServer, home: Path, client_id: str, secret: str) -> Cli:
    home.mkdir(parents=True, exist_ok=True)
    run = Cli(server, home)
    run("login", "--url", server.url, "--client-id", client_id, "--client-secret", secret)
    return run


@pytest.fixture
def cli(live_server: LiveServer, tmp_path: Path) -> Iterator[Cli]:
    yield logged_in(live_server, tmp_path / "admin", ADMIN_ID, ADMIN_SECRET)


def test_create_list_and_delete_a_volume(cli: Cli) -> None:
    claims = cli.server.data_dir / "claims" / "1"
    made = cli("volume", "create", "data", "-p", "1", "--size", "64Ki").stdout
    assert made.strip() == "volume data of 64Ki created in project 1"
    assert (claims / "data").is_dir()
    cli("volume", "create", "open", "-p", "1")
    lines = cli("volume", "list", "-p", "1").stdout.splitlines()
    assert [line.split() for line in lines] == [
        ["NAME", "SIZE", "USED", "STATUS"],
        ["data", "64Ki", "0", "Ready"],
        ["open", "-", "0", "Ready"],
    ]

    (claims / "data" / "weights.bin").write_bytes(os.urandom(MiB))
    used = readable(disk_usage(claims / "data"))
    rows = [line.split() for line in cli("volume", "list", "-p", "1").stdout.splitlines()]
    assert rows[1] == ["data", "64Ki", used, "OverSize"]
    listed = cli.json("volume", "list", "-p", "1", "--json")
    assert [c["name"] for c in listed] == ["data", "open"]
    assert listed[0]["size"] == "64Ki" and listed[0]["conditions"][0]["type"] == "OverSize"
    assert listed[0]["conditions"][0]["message"] == f"uses {used} of its 64Ki"
    assert yaml.safe_load(cli("volume", "list", "-p", "1", "-o", "yaml").stdout) == listed

    gone = cli("volume", "delete", "data", "-p", "1").stdout
    assert gone.strip() == "volume data deleted from project 1"
    assert not (claims / "data").exists()
    assert [c["name"] for c in cli.json("volume", "list", "-p", "1", "--json")] == ["open"]


def test_the_only_project_is_the_default_and_a_name_picks_one(cli: Cli) -> None:
    (project,) = cli.json("project", "list", "--json")
    cli("volume", "create", "data", "-p", str(project["name"]))
    assert [c["name"] for c in cli.json("volume", "list", "--json")] == ["data"]
    cli("volume", "delete", "data")
    assert cli.json("volume", "list", "--json") == []


def test_refusals_end_with_their_exit_status(cli: Cli, sqlite_url: str, tmp_path: Path) -> None:
    cli("volume", "create", "data", "-p", "1")
    taken = cli("volume", "create", "data", "-p", "1", status=1).stderr
    assert taken.strip() == "error: project 1 already has a claim named 'data' (HTTP 409)"
    bad_name = cli("volume", "create", "Bad_Name", "-p", "1", status=2).stderr
    assert bad_name.startswith("error: name: must be a DNS-1123 label")
    bad_size = cli("volume", "create", "ok", "-p", "1", "--size", "lots", status=2).stderr
    assert bad_size.startswith("error: size: must be a quantity of bytes such as 10Gi")
    missing = cli("volume", "delete", "nope", "-p", "1", status=3).stderr
    assert missing.strip() == "error: project 1 has no claim named 'nope'"
    unknown = cli("volume", "list", "-p", "7", status=3).stderr
    assert unknown.strip() == "error: no project '7' that you can see"
    cli("volume", "list", "--unknown-flag", status=2)

    store = ["--data-dir", str(cli.server.data_dir), "--database-url", sqlite_url]
    made = lockstep(
        "admin", "create-application", "watcher", "--role", "Viewer", "--scope", "project:1",
        *store,
    )  # fmt: skip
    secret = json.loads(made.stdout)["clientSecret"]
    viewer = logged_in(cli.server, tmp_path / "viewer", "watcher", secret)
    assert [c["name"] for c in viewer.json("volume", "list", "-p", "1", "--json")] == ["data"]
    refused = viewer("volume", "create", "mine", "-p", "1", status=4).stderr
    assert refused.strip() == "error: you may not create workloads in project 1"
    kept = viewer("volume", "delete", "data", "-p", "1", status=4).stderr
    assert kept.strip() == "error: you may not delete workloads in project 1"
    assert (cli.server.data_dir / "claims" / "1" / "data").is_dir()
    assert "Traceback" not in taken + bad_name + bad_size + missing + refused + kept
