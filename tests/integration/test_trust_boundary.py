"""The trust boundary between the host and a pod, tried as an attacker would: a default pod
of a baseline project (root in its sandbox, with the capabilities a container keeps) edits
or swaps for symbolic links every file of lockstep's it can find — its launch plan, its log,
its exit status, its home — and its spec sets the variables that steer programs (`PATH`).
lockstep, which runs as root on the host, must trust, follow or run none of it: each test
checks the host file the attack aims at, and what the pod sees after a restart.

The pod looks for lockstep's files in its working directory and under the local runtime's
directory, where its own pod's directory is (`RUNTIME_ROOT`): everything it could reach."""

from __future__ import annotations

import functools
import json
import secrets
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import Settings
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.sandbox import host_paths
from lockstep.runtimes.local.sandbox.definition import Mount, SandboxSpec
from lockstep.runtimes.local.sandbox.probe import probe
from lockstep.runtimes.local.state import PodFiles, PodState
from tests.conftest import make_settings
from tests.support.api import Api, poll
from tests.support.pods import pod_log
from tests.support.requests import distributed, python

PLACES = (
    "import glob, json, os, sys\n"
    "root, me = os.environ['RUNTIME_ROOT'], os.environ['HOSTNAME']\n"
    "def places(name):\n"
    "    return [name, *glob.glob(f'{root}/*/{me}/{name}')]\n"
)
"""Where the pod looks for one of lockstep's files: its working directory, and its own
pod's directory under the runtime's."""


@pytest.fixture
def settings(tmp_path: Path, sqlite_url: str) -> Settings:
    """The host's side is what is tried: one store is enough."""
    return make_settings(tmp_path / "data", sqlite_url)


@pytest.fixture
def victim() -> Iterator[Path]:
    """A file of the host's that an attack aims at, outside every pod's reach."""
    directory = Path("/var/tmp") / f"lockstep-victim-{secrets.token_hex(4)}"
    directory.mkdir(mode=0o700)
    path = directory / "secret"
    path.write_text("the host's secret\n")
    yield path
    for leftover in directory.iterdir():
        leftover.unlink()
    directory.rmdir()


def attack(api: Api, settings: Settings, name: str, code: str, **spec: Any) -> dict[str, Any]:
    """A master and a worker running `code` (after `PLACES`), waited for until it ends."""
    variables = [
        {"name": "RUNTIME_ROOT", "value": str(settings.runtime_dir.resolve())},
        *spec.pop("environmentVariables", []),
    ]
    body = distributed(
        api.cluster_id(),
        name=name,
        workers=1,
        args=python(PLACES + code),
        environmentVariables=variables,
        **spec,
    )
    created = api.create(body)
    return api.wait_for(created["workloadId"], ["Completed", "Failed"], timeout=90)


def master_log(api: Api, workload: dict[str, Any]) -> list[str]:
    return pod_log(api, workload["id"], f"{workload['name']}-master-0").splitlines()


def test_a_launch_plan_the_pod_edits_is_not_what_its_restart_runs(
    api: Api, settings: Settings
) -> None:
    """The first run adds the host's root to its launch plan's mounts wherever it finds the
    plan, and fails; the run after the restart must not see the host's root."""
    code = (
        "if not os.path.exists('marker'):\n"
        "    open('marker', 'w').close()\n"
        "    edited = []\n"
        "    for path in places('launch.json'):\n"
        "        try:\n"
        "            plan = json.load(open(path))\n"
        "            plan['sandbox']['mounts'].append({'target': '/hostroot', 'kind': 'bind',\n"
        "                'source': '/', 'readOnly': True, 'sizeBytes': None})\n"
        "            plan['sandbox']['seccomp'] = False\n"
        "            json.dump(plan, open(path, 'w'))\n"
        "            edited.append(path)\n"
        "        except OSError:\n"
        "            pass\n"
        "    print(json.dumps({'edited': edited}), flush=True)\n"
        "    sys.exit(1)\n"
        "print(json.dumps({'host root': os.path.exists('/hostroot')}), flush=True)\n"
    )
    done = attack(api, settings, "edits-launch", code, backoffLimit=4)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert [json.loads(line) for line in master_log(api, done)] == [
        {"edited": []},
        {"host root": False},
    ]
    stored = PodFiles(settings.runtime_dir / done["id"] / "edits-launch-master-0")
    plan = json.loads(stored.launch.read_text())
    assert "/hostroot" not in [mount["target"] for mount in plan["sandbox"]["mounts"]]
    assert plan["sandbox"]["seccomp"] is True


