"""A workload's network of its own (runtimes/local/network.py), with real pods: a default pod
reaches neither lockstep's API nor PostgreSQL nor Redis on this machine's loopback, its
workload's pods reach each other where the Kubeflow environment says, it downloads through
its outbound path from a test host (a network namespace this test makes, joined to this
machine by a veth pair: no address outside this machine), it reaches the loopback ports an
administrator allows and no other, and its ports are forwarded from this machine."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockstep.config import Settings
from tests.conftest import in_process, make_settings, running
from tests.support.api import Api, poll
from tests.support.pods import printed, run_to_end
from tests.support.requests import distributed, python
from tests.support.server import LiveServer

TRIES = (
    "import json, socket, sys\n"
    "def reach(host, port):\n"
    "    try:\n"
    "        socket.create_connection((host, port), timeout=2).close()\n"
    "        return 'reached'\n"
    "    except OSError as error:\n"
    "        return type(error).__name__\n"
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A port of this machine's loopback that accepts connections, as a service would."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield server.getsockname()[1]


def test_a_pod_reaches_no_service_on_this_machines_loopback(
    tmp_path: Path, sqlite_url: str, listener: int
) -> None:
    """Each port is open on this machine (the test checks) and shut to the pod."""
    with running(LiveServer(tmp_path / "data", sqlite_url)) as server:
        api = server.api()
        ports = {"lockstep": server.port, "postgresql": 5432, "redis": 6379, "a service": listener}
        for port in ports.values():
            socket.create_connection(("127.0.0.1", port), timeout=2).close()
        code = TRIES + (
            f"ports = {json.dumps(ports)}\n"
            "print(json.dumps({name: reach('127.0.0.1', port) for name, port in ports.items()}))\n"
        )
        done = run_to_end(api, "reaches", code)
        assert done["phase"] == "Completed", done["phaseMessage"]
        found = printed(api, done)
        assert set(found) == set(ports)
        assert "reached" not in found.values(), found


def test_the_pods_of_a_workload_reach_each_other(api: Api, settings: Settings) -> None:
    """The worker connects to its master at MASTER_ADDR:MASTER_PORT, as torchrun would."""
    code = (
        "import json, os, socket\n"
        "address = (os.environ['MASTER_ADDR'], int(os.environ['MASTER_PORT']))\n"
        "if os.environ['RANK'] == '0':\n"
        "    with socket.create_server(address) as server:\n"
        "        connection, _ = server.accept()\n"
        "        with connection:\n"
        "            connection.sendall(b'from the master')\n"
        "    print(json.dumps('served'), flush=True)\n"
        "else:\n"
        "    import time\n"
        "    deadline = time.monotonic() + 30\n"
        "    while True:\n"
        "        try:\n"
        "            with socket.create_connection(address, timeout=2) as peer:\n"
        "                print(json.dumps(peer.recv(100).decode()), flush=True)\n"
        "            break\n"
        "        except OSError:\n"
        "            if time.monotonic() > deadline:\n"
        "                raise\n"
        "            time.sleep(0.05)\n"
    )
    done = run_to_end(api, "peers", code)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == "served"
    assert printed(api, done, "worker-0") == "from the master"
    # Once no pod of it runs, the workload's network is gone, and its pasta with it.
    workload_dir = settings.runtime_dir / done["id"]
    poll(lambda: not (workload_dir / "netns").exists() or None, timeout=30, what="no network")
    assert not (workload_dir / "pasta.pid").exists()


@pytest.fixture
def test_host(tmp_path: Path) -> Iterator[tuple[str, bytes]]:
    """A host of the test's own: a network namespace joined to this machine by a veth pair
    (10.254.<n>.1 here, .2 there), serving a file over HTTP. Yields its URL and the file."""
    name = f"lockstep-{secrets.token_hex(3)}"
    subnet = f"10.254.{int.from_bytes(secrets.token_bytes(1), 'big')}"
    outside, inside = f"ls{name[-6:]}a", f"ls{name[-6:]}b"
    served = tmp_path / "served"
    served.mkdir()
    payload = os.urandom(256 * 1024)
    (served / "data.bin").write_bytes(payload)

    def ip(*arguments: str) -> None:
        subprocess.run(["ip", *arguments], check=True, capture_output=True)

    ip("netns", "add", name)
    server = None
    try:
        ip("link", "add", outside, "type", "veth", "peer", "name", inside)
        ip("link", "set", inside, "netns", name)
        ip("addr", "add", f"{subnet}.1/30", "dev", outside)
        ip("link", "set", outside, "up")
        ip("-n", name, "addr", "add", f"{subnet}.2/30", "dev", inside)
        ip("-n", name, "link", "set", inside, "up")
        ip("-n", name, "link", "set", "lo", "up")
        server = subprocess.Popen(
            ["ip", "netns", "exec", name, sys.executable, "-m", "http.server", "8000",
             "--bind", f"{subnet}.2", "--directory", str(served)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

        def serving() -> bool | None:
            try:
                socket.create_connection((f"{subnet}.2", 8000), timeout=1).close()
            except OSError:
                return None
            return True

        poll(serving, timeout=30, what="the test host's server")
        yield f"http://{subnet}.2:8000/data.bin", payload
    finally:
        if server is not None:
            server.kill()
            server.wait()
        subprocess.run(["ip", "link", "delete", outside], capture_output=True, check=False)
        subprocess.run(["ip", "netns", "delete", name], capture_output=True, check=False)


def test_a_pod_downloads_through_its_outbound_path_but_reaches_no_address_of_this_machine(
    api: Api, test_host: tuple[str, bytes]
) -> None:
    """The veth's end on this machine gives it an address of its own, at which a service of
    this machine listens: the pod downloads from the test host, and does not reach it."""
    url, payload = test_host
    own_address = url.split("//")[1].split(":")[0].rsplit(".", 1)[0] + ".1"
    with socket.socket() as service:
        service.bind(("0.0.0.0", 0))
        service.listen(16)
        port = service.getsockname()[1]
        socket.create_connection((own_address, port), timeout=2).close()
        code = TRIES + (
            "import hashlib, urllib.request\n"
            f"data = urllib.request.urlopen({url!r}, timeout=20).read()\n"
            "print(json.dumps([hashlib.sha256(data).hexdigest(), "
            f"reach({own_address!r}, {port})]))\n"
        )
        done = run_to_end(api, "downloads", code)
    assert done["phase"] == "Completed", done["phaseMessage"]
    digest, reached = printed(api, done)
    assert digest == hashlib.sha256(payload).hexdigest()
    assert reached != "reached"


@pytest.fixture
def allowing(tmp_path: Path, sqlite_url: str) -> Iterator[tuple[Api, int, int]]:
    """A server that lets pods reach one loopback port of this machine, and two listeners:
    that port, and another."""
    with socket.socket() as allowed, socket.socket() as other:
        for server in (allowed, other):
            server.bind(("127.0.0.1", 0))
            server.listen(16)
        allowed_port, other_port = allowed.getsockname()[1], other.getsockname()[1]
        settings = make_settings(tmp_path / "data", sqlite_url).model_copy(
            update={"pod_host_ports": [allowed_port]}
        )
        accepting = threading.Event()

        def accept() -> None:
            allowed.settimeout(60)
            accepting.set()
            try:
                connection, _ = allowed.accept()
                connection.close()
            except OSError:
                pass

        thread = threading.Thread(target=accept, daemon=True)
        thread.start()
        accepting.wait()
        with in_process(settings) as client:
            yield Api.login(client), allowed_port, other_port
        allowed.close()
        thread.join(timeout=5)


def test_a_pod_reaches_the_loopback_ports_an_administrator_allows_alone(
    allowing: tuple[Api, int, int],
) -> None:
    api, allowed, other = allowing
    code = TRIES + (
        f"print(json.dumps([reach('127.0.0.1', {allowed}), reach('127.0.0.1', {other})]))\n"
    )
    done = run_to_end(api, "allowed", code)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == ["reached", "ConnectionRefusedError"]


def test_pods_of_two_workloads_are_in_different_networks(api: Api) -> None:
    """Each pod's network namespace is its workload's: the same for a workload's two pods,
    another for another workload's running beside it, and never this machine's."""
    prints = "import os, time\nprint(os.readlink('/proc/self/ns/net'), flush=True)\n"
    first = api.create(
        distributed(
            api.cluster_id(), name="first", workers=1, args=python(prints + "time.sleep(600)")
        )
    )["workloadId"]

    def namespaces(workload_id: str, name: str) -> list[str] | None:
        """What each pod of the workload printed, once both have (None until then)."""
        found = []
        for pod in ("master-0", "worker-0"):
            logs = api.get(f"/api/v1/workloads/{workload_id}/pods/{name}-{pod}/logs")
            found.append(logs.text.strip() if logs.status_code == 200 else "")
        return found if all(found) else None

    running = poll(lambda: namespaces(first, "first"), timeout=60, what="the first's pods")
    done = run_to_end(api, "second", prints)
    assert done["phase"] == "Completed", done["phaseMessage"]
    beside = namespaces(done["id"], "second")
    assert beside is not None
    assert len(set(running)) == 1 and len(set(beside)) == 1  # a workload's pods share one
    assert running[0] != beside[0]
    assert str(Path("/proc/self/ns/net").readlink()) not in (running[0], beside[0])
    assert api.delete(f"/api/v1/workloads/distributed/{first}").status_code in (200, 202)
    api.wait_gone(first)
