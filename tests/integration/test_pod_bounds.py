"""What a pod that asks for nothing may take of this machine (runtimes/local/pod_bounds.py),
driven past each bound by a real pod: a fork loop meets the pids limit, an allocation the
default memory limit, a file in /tmp the size of its /tmp, files in its root and its own
directory the disk limit. Each time the pod alone pays, and the server goes on answering."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lockstep.config import Settings
from tests.conftest import make_settings
from tests.support.api import Api
from tests.support.pods import printed, run_to_end
from tests.support.requests import distributed

MIB = 2**20


@pytest.fixture
def settings(tmp_path: Path, sqlite_url: str) -> Settings:
    """Bounds small enough to drive past in a test."""
    configured = make_settings(tmp_path / "data", sqlite_url)
    return configured.model_copy(
        update={
            "pod_pids_limit": 64,
            "pod_memory_limit": "160Mi",
            "pod_tmp_size": "16Mi",
            "pod_disk_limit": "48Mi",
            "pod_disk_check_seconds": 0.2,
        }
    )


def still_answering(api: Api) -> None:
    assert api.get("/readyz").status_code == 200
    assert api.get("/api/v1/workloads").status_code == 200


def test_a_fork_loop_meets_the_pids_limit(api: Api) -> None:
    code = (
        "import json, subprocess\n"
        "started, refused = [], 0\n"
        "for _ in range(200):\n"
        "    try:\n"
        "        started.append(subprocess.Popen(['sleep', '30']))\n"
        "    except OSError:\n"
        "        refused += 1\n"
        "for child in started:\n"
        "    child.kill()\n"
        "    child.wait()\n"
        "print(json.dumps([len(started), refused]), flush=True)\n"
    )
    done = run_to_end(api, "forks", code)
    assert done["phase"] == "Completed", done["phaseMessage"]
    started, refused = printed(api, done)
    assert 0 < started < 64 and started + refused == 200
    still_answering(api)


def test_a_pod_without_a_memory_limit_gets_the_default_one(api: Api) -> None:
    code = (
        "import time\n"
        "held = bytearray(400 * 2**20)\n"
        "held[::4096] = b'x' * len(held[::4096])\n"
        "time.sleep(60)\n"
    )
    done = run_to_end(api, "allocates", code)
    assert done["phase"] == "Failed"
    assert "OOMKilled" in done["phaseMessage"] and "160Mi" in done["phaseMessage"]
    still_answering(api)


def test_tmp_has_its_size_and_a_large_shm_the_memory_limit(api: Api) -> None:
    code = (
        "import json, os\n"
        "def size(path):\n"
        "    found = os.statvfs(path)\n"
        "    return found.f_blocks * found.f_frsize\n"
        "try:\n"
        "    with open('/tmp/big', 'wb') as big:\n"
        "        for _ in range(64):\n"
        "            big.write(b'x' * 2**20)\n"
        "    wrote = 'all of it'\n"
        "except OSError as error:\n"
        "    wrote = error.strerror\n"
        "print(json.dumps([size('/tmp'), size('/dev/shm'), wrote]), flush=True)\n"
    )
    done = run_to_end(api, "fills", code, compute={"largeShmRequest": True})
    assert done["phase"] == "Completed", done["phaseMessage"]
    tmp, shm, wrote = printed(api, done)
    assert (tmp, shm, wrote) == (16 * MIB, 160 * MIB, "No space left on device")
    still_answering(api)


@pytest.mark.parametrize("where", ["/var/lockstep-filler", "filler"])
def test_a_pod_writing_past_its_disk_limit_is_evicted(api: Api, where: str) -> None:
    """In its root (its copy-on-write layer) or in its own directory (its working directory):
    96 MiB against a limit of 48 MiB."""
    code = (
        "import os, time\n"
        f"with open({where!r}, 'wb') as filler:\n"
        "    for _ in range(96):\n"
        "        filler.write(os.urandom(2**20))\n"
        "    filler.flush()\n"
        "    os.fsync(filler.fileno())\n"
        "print('written', flush=True)\n"
        "time.sleep(60)\n"
    )
    done = run_to_end(api, "fills-disk", code)
    assert done["phase"] == "Failed"
    assert "Evicted" in done["phaseMessage"] and "48Mi" in done["phaseMessage"]
    still_answering(api)


def test_the_dry_run_shows_the_bounds_a_pod_gets(api: Api) -> None:
    body = distributed(api.cluster_id(), name="shown", workers=1)
    response = api.post("/api/v1/workloads/distributed", params={"dryRun": "true"}, json=body)
    assert response.status_code == 200, response.text
    pods = response.json()["pods"]
    assert {json.dumps(pod["limits"], sort_keys=True) for pod in pods} == {
        json.dumps(
            {"cpuCores": None, "diskBytes": 48 * MIB, "memoryBytes": 160 * MIB, "pids": 64},
            sort_keys=True,
        )
    }
    assert {pod["sandbox"]["tmpBytes"] for pod in pods} == {16 * MIB}