def test_a_log_the_pod_swaps_for_a_link_is_neither_followed_nor_served(
    api: Api, settings: Settings, victim: Path
) -> None:
    code = (
        "for path in places('log'):\n"
        "    try:\n"
        "        os.symlink(os.environ['VICTIM'], path + '.sym')\n"
        "        os.replace(path + '.sym', path)\n"
        "    except OSError:\n"
        "        pass\n"
        "print('after the swap', flush=True)\n"
    )
    variables = [{"name": "VICTIM", "value": str(victim)}]
    done = attack(api, settings, "swaps-log", code, environmentVariables=variables)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert master_log(api, done) == ["after the swap"]  # its own lines, nothing of the host's
    assert victim.read_text() == "the host's secret\n"
    stored = PodFiles(settings.runtime_dir / done["id"] / "swaps-log-master-0")
    assert not stored.log.is_symlink()


def test_an_exit_status_file_the_pod_swaps_for_a_link_is_never_written_through(
    api: Api, settings: Settings, victim: Path
) -> None:
    code = (
        "for name in ('exit-0', 'exit-0.tmp'):\n"
        "    for path in places(name):\n"
        "        try:\n"
        "            os.symlink(os.environ['VICTIM'], path)\n"
        "        except OSError:\n"
        "            pass\n"
        "sys.exit(7)\n"
    )
    variables = [{"name": "VICTIM", "value": str(victim)}]
    done = attack(api, settings, "swaps-exit", code, environmentVariables=variables, backoffLimit=0)
    assert done["phase"] == "Failed"
    assert "exited with code 7" in done["phaseMessage"], done["phaseMessage"]
    assert victim.read_text() == "the host's secret\n"


def test_a_home_the_pod_swaps_for_a_link_is_not_what_its_restart_mounts(
    api: Api, settings: Settings, victim: Path
) -> None:
    """A pod with a home of its own, as uid 0 by its spec: the first run tries to put a link
    to a host directory where its home is, and fails; the restart must not mount the host's
    directory as its home."""
    code = (
        "home = os.environ['HOME']\n"
        "if not os.path.exists('marker'):\n"
        "    open('marker', 'w').close()\n"
        "    swapped = []\n"
        "    for path in [home, *places('home')]:\n"
        "        try:\n"
        "            os.rename(path, path + '.old')\n"
        "            os.symlink(os.path.dirname(os.environ['VICTIM']), path)\n"
        "            swapped.append(path)\n"
        "        except OSError:\n"
        "            pass\n"
        "    print(json.dumps({'swapped': swapped}), flush=True)\n"
        "    sys.exit(1)\n"
        "print(json.dumps({'home': sorted(os.listdir(home))}), flush=True)\n"
    )
    done = attack(
        api,
        settings,
        "swaps-home",
        code,
        backoffLimit=4,
        createHomeDir=True,
        security={"uidGidSource": "custom", "runAsUid": 0, "runAsGid": 0},
        environmentVariables=[{"name": "VICTIM", "value": str(victim)}],
    )
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert [json.loads(line) for line in master_log(api, done)] == [
        {"swapped": []},
        {"home": []},
    ]


