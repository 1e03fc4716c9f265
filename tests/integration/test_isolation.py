"""A pod is as contained as a container, tried as an attacker would: a real `lockstep serve`
running as root, a pod of project B holding a secret, and a pod of project A that tries every
way to it and to lockstep itself — other processes' environments, `/proc/<pid>/root`, signals,
lockstep's signing and sealing keys and database, files left on this machine's root — and gets
nothing, while B keeps running untouched."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from tests.conftest import running
from tests.support.api import ADMIN_SECRET, Api, poll
from tests.support.pods import pod_log
from tests.support.requests import distributed, python
from tests.support.server import LiveServer

ATTACK = """
import json, os, signal, sys
b_pid, api_pid = int(os.environ['B_PID']), int(os.environ['API_PID'])
data, database, escape = os.environ['DATA_DIR'], os.environ['DATABASE'], os.environ['ESCAPE']
needles = [os.environ['B_TOKEN_REVERSED'][::-1].encode(),
           os.environ['ADMIN_SECRET_REVERSED'][::-1].encode(),
           b'LOCKSTEP_BOOTSTRAP', b'LOCKSTEP_SETTINGS', b'LOCKSTEP_DATABASE_URL']
found = {}
def attempt(name, action):
    try:
        found[name] = ['ok', repr(action())[:200]]
    except Exception as error:
        found[name] = [type(error).__name__]
leaks = []
for pid in os.listdir('/proc'):
    if pid.isdigit():
        try:
            environ = open(f'/proc/{pid}/environ', 'rb').read()
        except OSError:
            continue
        leaks += [pid for needle in needles if needle in environ]
found['environments holding a secret'] = leaks
found['processes seen'] = len([p for p in os.listdir('/proc') if p.isdigit()])
attempt("B's environment", lambda: open(f'/proc/{b_pid}/environ', 'rb').read())
attempt("B's root", lambda: os.listdir(f'/proc/{b_pid}/root/'))
attempt("lockstep's environment", lambda: open(f'/proc/{api_pid}/environ', 'rb').read())
attempt("the key through lockstep's root",
        lambda: open(f'/proc/{api_pid}/root{data}/token-signing.key', 'rb').read())
