"""What the local runtime adds to a distributed launch and to a training's, side by side with
starting the same processes by hand (and the distributed one with torchrun); how fast DELETE
leaves no process behind; and lockstep's own memory with 50 small workloads running — in one
run.

1. Launch: a gloo all_reduce across 1 master + 3 workers (bench/ready_allreduce.py, which
   prints `ready <rank>` first, then runs examples/pytorch/allreduce.py), started
   - **direct**: four processes started here with the environment lockstep gives a pod;
   - **torchrun**: `torchrun --nnodes=1 --nproc-per-node=4` on the same script;
   - **lockstep**: POST /api/v1/workloads/distributed to a running `lockstep serve`;
   - **lockstep-quiet**: the same, polled every 250 ms instead of every 10 ms.
   For each: from start (for lockstep: just before the POST) to the last rank's `ready` line
   (direct and torchrun: when this script read it from the pipe; lockstep: the moment the
   pod log records), and to completion (all processes exited; lockstep: GET, polled every
   10 ms, shows phase Completed; lockstep-quiet: the workload's k8sPhaseUpdatedAt once it
   shows Completed). Repeated, interleaved, after one unrecorded warm-up each. Where
   lockstep's time goes is recorded too: when the POST was answered, when each pod was
   spawned (its state.json), when each exited (its exit file), and the CPU time lockstep's
   two processes used meanwhile.
2. Training launch: one process (TRAINING_CODE: prints `ready 0` first, then imports torch and
   fits a small linear model), started
   - **direct**: here, with the environment lockstep gives a training's pod;
   - **lockstep** and **lockstep-quiet**: POST /api/v1/workloads/trainings, completion seen as
     above (GET every 10 ms; every 250 ms, read from k8sPhaseUpdatedAt).
   Measured, repeated and recorded as the distributed launch is, against the same server.
3. DELETE → no process: 1 master + 3 workers that sleep, deleted once all four print that
   they run; measured until no process carrying any of their pods' LOCKSTEP_POD_UID remains.
   Once with pods that exit on SIGTERM, once with pods that ignore it (so the grace period,
   spec.terminationGracePeriodSeconds, runs out and they are killed).
4. Memory: 50 workloads of 1 master + 1 worker sleeping, all Running; the resident memory of
   lockstep's API process and of its reconciler process (the pods not counted), compared
   with a fresh server idle and with one such workload running.

    .venv/bin/python -m bench.launch [--repeats 5] [--deletes 3] [--grace 3] [--workloads 50]
        [--only distributed training delete memory] [--sandbox auto|off] [--baseline REF]

`--baseline REF` measures the lockstep of revision REF first, then this tree's, in one run.
`--sandbox off` starts lockstep with LOCKSTEP_SANDBOX=off (pods as plain process groups), to
tell what the pods' sandbox costs from what the rest of lockstep does.

Targets: lockstep's time to completion at most 1.15 times direct's for the distributed launch,
1.10 times for the training; DELETE → no process within the grace period + 1 s.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import re
import selectors
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from bench.harness import Server, free_port, revisions, server
from lockstep.runtimes.local.pod_launch import PASS_THROUGH
from lockstep.runtimes.local.processes import (
    POD_MARKER,
    is_alive,
    kill_marked,
    marked_processes,
    start_ticks,
)

WORLD = 4
RANK_SCRIPT = Path(__file__).resolve().parent / "ready_allreduce.py"
TORCHRUN = Path(sys.executable).parent / "torchrun"
POLL_SECONDS = 0.01
LAUNCHERS = ("direct", "torchrun", "lockstep", "lockstep-quiet")
TRAINING_LAUNCHERS = ("direct", "lockstep", "lockstep-quiet")
TRAINING_CODE = """\
import os
os.write(1, b"ready 0\\n")
import torch
os.write(1, b"imported torch\\n")
torch.manual_seed(0)
x = torch.randn(4096, 64)
y = x @ torch.randn(64, 1)
model = torch.nn.Linear(64, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for _ in range(300):
    optimizer.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
print(f"trained: loss {loss.item():.6f}", flush=True)
"""
"""The training: `ready 0` in one write the moment the interpreter runs it, `imported torch`
once torch is imported, then a small linear model fitted for 300 steps, the same work under
every launcher."""
IMPORTED = "imported torch"
PARTS = ("distributed", "training", "delete", "memory")
QUIET_POLL_SECONDS = 0.25
SLEEP = "import time; time.sleep(600)"
IGNORE_TERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ignoring SIGTERM', flush=True); time.sleep(600)"
)
OBEY_TERM = "print('sleeping', flush=True); import time; time.sleep(600)"
MOMENT = "%Y-%m-%dT%H:%M:%S.%fZ"

MARKERS: set[str] = set()
"""Every LOCKSTEP_POD_UID this run started or saw: whatever still carries one at the end is
killed."""


@dataclass
class Launch:
    """One launch: seconds from start to the last rank's `ready`, and to completion."""

    launcher: str
    first_line_s: float
    completed_s: float
    detail: dict[str, Any] = field(default_factory=dict)
    round: int = -1


def summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


def pod_environment() -> dict[str, str]:
    """What lockstep passes from its own environment to every pod (launch.py)."""
    env = {key: os.environ[key] for key in PASS_THROUGH if key in os.environ}
    return env | {key: value for key, value in os.environ.items() if key.startswith("LC_")}


def torch_environment(rank: int, port: int) -> dict[str, str]:
    """The variables lockstep's PyTorch wiring sets for rank `rank` of a fixed-size gang."""
    return {
        "PYTHONUNBUFFERED": "1",
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "PET_MASTER_ADDR": "127.0.0.1",
        "PET_MASTER_PORT": str(port),
        "WORLD_SIZE": str(WORLD),
        "RANK": str(rank),
        "PET_NODE_RANK": str(rank),
        "PET_NNODES": str(WORLD),
    }


def read_lines(
    streams: dict[int, subprocess.Popen[bytes]], on_line: Callable[[int, str, float], None]
) -> None:
    """Read every stream to its end, calling `on_line(key, line, monotonic moment)` as each
    line arrives."""
    selector = selectors.DefaultSelector()
    pending: dict[int, bytes] = {}
    for key, process in streams.items():
        assert process.stdout is not None
        os.set_blocking(process.stdout.fileno(), False)
        selector.register(process.stdout, selectors.EVENT_READ, key)
        pending[key] = b""
    try:
        while selector.get_map():
            events = selector.select(timeout=120)
            if not events:
                raise RuntimeError("the processes printed nothing and did not end for 120 s")
            for selected, _ in events:
                moment = time.monotonic()
                key = selected.data
                chunk = os.read(selected.fd, 65536)
                if not chunk:
                    selector.unregister(selected.fileobj)
                    continue
                *lines, pending[key] = (pending[key] + chunk).split(b"\n")
                for line in lines:
                    on_line(key, line.decode(errors="replace"), moment)
    finally:
        selector.close()


def finish(processes: list[subprocess.Popen[bytes]], marker: str) -> None:
    """Leave nothing running of a launch started here."""
    for process in processes:
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    kill_marked(marker)


def check_sums(output: list[str]) -> None:
    # Counted, not matched by line: under torchrun, ranks share a pipe and print in two writes.
    if "\n".join(output).count("sum 10, expected 10") != WORLD:
        raise RuntimeError("the all_reduce did not report on every rank:\n" + "\n".join(output))


def launch_direct(workdir: Path) -> Launch:
    """The floor: the four ranks started here, the way lockstep would start them, minus
    lockstep."""
    port = free_port()
    marker = f"bench-{uuid.uuid4()}"
    base = pod_environment() | {POD_MARKER: marker}
    ready: dict[int, float] = {}
    output: list[str] = []
    processes: list[subprocess.Popen[bytes]] = []
    spawned: list[float] = []
    start = time.monotonic()
    try:
        for rank in range(WORLD):
            env = base | torch_environment(rank, port) | {"HOSTNAME": f"direct-{rank}"}
            processes.append(
                subprocess.Popen(
                    [sys.executable, str(RANK_SCRIPT)],
                    env=env,
                    cwd=workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
            spawned.append(time.monotonic() - start)

        def on_line(rank: int, line: str, moment: float) -> None:
            ready.setdefault(rank, moment)
            output.append(line)

        read_lines(dict(enumerate(processes)), on_line)
        codes = [process.wait() for process in processes]
        completed = time.monotonic() - start
    finally:
        finish(processes, marker)
    if any(codes):
        raise RuntimeError(f"direct: exit codes {codes}:\n" + "\n".join(output))
    check_sums(output)
    return Launch(
        "direct",
        max(ready.values()) - start,
        completed,
        {"spawned_s": spawned, "ready_s": [ready[r] - start for r in range(WORLD)]},
    )


def check_trained(output: list[str]) -> None:
    if not any(line.startswith("trained: loss ") for line in output):
        raise RuntimeError("the training did not report its loss:\n" + "\n".join(output))


def launch_direct_training(workdir: Path) -> Launch:
    """The floor of a training: its one process started here, with the environment lockstep
    gives a training's pod (frameworks/single_pod.py), minus lockstep."""
    marker = f"bench-{uuid.uuid4()}"
    env = pod_environment() | {
        POD_MARKER: marker,
        "JOB_COMPLETION_INDEX": "0",
        "HOSTNAME": "direct-0",
    }
    ready: list[float] = []
    imported: list[float] = []
    output: list[str] = []
    start = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-c", TRAINING_CODE],
        env=env,
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    spawned = time.monotonic() - start
    try:

        def on_line(_: int, line: str, moment: float) -> None:
            if not ready:
                ready.append(moment)
            if line == IMPORTED:
                imported.append(moment - start)
            output.append(line)

        read_lines({0: process}, on_line)
        code = process.wait()
        completed = time.monotonic() - start
    finally:
        finish([process], marker)
    if code or not ready or output[0] != "ready 0":
        raise RuntimeError(f"direct training: exit code {code}:\n" + "\n".join(output))
    check_trained(output)
    first_line = ready[0] - start
    return Launch(
        "direct",
        first_line,
        completed,
        {"spawned_s": [spawned], "ready_s": [first_line], "imported_s": imported[0]},
    )


def launch_torchrun(workdir: Path) -> Launch:
    """torchrun on one node with four processes per node (its agent imports torch first)."""
    port = free_port()
    marker = f"bench-{uuid.uuid4()}"
    env = pod_environment() | {POD_MARKER: marker, "PYTHONUNBUFFERED": "1"}
    argv = [
        str(TORCHRUN),
        "--nnodes=1",
        f"--nproc-per-node={WORLD}",
        "--master-addr=127.0.0.1",
        f"--master-port={port}",
        str(RANK_SCRIPT),
    ]
    ready: dict[int, float] = {}
    output: list[str] = []
    start = time.monotonic()
    process = subprocess.Popen(
        argv,
        env=env,
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:

        def on_line(_: int, line: str, moment: float) -> None:
            for rank in re.findall(r"ready (\d+)", line):
                ready.setdefault(int(rank), moment)
            output.append(line)

        read_lines({0: process}, on_line)
        code = process.wait()
        completed = time.monotonic() - start
    finally:
        finish([process], marker)
    if code or len(ready) != WORLD:
        raise RuntimeError(f"torchrun: exit code {code}:\n" + "\n".join(output))
    check_sums(output)
    return Launch(
        "torchrun",
        max(ready.values()) - start,
        completed,
        {"ready_s": [ready[r] - start for r in range(WORLD)]},
    )


# --- lockstep ---------------------------------------------------------------------------


def api_client(running: Server) -> httpx.Client:
    return httpx.Client(
        base_url=running.url, headers={"Authorization": f"Bearer {running.token}"}, timeout=30
    )


def request(running: Server, name: str, *, workers: int, args: str, **spec: Any) -> dict[str, Any]:
    return {
        "name": name,
        "projectId": "1",
        "clusterId": running.cluster_id,
        "spec": {
            "image": "python:3.11",
            "distributedFramework": "PyTorch",
            "numWorkers": workers,
            "command": sys.executable,
            "args": args,
            **spec,
        },
    }


def training_request(running: Server, name: str) -> dict[str, Any]:
    return {
        "name": name,
        "projectId": "1",
        "clusterId": running.cluster_id,
        "spec": {
            "image": "python:3.11",
            "command": sys.executable,
            "args": "-c " + shlex.quote(TRAINING_CODE),
        },
    }


def create(client: httpx.Client, body: dict[str, Any], collection: str = "distributed") -> str:
    response = client.post(f"/api/v1/workloads/{collection}", json=body)
    response.raise_for_status()
    return str(response.json()["workloadId"])


@dataclass(frozen=True)
class Submission:
    """What a launch through lockstep submits, to which collection, which pod's exit
    completes it, and how its output is checked."""

    collection: str
    body: Callable[[Server, str], dict[str, Any]]
    completing_pod: Callable[[str], str]
    check: Callable[[list[str]], None]


DISTRIBUTED = Submission(
    "distributed",
    lambda running, name: request(
        running, name, workers=WORLD - 1, args=shlex.quote(str(RANK_SCRIPT))
    ),
    lambda name: f"{name}-master-0",
    check_sums,
)
TRAINING = Submission("trainings", training_request, lambda name: f"{name}-0", check_trained)


def phase(client: httpx.Client, workload_id: str) -> str:
    response = client.get(f"/api/v1/workloads/{workload_id}")
    response.raise_for_status()
    return str(response.json()["phase"])


def pod_states(running: Server, workload_id: str) -> dict[str, dict[str, Any]]:
    """The local runtime's state.json of each pod of the workload (uid, started_at, ...)."""
    states = {}
    for path in sorted((running.data_dir / "runtime" / "local" / workload_id).glob("*/state.json")):
        states[path.parent.name] = json.loads(path.read_text())
        MARKERS.add(states[path.parent.name]["uid"])
    return states


def exited(
    running: Server, workload_id: str, pod: str, state: dict[str, Any], *, timeout: float = 60
) -> float:
    """When the pod's wrapper recorded its exit status (wall clock), the last thing it does;
    waits for it (a workload completes with its master: a worker may still be ending)."""
    exit_file = (
        running.data_dir / "runtime" / "local" / workload_id / pod / f"exit-{state['attempt']}"
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            return exit_file.stat().st_mtime
        except FileNotFoundError:
            if time.monotonic() > deadline:
                raise
            time.sleep(POLL_SECONDS)


def timed_log(client: httpx.Client, workload_id: str, pod: str) -> list[tuple[float, str]]:
    """A pod's log lines, each with the wall-clock moment lockstep collected it."""
    response = client.get(f"/api/v1/workloads/{workload_id}/pods/{pod}/logs?timestamps=true")
    response.raise_for_status()
    lines = []
    for line in response.text.splitlines():
        moment, _, text = line.partition(" ")
        at = datetime.strptime(moment, MOMENT).replace(tzinfo=UTC).timestamp()
        lines.append((at, text))
    return lines


def delete_and_forget(
    client: httpx.Client, workload_id: str, collection: str = "distributed", *, timeout: float = 60
) -> None:
    """DELETE the workload and wait until lockstep no longer serves it."""
    client.delete(f"/api/v1/workloads/{collection}/{workload_id}").raise_for_status()
    deadline = time.monotonic() + timeout
    while client.get(f"/api/v1/workloads/{workload_id}").status_code != 404:
        if time.monotonic() > deadline:
            raise RuntimeError(f"workload {workload_id} was not deleted within {timeout} s")
        time.sleep(0.05)


def launch_lockstep(
    running: Server,
    client: httpx.Client,
    name: str,
    *,
    poll: float = POLL_SECONDS,
    submission: Submission = DISTRIBUTED,
) -> Launch:
    """Submitted through the API; done when GET, polled every `poll` seconds, shows Completed.
    Polled slowly, completion is read from the workload's k8sPhaseUpdatedAt instead (when the
    reconciler wrote Completed, to the millisecond), sparing the API most of the polling."""
    body = submission.body(running, name)
    api, reconciler = running.process.pid, reconciler_pid(running)
    cpu_before = cpu_seconds(api), cpu_seconds(reconciler)
    submitted = time.time()
    start = time.monotonic()
    workload_id = create(client, body, submission.collection)
    accepted = time.monotonic() - start
    deadline = start + 300
    while (current := phase(client, workload_id)) != "Completed":
        if current == "Failed" or time.monotonic() > deadline:
            raise RuntimeError(f"lockstep: workload {workload_id} is {current}")
        time.sleep(poll)
    completed = time.monotonic() - start
    if poll > POLL_SECONDS:
        written = client.get(f"/api/v1/workloads/{workload_id}").json()["k8sPhaseUpdatedAt"]
        completed = datetime.strptime(written, MOMENT).replace(tzinfo=UTC).timestamp() - submitted
    cpu = cpu_seconds(api) - cpu_before[0], cpu_seconds(reconciler) - cpu_before[1]
    states = pod_states(running, workload_id)
    ready: dict[str, float] = {}
    imported: list[float] = []
    output: list[str] = []
    for pod in states:
        lines = timed_log(client, workload_id, pod)
        if not lines or not lines[0][1].startswith("ready "):
            raise RuntimeError(f"lockstep: pod {pod} did not print `ready` first: {lines}")
        ready[pod] = lines[0][0] - submitted
        output += [text for _, text in lines]
        imported += [at - submitted for at, text in lines if text == IMPORTED]
    submission.check(output)
    detail: dict[str, Any] = {
        "api_cpu_s": cpu[0],
        "reconciler_cpu_s": cpu[1],
        "accepted_s": accepted,
        "spawned_s": {pod: state["started_at"] - submitted for pod, state in states.items()},
        "ready_s": ready,
        "exited_s": {
            pod: exited(running, workload_id, pod, state) - submitted
            for pod, state in states.items()
        },
    }
    detail["completing_pod_exited_s"] = detail["exited_s"][submission.completing_pod(name)]
    if imported:  # the training's own mark, after its import of torch
        detail["imported_s"] = imported[0]
    delete_and_forget(client, workload_id, submission.collection)
    launcher = "lockstep" if poll <= POLL_SECONDS else "lockstep-quiet"
    return Launch(launcher, max(ready.values()), completed, detail)


# --- DELETE -----------------------------------------------------------------------------


def pod_processes(uids: list[str]) -> dict[int, int]:
    """Every live process carrying one of the markers: pid → start ticks."""
    found = {}
    for uid in uids:
        for pid in marked_processes(uid):
            ticks = start_ticks(pid)
            if ticks is not None:
                found[pid] = ticks
    return found


def wait_until_printed(client: httpx.Client, workload_id: str, pods: int, timeout: float) -> None:
    """Until `pods` pods run and each has printed a line (so its signal handling is set)."""
    deadline = time.monotonic() + timeout
    while True:
        listed = client.get(f"/api/v1/workloads/{workload_id}/pods").json()["pods"]
        running = [p["name"] for p in listed if p["k8sPhase"] == "Running"]
        if len(running) == pods and all(timed_log(client, workload_id, pod) for pod in running):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the pods of {workload_id} did not all start: {listed}")
        time.sleep(0.05)


def delete_run(running: Server, client: httpx.Client, name: str, grace: int | None) -> float:
    """Seconds from DELETE until no process of the workload's four pods remains."""
    code = OBEY_TERM if grace is None else IGNORE_TERM
    spec = {} if grace is None else {"terminationGracePeriodSeconds": grace}
    body = request(running, name, workers=WORLD - 1, args="-c " + shlex.quote(code), **spec)
    workload_id = create(client, body)
    wait_until_printed(client, workload_id, WORLD, timeout=60)
    uids = [state["uid"] for state in pod_states(running, workload_id).values()]
    watched = pod_processes(uids)
    if len(watched) < WORLD:
        raise RuntimeError(f"expected at least {WORLD} pod processes, found {watched}")
    start = time.monotonic()
    client.delete(f"/api/v1/workloads/distributed/{workload_id}").raise_for_status()
    deadline = start + (grace or 0) + 60
    while any(is_alive(pid, ticks) for pid, ticks in watched.items()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"pods of {workload_id} still run 60 s past their grace period")
        time.sleep(0.005)
    gone = time.monotonic() - start
    if pod_processes(uids):
        raise RuntimeError(f"processes of {workload_id} outside its pods' groups remain")
    delete_and_forget(client, workload_id)
    return gone


# --- memory -----------------------------------------------------------------------------


def rss_kib(pid: int) -> tuple[int, int]:
    """Resident memory now and at its peak, in KiB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def cpu_seconds(pid: int) -> float:
    """CPU time the process itself has used so far (user + system)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


RECONCILER_MODULES = (b"lockstep.runtimes.local.controllers", b"lockstep.reconciler.controller")
"""Where the reconciler's child process runs, in this tree and (for `--baseline`) before the
runtimes became backends."""


def reconciler_pid(running: Server) -> int:
    """The server's child process that runs the reconciler and the local runtime."""
    for task in Path(f"/proc/{running.process.pid}/task").glob("*/children"):
        for child in task.read_text().split():
            with contextlib.suppress(OSError):
                command = Path(f"/proc/{child}/cmdline").read_bytes()
                if any(module in command for module in RECONCILER_MODULES):
                    return int(child)
    raise RuntimeError("the reconciler process was not found")


def lockstep_memory(running: Server) -> dict[str, float]:
    api = rss_kib(running.process.pid)
    reconciler = rss_kib(reconciler_pid(running))
    return {
        "api_rss_mib": api[0] / 1024,
        "api_peak_mib": api[1] / 1024,
        "reconciler_rss_mib": reconciler[0] / 1024,
        "reconciler_peak_mib": reconciler[1] / 1024,
        "total_rss_mib": (api[0] + reconciler[0]) / 1024,
    }


def small_workloads(running: Server, client: httpx.Client, names: range) -> list[str]:
    """Submit 1 master + 1 worker sleeping workloads, each pod asking for 0.01 CPU cores, and
    wait until every workload on the server is Running."""
    compute = {"cpuCoreRequest": 0.01}
    ids = [
        create(
            client,
            request(
                running, f"small-{i}", workers=1, args="-c " + shlex.quote(SLEEP), compute=compute
            ),
        )
        for i in names
    ]
    deadline = time.monotonic() + 300
    while (
        client.get("/api/v1/workloads/count?filterBy=phase==Running").json()["count"] < names.stop
    ):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the {names.stop} small workloads were not all Running in 300 s")
        time.sleep(0.2)
    return ids


def memory_run(running: Server, client: httpx.Client, count: int) -> dict[str, Any]:
    """lockstep's memory idle, with one small workload running, and with `count`."""
    idle = lockstep_memory(running)
    ids = small_workloads(running, client, range(1))
    time.sleep(2)  # let the passes that follow the last start settle
    one = lockstep_memory(running)
    start = time.monotonic()
    ids += small_workloads(running, client, range(1, count))
    all_running = time.monotonic() - start
    time.sleep(2)
    loaded = lockstep_memory(running)
    uids = [state["uid"] for i in ids for state in pod_states(running, i).values()]
    processes = len(pod_processes(uids))
    for workload_id in ids:
        client.delete(f"/api/v1/workloads/distributed/{workload_id}").raise_for_status()
    deadline = time.monotonic() + 120
    while client.get("/api/v1/workloads/count").json()["count"] or pod_processes(uids):
        if time.monotonic() > deadline:
            raise RuntimeError("the small workloads were not all deleted within 120 s")
        time.sleep(0.2)
    return {
        "workloads": count,
        "pods": len(uids),
        "pod_processes": processes,
        "all_running_s": all_running,
        "idle": idle,
        "one_running": one,
        "running": loaded,
    }


# --- the run ----------------------------------------------------------------------------


@contextlib.contextmanager
def leave_nothing(running: Server) -> Iterator[None]:
    """Pods outlive `lockstep serve`: kill whatever still carries a marker of this run (or of
    a pod still on disk) before the server goes."""
    try:
        yield
    finally:
        for path in (running.data_dir / "runtime" / "local").glob("*/*/state.json"):
            with contextlib.suppress(OSError, ValueError, KeyError):
                MARKERS.add(json.loads(path.read_text())["uid"])
        left = sum(kill_marked(uid) for uid in MARKERS)
        if left:
            print(f"killed {left} leftover pod processes", file=sys.stderr)


def launches(
    running: Server, repeats: int, *, training: bool = False
) -> tuple[list[Launch], list[Launch]]:
    """One unrecorded warm-up of each launcher, then `repeats` rounds in rotating order: of
    the distributed launch, or with `training` of the training's."""
    with (
        tempfile.TemporaryDirectory(prefix="lockstep-launch-") as scratch,
        api_client(running) as client,
    ):
        workdir = Path(scratch)
        submission = TRAINING if training else DISTRIBUTED
        run: dict[str, Callable[[str], Launch]] = {
            "direct": (
                (lambda _: launch_direct_training(workdir))
                if training
                else (lambda _: launch_direct(workdir))
            ),
            "torchrun": lambda _: launch_torchrun(workdir),
            "lockstep": lambda name: launch_lockstep(running, client, name, submission=submission),
            "lockstep-quiet": lambda name: launch_lockstep(
                running, client, f"{name}-q", poll=QUIET_POLL_SECONDS, submission=submission
            ),
        }
        launchers = TRAINING_LAUNCHERS if training else LAUNCHERS
        prefix = "train" if training else "launch"
        warmups = [run[launcher](f"warmup-{prefix}-{launcher}") for launcher in launchers]
        measured = []
        for round_ in range(repeats):
            turn = round_ % len(launchers)
            order = launchers[turn:] + launchers[:turn]
            for launcher in order:
                result = run[launcher](f"{prefix}-{round_}")
                result.round = round_
                measured.append(result)
                print(
                    f"  round {round_}: {launcher:14} ready {result.first_line_s:6.3f} s  "
                    f"completed {result.completed_s:6.3f} s",
                    flush=True,
                )
    return warmups, measured


def report_launches(
    measured: list[Launch], launchers: tuple[str, ...] = LAUNCHERS
) -> dict[str, Any]:
    """Print and return the launch figures: each launcher's times, their ratios to direct's
    (of the medians, and the median of each round's own ratio), and where lockstep's time
    goes."""
    table = {}
    for launcher in launchers:
        mine = [m for m in measured if m.launcher == launcher]
        table[launcher] = {
            "first_line_s": summary([m.first_line_s for m in mine]),
            "completed_s": summary([m.completed_s for m in mine]),
        }
    rounds: dict[int, dict[str, Launch]] = {}
    for m in measured:
        rounds.setdefault(m.round, {})[m.launcher] = m
    ratios = {}
    for launcher in launchers[1:]:
        ratios[f"{launcher}_over_direct"] = {
            f"{key}_{kind}": value
            for key in ("first_line_s", "completed_s")
            for kind, value in (
                ("of_medians", table[launcher][key]["median"] / table["direct"][key]["median"]),
                (
                    "median_of_rounds",
                    statistics.median(
                        getattr(r[launcher], key) / getattr(r["direct"], key)
                        for r in rounds.values()
                    ),
                ),
            )
        }
    print()
    print(f"{'launcher':14} {'ready median (min-max) s':>28} {'completed median (min-max) s':>32}")
    for launcher, row in table.items():
        ready, done = row["first_line_s"], row["completed_s"]
        print(
            f"{launcher:14} {ready['median']:12.3f} ({ready['min']:.3f}-{ready['max']:.3f})"
            f" {done['median']:14.3f} ({done['min']:.3f}-{done['max']:.3f})"
        )
    for name, ratio in ratios.items():
        print(f"{name}: " + ", ".join(f"{key} {value:.3f}" for key, value in ratio.items()))
    steps = {
        launcher: lockstep_steps([m for m in measured if m.launcher == launcher])
        for launcher in ("lockstep", "lockstep-quiet")
    }
    direct_spawned = statistics.median(
        max(m.detail["spawned_s"]) for m in measured if m.launcher == "direct"
    )
    print(f"direct: last rank spawned {direct_spawned:.3f} s (median)")
    direct_imported = [m.detail["imported_s"] for m in measured if "imported_s" in m.detail]
    if direct_imported:
        print(f"direct: torch imported {statistics.median(direct_imported):.3f} s (median)")
    for launcher, medians in steps.items():
        print(f"{launcher}, medians: " + ", ".join(f"{k} {v:.3f}" for k, v in medians.items()))
    return {
        "launch": table,
        "ratios": ratios,
        "direct_last_spawned_s": direct_spawned,
        "lockstep_steps": steps,
    }


def lockstep_steps(runs: list[Launch]) -> dict[str, float]:
    """Medians, in seconds after the POST was sent, of each step of lockstep's launches."""

    def step(of: Callable[[dict[str, Any]], float]) -> float:
        return statistics.median(of(run.detail) for run in runs)

    imported = [run.detail["imported_s"] for run in runs if "imported_s" in run.detail]
    return {
        "post_answered_s": step(lambda d: d["accepted_s"]),
        "first_pod_spawned_s": step(lambda d: min(d["spawned_s"].values())),
        "last_pod_spawned_s": step(lambda d: max(d["spawned_s"].values())),
        "last_ready_s": statistics.median(run.first_line_s for run in runs),
        **({"torch_imported_s": statistics.median(imported)} if imported else {}),
        "completing_pod_exited_s": step(lambda d: d["completing_pod_exited_s"]),
        "completed_seen_s": statistics.median(run.completed_s for run in runs),
        "all_pods_exited_s": step(lambda d: max(d["exited_s"].values())),
        "api_cpu_s": step(lambda d: d["api_cpu_s"]),
        "reconciler_cpu_s": step(lambda d: d["reconciler_cpu_s"]),
    }


def parsed_options() -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--deletes", type=int, default=3)
    parser.add_argument("--grace", type=int, default=3)
    parser.add_argument("--workloads", type=int, default=50)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=PARTS,
        default=list(PARTS),
        help="run only these parts (default: all of them)",
    )
    parser.add_argument(
        "--sandbox",
        choices=("auto", "off"),
        default="auto",
        help="LOCKSTEP_SANDBOX for the server (default: auto, pods in their sandbox)",
    )
    parser.add_argument(
        "--baseline", metavar="REF", help="also the lockstep of this revision, before this tree's"
    )
    return parser.parse_args()


def run_parts(options: argparse.Namespace, source: Path | None) -> dict[str, Any]:
    """The parts `options` asks for, measured on servers running the lockstep at `source`
    (the working tree's when None); what `report` prints."""
    parts = set(options.only)
    record: dict[str, Any] = {}
    # `--workloads` of 2 pods each, all in one project: no per-project pod limit.
    settings = {"LOCKSTEP_SANDBOX": options.sandbox, "LOCKSTEP_MAX_PODS_PER_PROJECT": "0"}
    if parts & {"distributed", "training", "delete"}:
        with server(None, settings=settings, source=source) as running, leave_nothing(running):
            if "distributed" in parts:
                print("launch: 1 master + 3 workers, gloo all_reduce")
                warmups, measured = launches(running, options.repeats)
                record |= {
                    "launches": [m.__dict__ for m in measured],
                    "warmups": [m.__dict__ for m in warmups],
                    "measured": measured,
                }
            if "training" in parts:
                print("training: one process, a linear model fitted")
                training_warmups, training = launches(running, options.repeats, training=True)
                record["training_runs"] = {
                    "launches": [m.__dict__ for m in training],
                    "warmups": [m.__dict__ for m in training_warmups],
                    "measured": training,
                }
            if "delete" in parts:
                with api_client(running) as client:
                    print("DELETE → no process")
                    obeying = [
                        delete_run(running, client, f"obey-{i}", None)
                        for i in range(options.deletes)
                    ]
                    ignoring = [
                        delete_run(running, client, f"ignore-{i}", options.grace)
                        for i in range(options.deletes)
                    ]
                record["delete_runs"] = {"sigterm": obeying, "ignores_sigterm": ignoring}
    if "memory" in parts:
        print(f"memory: {options.workloads} workloads of 1 master + 1 worker, sleeping")
        with (
            server(None, settings=settings, source=source) as running,
            leave_nothing(running),
            api_client(running) as client,
        ):
            record["memory"] = memory_run(running, client, options.workloads)
    return record


def report(options: argparse.Namespace, record: dict[str, Any]) -> None:
    """Print the figures of one `run_parts` and add them to its record."""
    parts = set(options.only)
    if "distributed" in parts:
        print("\nlaunch: 1 master + 3 workers")
        record |= report_launches(record.pop("measured"))
    if "training" in parts:
        print("\ntraining: one process")
        record["training"] = report_launches(
            record["training_runs"].pop("measured"), TRAINING_LAUNCHERS
        )
    if "delete" in parts:
        deletes = {
            "sigterm": summary(record["delete_runs"]["sigterm"]),
            f"ignores_sigterm_grace_{options.grace}s": summary(
                record["delete_runs"]["ignores_sigterm"]
            ),
        }
        for name, timing in deletes.items():
            spread = f"{timing['min']:.3f}-{timing['max']:.3f}"
            print(f"DELETE → no process ({name}): {timing['median']:.3f} s ({spread})")
        record["delete"] = deletes
    if "memory" in parts:
        moments = {
            "idle": "idle",
            "one_running": "1 running",
            "running": f"{options.workloads} running",
        }
        for moment, label in moments.items():
            mib = record["memory"][moment]
            print(
                f"memory, {label}: API {mib['api_rss_mib']:.1f} MiB"
                f" + reconciler {mib['reconciler_rss_mib']:.1f} MiB"
                f" = {mib['total_rss_mib']:.1f} MiB"
            )


def main() -> None:
    options = parsed_options()
    record: dict[str, Any] = {
        "machine": platform.node(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "options": vars(options),
        "load_average_before": os.getloadavg(),
    }
    with revisions(options.baseline) as sources:
        runs = {}
        for code, source in sources.items():
            if len(sources) > 1:
                print(f"=== measuring {code} ===")
            runs[code] = run_parts(options, source)
    for code, run in runs.items():
        if len(runs) > 1:
            print(f"\n=== {code} ===")
        report(options, run)
    record |= runs["current"] if len(runs) == 1 else {"revisions": runs}
    record["load_average_after"] = os.getloadavg()
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    written = out / f"launch-{int(time.time())}.json"
    written.write_text(json.dumps(record, indent=2))
    print(f"written to {written}")


if __name__ == "__main__":
    main()
