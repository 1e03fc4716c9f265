"""Check the TF_CONFIG of a TF distributed workload, then meet every other task over TCP.

Runs unchanged under lockstep's local runtime and under the Kubeflow TFJob operator, which both
set TF_CONFIG: `{"cluster": {type: ["host:port", ...]}, "task": {"type", "index"},
"environment": "cloud"}`. It needs no TensorFlow: it checks what TensorFlow's cluster resolver
relies on.

1. TF_CONFIG is well formed: every replica type maps to a non-empty list of distinct
   `host:port` addresses, this task's type and index name one of them, and the environment
   is "cloud".
2. This task listens on its own address from TF_CONFIG and answers every task that greets it
   with its own type and index.
3. It connects to every other task at the address TF_CONFIG gives for it (retrying until that
   task listens), sends its own type and index and checks that the answer names that task.
4. It stays up until every other task has greeted it, so no task exits before the others have
   reached it, and checks that each greeting came from a task of the cluster, once.

It prints one line naming the task and what it found, and exits 0 only when every check holds.

    submit with: distributedFramework "TF", command "python",
                 args "examples/tensorflow/check_cluster.py"
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

DEADLINE_SECONDS = 120.0
"""How long a task waits for the others, in all."""

Task = tuple[str, int]
"""A task's replica type and index."""


class ConfigError(Exception):
    """TF_CONFIG is missing or malformed."""


@dataclass(frozen=True)
class Cluster:
    me: Task
    addresses: dict[Task, tuple[str, int]]

    @property
    def others(self) -> dict[Task, tuple[str, int]]:
        return {task: address for task, address in self.addresses.items() if task != self.me}


def split_address(address: object) -> tuple[str, int]:
    if not isinstance(address, str) or address.count(":") != 1:
        raise ConfigError(f"{address!r} is not host:port")
    host, port = address.split(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ConfigError(f"{address!r} is not host:port")
    return host, int(port)


def parse(raw: str | None) -> Cluster:
    """The cluster TF_CONFIG describes; ConfigError when it is not well formed."""
    if not raw:
        raise ConfigError("TF_CONFIG is not set")
    config: Any = json.loads(raw)
    if not isinstance(config, dict) or set(config) != {"cluster", "task", "environment"}:
        raise ConfigError(f"TF_CONFIG has keys {sorted(config)}, not cluster, task, environment")
    if config["environment"] != "cloud":
        raise ConfigError(f"environment is {config['environment']!r}, not 'cloud'")
    cluster, task = config["cluster"], config["task"]
    if not isinstance(cluster, dict) or not cluster:
        raise ConfigError("cluster is not a non-empty object")
    addresses: dict[Task, tuple[str, int]] = {}
    for kind, members in cluster.items():
        if kind != kind.lower() or not isinstance(members, list) or not members:
            raise ConfigError(f"cluster[{kind!r}] is not a non-empty list of a lower-case type")
        for index, address in enumerate(members):
            addresses[(kind, index)] = split_address(address)
    if len(set(addresses.values())) != len(addresses):
        raise ConfigError("two tasks share an address")
    if not isinstance(task, dict) or set(task) != {"type", "index"}:
        raise ConfigError(f"task {task!r} is not {{type, index}}")
    me = (task["type"], task["index"])
    if me not in addresses:
        raise ConfigError(f"task {me} is not in the cluster")
    return Cluster(me=me, addresses=addresses)


def encode(task: Task) -> bytes:
    return json.dumps({"type": task[0], "index": task[1]}).encode() + b"\n"


def decode(line: bytes) -> Task:
    message = json.loads(line)
    return (str(message["type"]), int(message["index"]))


@dataclass
class Listener:
    """Answers every greeting with this task's identity and records who greeted."""

    cluster: Cluster
    server: socket.socket
    heard: list[Task] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    everyone: threading.Event = field(default_factory=threading.Event)

    def serve(self) -> None:
        while not self.everyone.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            with connection, connection.makefile("rwb") as stream:
                try:
                    peer = decode(stream.readline())
                    stream.write(encode(self.cluster.me))
                    stream.flush()
                except (OSError, ValueError, KeyError) as error:
                    with self.lock:
                        self.problems.append(f"a bad greeting: {error}")
                    continue
            with self.lock:
                if peer not in self.cluster.others:
                    self.problems.append(f"greeted by {peer}, which is not another task")
                elif peer in self.heard:
                    self.problems.append(f"greeted twice by {peer}")
                else:
                    self.heard.append(peer)
                if set(self.heard) == set(self.cluster.others):
                    self.everyone.set()


def bind(address: tuple[str, int], deadline: float) -> socket.socket:
    """Listen on this task's own address; its name may take a moment to resolve."""
    while True:
        try:
            return socket.create_server(address, reuse_port=False)
        except socket.gaierror:
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


def greet(me: Task, address: tuple[str, int], deadline: float) -> Task:
    """Send our identity to the task at `address`; its answer. Retries until it listens."""
    while True:
        try:
            with (
                socket.create_connection(address, timeout=5) as connection,
                connection.makefile("rwb") as stream,
            ):
                stream.write(encode(me))
                stream.flush()
                return decode(stream.readline())
        except (OSError, ValueError):
            if time.monotonic() >= deadline:
                raise
            time.sleep(0.2)


def main() -> int:
    deadline = time.monotonic() + DEADLINE_SECONDS
    try:
        cluster = parse(os.environ.get("TF_CONFIG"))
    except (ConfigError, ValueError) as error:
        print(f"TF_CONFIG is not well formed: {error}")
        return 2
    me = cluster.me
    listener = Listener(cluster, bind(cluster.addresses[me], deadline))
    if not cluster.others:
        listener.everyone.set()
    threading.Thread(target=listener.serve, daemon=True).start()

    problems: list[str] = []
    reached = 0
    for task, address in sorted(cluster.others.items()):
        try:
            answer = greet(me, address, deadline)
        except (OSError, ValueError) as error:
            problems.append(f"{task} at {address}: {error}")
            continue
        if answer == task:
            reached += 1
        else:
            problems.append(f"{address} answered as {answer}, expected {task}")
    if not listener.everyone.wait(max(0.0, deadline - time.monotonic())):
        missing = set(cluster.others) - set(listener.heard)
        problems.append(f"never greeted by {sorted(missing)}")
    listener.server.close()
    with listener.lock:
        problems += listener.problems
        heard = len(listener.heard)

    host = os.environ.get("HOSTNAME", "?")
    others = len(cluster.others)
    print(
        f"{me[0]} {me[1]} of {len(cluster.addresses)} tasks on {host}: "
        f"reached {reached} of {others}, heard from {heard} of {others}"
        + ("" if not problems else f"; problems: {'; '.join(problems)}")
    )
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