attempt('the signing key', lambda: open(f'{data}/token-signing.key', 'rb').read())
attempt('the sealing key', lambda: open(f'{data}/secrets-sealing.key', 'rb').read())
attempt('the database', lambda: open(database, 'rb').read(16))
attempt("the data directory", lambda: sorted(os.listdir(data)))
attempt('signal B', lambda: os.kill(b_pid, signal.SIGKILL))
attempt('signal lockstep', lambda: os.kill(api_pid, 0))
attempt("write on this machine's root", lambda: open(escape, 'w').write('escaped'))
print(json.dumps(found))
"""


@pytest.fixture
def server(tmp_path: Path, sqlite_url: str) -> Iterator[LiveServer]:
    """lockstep as it runs in production here: root, SQLite outside its data directory."""
    assert os.geteuid() == 0, "lockstep must run as root for pods to take other identities"
    with running(LiveServer(tmp_path / "data", sqlite_url)) as live:
        yield live


def secret_holders(value: str, among: set[int] | None = None) -> list[int]:
    """This machine's processes (or those `among` them) whose environment holds `value`, seen
    from outside."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (among is None or int(entry.name) in among):
            try:
                if value.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def family(pid: int) -> set[int]:
    """`pid` and every process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = entry.read_text()
        except OSError:
            continue
        parent = int(text[text.rindex(")") + 2 :].split()[1])
        children.setdefault(parent, []).append(int(entry.parent.name))
    found, todo = set(), [pid]
    while todo:
        found.add(todo[-1])
        todo += children.get(todo.pop(), [])
    return found


def printed(api: Api, workload: dict[str, Any]) -> Any:
    lines = pod_log(api, workload["id"], f"{workload['name']}-master-0").splitlines()
    return json.loads(lines[-1])


def test_a_pod_reaches_nothing_of_another_projects_pods_nor_of_lockstep(
    server: LiveServer, tmp_path: Path, sqlite_url: str
) -> None:
    api = server.api()
    team_b = api.post(
        "/api/v1/org-unit/projects",
        json={"name": "team-b", "clusterId": api.cluster_id(), "resources": []},
    ).json()["id"]
    token = secrets.token_hex(16)
    holder = distributed(
        api.cluster_id(),
        name="holder",
        project_id=str(team_b),
        workers=1,
        args=python("import time\nprint('holding', flush=True)\ntime.sleep(600)"),
        environmentVariables=[{"name": "B_TOKEN", "value": token}],
    )
    held = api.create(holder)["workloadId"]
    api.wait_for(held, ["Running"], timeout=60)
    b_pids = poll(lambda: secret_holders(token) or None, timeout=30, what="B's processes")
    assert server.process is not None
    escape = Path("/etc") / f"lockstep-escaped-{secrets.token_hex(4)}"
    variables = {
        "B_PID": str(max(b_pids)),
        "API_PID": str(server.process.pid),
        "DATA_DIR": str(server.data_dir.resolve()),
        "DATABASE": sqlite_url.removeprefix("sqlite:///"),
        "ESCAPE": str(escape),
        "B_TOKEN_REVERSED": token[::-1],  # so that no environment holds them as they are
        "ADMIN_SECRET_REVERSED": ADMIN_SECRET[::-1],
    }
    attacker = distributed(
        api.cluster_id(),
        name="attacker",
        workers=1,
        args=python(ATTACK),
        environmentVariables=[{"name": k, "value": v} for k, v in variables.items()],
    )
    attacker["spec"]["backoffLimit"] = 0
    created = api.create(attacker)
    done = api.wait_for(created["workloadId"], ["Completed", "Failed"], timeout=90)
    assert done["phase"] == "Completed", done["phaseMessage"]
    found = printed(api, done)

    assert found.pop("environments holding a secret") == []
    assert 0 < found.pop("processes seen") < 20  # its own pid namespace: its own processes
    assert found.pop("the data directory")[0] in ("ok", "FileNotFoundError")
    assert found.pop("the database") == ["PermissionError"]
    assert found.pop("write on this machine's root")[0] == "ok"  # in the pod's own root
    assert found == {
        "B's environment": ["FileNotFoundError"],
        "B's root": ["FileNotFoundError"],
        "lockstep's environment": ["FileNotFoundError"],
        "the key through lockstep's root": ["FileNotFoundError"],
        "the signing key": ["FileNotFoundError"],
        "the sealing key": ["FileNotFoundError"],
        "signal B": ["ProcessLookupError"],
        "signal lockstep": ["ProcessLookupError"],
    }
    assert not escape.exists()
    assert api.workload(held)["phase"] == "Running"
    for pid in b_pids:
        os.kill(pid, 0)  # B's processes live on
    # without the key, a token the pod makes up is worth nothing
    forged = jwt.encode(
        {"sub": "admin", "roles": ["System administrator"]},
        "a-guess-at-the-key-that-the-pod-could-not-read",
        "HS256",
    )
    refused = httpx.get(
        f"{server.url}/api/v1/clusters", headers={"Authorization": f"Bearer {forged}"}
    )
    assert refused.status_code == 401


def test_a_pod_inherits_none_of_lockstep_s_own_variables(server: LiveServer) -> None:
    api = server.api()
    code = "import json, os\nprint(json.dumps(sorted(os.environ)))"
    body = distributed(api.cluster_id(), name="inherits", workers=1, args=python(code))
    created = api.create(body)
    done = api.wait_for(created["workloadId"], ["Completed", "Failed"], timeout=60)
    assert done["phase"] == "Completed", done["phaseMessage"]
    names = printed(api, done)
    assert [n for n in names if n.startswith("LOCKSTEP_")] == ["LOCKSTEP_POD_UID"]
    assert "PATH" in names
    # lockstep read its bootstrap secret once and wiped it: no process shows it any more
    assert server.process is not None
    lockstep = family(server.process.pid)
    assert len(lockstep) >= 2  # the server and its reconciler
    assert secret_holders(ADMIN_SECRET, among=lockstep) == []