def test_a_host_path_the_pod_swaps_for_a_link_is_not_what_its_restart_mounts(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    """A pod of a baseline project mounts a directory an administrator allowed writable
    (under /var/tmp here) and, at a second path, a directory in it. The first run puts a link
    to a directory outside what was allowed in place of the second, and fails; the restart
    must not mount where the link leads: the pod is refused, naming the hostPath. (Another
    workload that mounts the directory above could put the link there as well.)"""
    shared = tmp_path / "shared"
    (shared / "data").mkdir(parents=True)
    outside = Path("/opt") / f"lockstep-outside-{secrets.token_hex(4)}"
    outside.mkdir()
    (outside / "secret").write_text("the host's secret\n")
    try:
        code = (
            "if os.environ['RANK'] != '0':\n"
            "    sys.exit(0)  # the master alone\n"
            "if not os.path.exists('/scratch/data.old'):\n"
            "    os.rename('/scratch/data', '/scratch/data.old')\n"
            "    os.symlink(os.environ['OUTSIDE'], '/scratch/data')\n"
            "    print(json.dumps('swapped'), flush=True)\n"
            "    sys.exit(1)\n"
            "print(json.dumps(sorted(os.listdir('/data'))), flush=True)\n"
        )
        storage = {
            "hostPath": [
                {"path": str(shared), "mountPath": "/scratch", "readOnly": False},
                {
                    "path": str(shared / "data"),
                    "mountPath": "/data",
                    "readOnly": True,
                    # Not a private mount of its own, which would stand in the way of a rename.
                    "mountPropagation": "HostToContainer",
                },
            ]
        }
        done = attack(
            api,
            settings,
            "swaps-host-path",
            code,
            backoffLimit=2,
            storage=storage,
            environmentVariables=[{"name": "OUTSIDE", "value": str(outside)}],
        )
        assert done["phase"] == "Failed"
        assert "a symbolic link now stands where the hostPath was" in done["phaseMessage"]
        assert str(shared / "data") in done["phaseMessage"]
        assert master_log(api, done) == ['"swapped"']
        assert (outside / "secret").read_text() == "the host's secret\n"
    finally:
        (outside / "secret").unlink()
        outside.rmdir()


def started(files: PodFiles) -> PodState | None:
    state = files.read_state()
    return state if state.pid is not None else None


def test_the_specs_environment_reaches_the_pod_alone(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    """The spec's `PATH` names a directory with an `mv` of its own, and a variable of its
    own: the pod's command sees both, lockstep's processes around the sandbox (which run as
    root on the host) neither — the `mv` never runs."""
    tools = Path("/var/tmp") / f"lockstep-tools-{secrets.token_hex(4)}"
    tools.mkdir()
    ran = tools / "ran"
    (tools / "mv").write_text(f'#!/bin/sh\ntouch {ran}\nexec /bin/mv "$@"\n')
    (tools / "mv").chmod(0o755)
    try:
        code = (
            "print(json.dumps([os.environ['SPEC_ONLY'], os.environ['PATH']]), flush=True)\n"
            "import time\n"
            "deadline = time.monotonic() + 60\n"
            "while not os.path.exists('go') and time.monotonic() < deadline:\n"
            "    time.sleep(0.05)\n"
        )
        variables = [
            {"name": "PATH", "value": f"{tools}:/usr/bin:/bin"},
            {"name": "SPEC_ONLY", "value": "spec-value"},
        ]
        body_name = "steers"
        created = api.create(
            distributed(
                api.cluster_id(),
                name=body_name,
                workers=1,
                args=python(PLACES + code),
                environmentVariables=[
                    {"name": "RUNTIME_ROOT", "value": str(settings.runtime_dir.resolve())},
                    *variables,
                ],
            )
        )
        workload_id = created["workloadId"]
        api.wait_for(workload_id, ["Running"], timeout=60)
        pods = [
            PodFiles(settings.runtime_dir / workload_id / f"{body_name}-{pod}")
            for pod in ("master-0", "worker-0")
        ]

        def printed() -> list[str] | None:
            lines = pod_log(api, workload_id, f"{body_name}-master-0").splitlines()
            return lines or None

        seen = poll(printed, timeout=30, what="the master's line")
        assert json.loads(seen[0]) == ["spec-value", f"{tools}:/usr/bin:/bin"]
        for files in pods:
            state = poll(functools.partial(started, files), timeout=30, what="the pod's process")
            wrapper = Path(f"/proc/{state.pid}/environ").read_bytes().split(b"\0")
            assert b"SPEC_ONLY=spec-value" not in wrapper
            assert not any(v.startswith(b"PATH=") and str(tools).encode() in v for v in wrapper)
        for files in pods:
            (files.work / "go").touch()
        done = api.wait_for(workload_id, ["Completed", "Failed"], timeout=60)
        assert done["phase"] == "Completed", done["phaseMessage"]
        assert not ran.exists()
    finally:
        for leftover in tools.iterdir():
            leftover.unlink()
        tools.rmdir()


@pytest.mark.parametrize("private", [True, False], ids=["private", "host-to-container"])
def test_a_host_path_swapped_after_its_check_is_still_the_one_bound(
    tmp_path: Path, victim: Path, private: bool
) -> None:
    """The race the check before each start leaves: the hostPath is pinned (opened and checked),
    then swapped for a link to a directory of the host's before bwrap runs. bwrap binds the
    pinned directory, not where the link now leads (with a private mount first, or without)."""
    sandboxing = probe(try_layers=False)
    assert sandboxing.available, sandboxing.problem
    shared = tmp_path / "data"
    shared.mkdir()
    (shared / "mine").write_text("the pod's own\n")
    source = str(shared)
    spec = SandboxSpec(
        mounts=(Mount("/data", source=source, read_only=True),),
        private_sources=(source,) if private else (),
    )
    pinned = host_paths.pin(
        [source], private=spec.private_sources, staging=tmp_path / "staging", in_place=True
    )
    try:
        shared.rename(tmp_path / "data.old")
        shared.symlink_to(victim.parent)  # the swap, after the check
        line = sandboxing.command(spec, ["ls", "/data"], host_paths=pinned.host_paths)
        listed = subprocess.run(
            line,
            pass_fds=[descriptor for descriptor, _ in pinned.opened],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
    finally:
        host_paths.close(pinned.opened)
    assert listed.stdout.split() == ["mine"]


def test_a_host_path_that_is_a_link_is_not_pinned(tmp_path: Path, victim: Path) -> None:
    (tmp_path / "data").symlink_to(victim.parent)
    for source in (str(tmp_path / "data"), str(tmp_path / "data" / "secret")):
        with pytest.raises(PodStartError, match="a symbolic link now stands where the hostPath"):
            host_paths.pin([source], private=(), staging=tmp_path / "staging")
