"""The ports of a workload's pods on this machine, chosen once before any pod starts.

Every pod gets a free port for its framework's wiring (MASTER_PORT, TF_CONFIG, …). Each
container port a pod declares gets a port of the machine: the one asked for (`external`) for
the first pod that asks for it (the leader first: as a workload's service reaches its leader),
else the container port itself for the first pod that declares it when it is free, else a free
one. All pods share the machine's network, so a pod learns where each of its container
ports is from `LOCKSTEP_HOST_PORT_<container port>`.
"""

from __future__ import annotations

import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from lockstep.domain.plan import ReplicaPlan
from lockstep.domain.workload import PortBinding
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.pod_launch import LOOPBACK, container_ports


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        try:
            probe.bind(("0.0.0.0", port))  # noqa: S104 (a test of the port on every address)
        except OSError:
            return False
    return True


@dataclass(frozen=True, slots=True)
class WorkloadPorts:
    endpoints: Mapping[str, int]
    """Pod name → the port its framework wiring names."""
    containers: Mapping[str, tuple[PortBinding, ...]]
    """Pod name → its container ports and where they are on this machine."""

    def to_json(self) -> dict[str, Any]:
        return {
            "endpoints": dict(self.endpoints),
            "containers": {
                pod: [port.to_json() for port in ports] for pod, ports in self.containers.items()
            },
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WorkloadPorts:
        if "endpoints" not in data:  # written before pods had container ports
            return cls(endpoints=dict(data), containers={})
        return cls(
            endpoints=dict(data["endpoints"]),
            containers={
                pod: tuple(PortBinding(**port) for port in ports)
                for pod, ports in data["containers"].items()
            },
        )

    @classmethod
    def placeholder(cls, plan: ReplicaPlan) -> WorkloadPorts:
        """Zeros where ports will be: what a dry run shows before anything was chosen."""
        return cls(
            endpoints={r.pod_name: 0 for r in plan.replicas},
            containers={
                r.pod_name: tuple(
                    PortBinding(container, external or 0, name)
                    for container, external, name in container_ports(r)
                )
                for r in plan.replicas
            },
        )


def allocate(plan: ReplicaPlan) -> WorkloadPorts:
    """Ports for every pod of `plan`, the leader's first; `PodStartError` when two pods ask
    for the same machine port or one asked for is taken."""
    taken: set[int] = set()
    exposed: set[tuple[int, int]] = set()
    """External ports given, with their container port: the workload's, not each pod's."""
    containers: dict[str, tuple[PortBinding, ...]] = {}
    for replica in (plan.leader, *(r for r in plan.replicas if r is not plan.leader)):
        bindings = []
        for container, external, name in container_ports(replica):
            if external is not None and (container, external) in exposed:
                host = free_port()  # the leader has it, as a service in front of the pods
            elif external is not None:
                if external in taken or not is_free(external):
                    raise PodStartError(
                        f"pod {replica.pod_name}: port {external} of this machine, asked for "
                        f"container port {container}, is taken"
                    )
                host = external
                exposed.add((container, external))
            elif container not in taken and is_free(container):
                host = container
            else:
                host = free_port()
            taken.add(host)
            bindings.append(PortBinding(container, host, name))
        containers[replica.pod_name] = tuple(bindings)
    endpoints = {replica.pod_name: free_port() for replica in plan.replicas}
    return WorkloadPorts(endpoints=endpoints, containers=containers)
