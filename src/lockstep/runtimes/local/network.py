"""Each workload's own network on this machine: a network namespace its sandboxed pods share —
they reach each other on loopback, at the addresses and ports the Kubeflow environment names
(`MASTER_ADDR`, `TF_CONFIG`, …) — connected to the outside by pasta (user-mode networking,
Debian's `passt`), with no way back to this machine's own loopback. PostgreSQL, Redis and
lockstep's API on 127.0.0.1 are out of a pod's reach; what the pod connects to elsewhere, pasta
connects to from this machine, as a container's traffic is routed out of its host.

    <root>/<workload id>/netns       the namespace, bound to this file
    <root>/<workload id>/pasta.pid   the pasta that connects it

The workload's machine ports (`ports`, `exposedUrls`: `LOCKSTEP_HOST_PORT_<n>`) are forwarded
from this machine's loopback into the namespace at the same number (pasta `-t`), so readiness
probes and URLs reach the pods as before; the loopback ports of this machine an administrator
lets pods reach (`LOCKSTEP_POD_HOST_PORTS`) are forwarded the other way (pasta `-T`), and no
other. The machine's other addresses (a second interface's, a bridge's) would lead pasta to its
services that listen on every address: each is a blackhole route in the namespace, which its
pods, holding no CAP_NET_ADMIN there, cannot change. The namespace outlives lockstep's
restarts, as its pods do, and goes once none of its pods runs (a pod started again makes it
anew) or with its workload's directory: detached and removed, with its pasta ended.

Needs lockstep to run as root (a namespace bound to a file, pasta joining it). Used by the
local runtime (`ensure` before a sandboxed pod starts, `enter` in front of its sandbox).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from lockstep.runtimes.base import PodStartError

NAMESPACE_FILE = "netns"
PASTA_PID_FILE = "pasta.pid"
START_SECONDS = 10.0
"""How long making the namespace, or starting pasta, may take."""


@dataclass(frozen=True, slots=True)
class Networking:
    """What this machine gives a workload's network: the tools, found, and root."""

    pasta: str | None
    nsenter: str | None
    unshare: str | None
    problem: str = ""
    """Why workloads get no network of their own here ('' when they do)."""
    host_ports: tuple[int, ...] = ()
    """This machine's loopback ports that pods may reach (an administrator's choice)."""

    @property
    def available(self) -> bool:
        return not self.problem


def probe(host_ports: Sequence[int] = ()) -> Networking:
    """The tools a workload's network needs, found on this machine, or why it has none."""
    pasta, nsenter, unshare = (shutil.which(name) for name in ("pasta", "nsenter", "unshare"))
    problem = ""
    if os.geteuid() != 0:
        problem = "lockstep does not run as root"
    elif pasta is None:
        problem = "pasta (Debian's passt) is not installed"
    elif nsenter is None or unshare is None:
        problem = "nsenter or unshare (util-linux) is missing"
    return Networking(pasta, nsenter, unshare, problem, tuple(host_ports))


def namespace(workload_dir: Path) -> Path:
    """Where a workload's namespace is bound."""
    return workload_dir / NAMESPACE_FILE


def enter(networking: Networking, workload_dir: Path) -> list[str]:
    """What runs a command in the workload's namespace, put in front of it."""
    return [networking.nsenter or "nsenter", f"--net={namespace(workload_dir)}", "--"]


def ensure(networking: Networking, workload_dir: Path, forwarded: Sequence[int]) -> None:
    """The workload's namespace, made where it is missing, with its pasta running, forwarding
    `forwarded` (this machine's ports of the workload's pods); `PodStartError` when either
    cannot be had."""
    path = namespace(workload_dir)
    if not _bound(path):
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.close(descriptor)
        _run([networking.unshare or "unshare", f"--net={path}", "true"], "make its namespace")
        routes = "".join(f"route add blackhole {address}\n" for address in host_addresses())
        _run([*enter(networking, workload_dir), "ip", "-force", "-batch", "-"], "route", routes)
    if _pasta_of(workload_dir) is None:
        _run(pasta_command(networking, workload_dir, forwarded), "start pasta")


def pasta_command(
    networking: Networking, workload_dir: Path, forwarded: Sequence[int]
) -> list[str]:
    """pasta, joining the workload's namespace as root (it keeps only what it needs, under a
    seccomp filter of its own), configuring its interface, and forwarding nothing but the
    workload's own ports in and the allowed host ports out; never this machine's loopback
    behind the gateway's address."""
    return [
        networking.pasta or "pasta",
        "--runas",
        "0",
        "--netns",
        str(namespace(workload_dir)),
        "--netns-only",
        "--config-net",
        "--no-map-gw",
        "--quiet",
        "--pid",
        str(workload_dir / PASTA_PID_FILE),
        "--tcp-ports",
        _ports(forwarded),
        "--udp-ports",
        "none",
        "--tcp-ns",
        _ports(networking.host_ports),
        "--udp-ns",
        "none",
    ]


def release(workload_dir: Path) -> None:
    """End the workload's network: its pasta, and its namespace's file (detached)."""
    pid = _pasta_of(workload_dir)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    path = namespace(workload_dir)
    if _bound(path):
        subprocess.run(["umount", "--lazy", str(path)], capture_output=True, check=False)
    path.unlink(missing_ok=True)
    (workload_dir / PASTA_PID_FILE).unlink(missing_ok=True)


def _ports(ports: Sequence[int]) -> str:
    return ",".join(str(port) for port in sorted(set(ports))) or "none"


def _bound(path: Path) -> bool:
    """Whether a namespace is bound at `path` (a file of another file system than its
    directory's: nsfs)."""
    try:
        return path.lstat().st_dev != path.parent.stat().st_dev
    except OSError:
        return False


def _pasta_of(workload_dir: Path) -> int | None:
    """The pid of the workload's pasta, if it still runs."""
    try:
        pid = int((workload_dir / PASTA_PID_FILE).read_text().strip())
        command = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError):
        return None
    return pid if command.startswith(("pasta", "passt")) else None  # passt.avx2, …


def host_addresses() -> list[str]:
    """This machine's own addresses but its loopback's and link-local ones, each as a
    one-address prefix (`192.0.2.2/32`)."""
    try:
        done = subprocess.run(
            ["ip", "-json", "address", "show"],
            capture_output=True,
            text=True,
            timeout=START_SECONDS,
            check=True,
        )
        links = json.loads(done.stdout)
    except (OSError, subprocess.SubprocessError, ValueError):
        return []
    found = []
    for link in links:
        for address in link.get("addr_info", ()):
            if address.get("scope") != "global":
                continue
            width = 32 if address.get("family") == "inet" else 128
            found.append(f"{address['local']}/{width}")
    return found


def _run(line: Sequence[str], what: str, feed: str | None = None) -> None:
    try:
        done = subprocess.run(
            line,
            input=feed,
            capture_output=True,
            text=True,
            timeout=START_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise PodStartError(f"the workload's network: could not {what}: {error}") from error
    if done.returncode != 0:
        said = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise PodStartError(f"the workload's network: could not {what}: {said[0]}")
