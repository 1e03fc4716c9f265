"""`lockstep serve` configured by its flags, and `lockstep admin` managing departments,
projects, applications and access rules that a live server then enforces."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from tests.support.api import Api, poll
from tests.support.requests import distributed
from tests.support.server import free_port, kill_pods


def environment() -> dict[str, str]:
    """This test's environment without any LOCKSTEP_* setting: flags say everything."""
    return {k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_")}


def lockstep(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lockstep", *args],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=60,
        check=check,
    )


class Admin:
    """`lockstep admin` on one store."""

    def __init__(self, data_dir: Path, database_url: str) -> None:
        self.store = ["--data-dir", str(data_dir), "--database-url", database_url]

    def __call__(self, *args: str) -> Any:
        return json.loads(lockstep("admin", *args, *self.store).stdout or "null")


@contextmanager
def serve_with_flags(data_dir: Path, database_url: str) -> Iterator[httpx.Client]:
    port = free_port()
    flags = ["--host", "127.0.0.1", "--port", str(port), "--data-dir", str(data_dir)]
    with (data_dir.parent / "serve.log").open("wb") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "lockstep", "serve", *flags, "--database-url", database_url],
            env=environment(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        try:
            poll(lambda: _listening(client), timeout=30, what="lockstep to listen")
            yield client
        finally:
            client.close()
            server.terminate()
            server.wait(timeout=30)
            kill_pods(data_dir / "runtime" / "local")


def _listening(client: httpx.Client) -> bool | None:
    try:
        client.get("/api/v1/clusters")
    except httpx.TransportError:
        return None
    return True


def test_serve_flags_and_admin_commands(tmp_path: Path) -> None:
    data_dir, database = tmp_path / "data", tmp_path / "flags.db"
    admin = Admin(data_dir, f"sqlite:///{database}")
    with serve_with_flags(data_dir, f"sqlite:///{database}") as client:
        assert database.exists()
        credentials = json.loads((data_dir / "admin-credentials.json").read_text())
        root = Api.login(client, credentials["clientId"], credentials["clientSecret"])
        cluster = root.cluster_id()

        refused = lockstep("admin", "create-project", "Vision", *admin.store, check=False)
        assert refused.returncode == 1
        assert refused.stderr.startswith("error: name: must be a Kubernetes name"), refused.stderr
        department = admin("create-department", "research")
        project = admin("create-project", "vision", "--department", department["id"])
        assert project["departmentId"] == department["id"]
        assert project["podSecurityLevel"] == "baseline"
        locked = admin("create-project", "locked", "--pod-security", "restricted")
        assert locked["podSecurityLevel"] == "restricted"
        assert admin("set-pod-security", "locked", "privileged")["podSecurityLevel"] == "privileged"
        listed_projects = {p["name"]: p["podSecurityLevel"] for p in admin("list-projects")}
        assert listed_projects["locked"] == "privileged"
        scope = f"project:{project['id']}"
        alice = admin("create-application", "alice", "--role", "L1 researcher", "--scope", scope)
        assert set(alice) == {"clientId", "clientSecret", "accessRuleId"}

        researcher = Api.login(client, "alice", alice["clientSecret"])
        own = distributed(cluster, name="mine", project_id=project["id"])
        assert researcher.post("/api/v1/workloads/distributed", json=own).status_code == 202
        other = distributed(cluster, name="theirs")
        assert researcher.post("/api/v1/workloads/distributed", json=other).status_code == 403

        viewer = admin("grant", "alice", "--role", "Viewer", "--scope", "project:1")
        theirs = f"/api/v1/workloads/distributed/{root.create(other)['workloadId']}"
        assert researcher.get(theirs).status_code == 200
        rules = {(r["subject"], r["role"], r["scope"]) for r in admin("list-access-rules")}
        assert rules >= {("alice", "L1 researcher", scope), ("alice", "Viewer", "project:1")}
        admin("revoke", str(viewer["accessRuleId"]))
        assert researcher.get(theirs).status_code == 404  # answered as an unknown id

        listed = json.dumps(admin("list-applications"))
        assert "alice" in listed
        assert alice["clientSecret"] not in listed
        assert credentials["clientSecret"] not in listed


def test_admin_refuses_bad_input_with_usage_errors(tmp_path: Path) -> None:
    store = ["--data-dir", str(tmp_path / "data")]
    create = ["admin", "create-application"]
    bad_scope = lockstep(*create, "bob", "--scope", "galaxy:1", *store, check=False)
    assert bad_scope.returncode == 2
    assert "use system, cluster:<id>, department:<id> or project:<id>" in bad_scope.stderr
    bad_role = lockstep(*create, "carol", "--role", "Overlord", *store, check=False)
    assert bad_role.returncode == 2
    assert "the role must be" in bad_role.stderr
    assert "carol" not in lockstep("admin", "list-applications", *store).stdout
    grant = ["admin", "grant", "nobody", "--role", "Viewer", "--scope", "system"]
    unknown = lockstep(*grant, *store, check=False)
    assert unknown.returncode == 1
    assert "error: no application is named 'nobody'" in unknown.stderr
