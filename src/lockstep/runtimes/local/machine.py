"""What this machine offers — CPU cores, memory and NVIDIA GPUs — as the local runtime's nodes.

By default the machine is one node, named after its host, in node pool `default`. An operator
may override its capacity, or describe several virtual nodes (each with a name, a node pool,
labels, taints and capacities) so that node pools, node types, tolerations and affinity can be
exercised on one machine; their pods still run here. GPU devices are numbered across the
nodes in order: the first node's are 0…n-1, the next node's follow, and a pod's
CUDA_VISIBLE_DEVICES names those numbers.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

from lockstep.config import NodeSettings
from lockstep.domain.cluster import Gpu, Node, Taint
from lockstep.domain.quantities import parse_quantity

MIB = 2**20


def gpu_memories() -> list[Decimal]:
    """Each NVIDIA GPU's memory in bytes, as `nvidia-smi` reports it (none without the tool
    or a driver)."""
    tool = shutil.which("nvidia-smi")
    if tool is None:
        return []
    query = [tool, "--query-gpu=memory.total", "--format=csv,noheader,nounits"]
    try:
        listing = subprocess.run(query, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if listing.returncode != 0:
        return []
    memories = []
    for line in listing.stdout.splitlines():
        try:
            memories.append(Decimal(int(line.strip())) * MIB)
        except ValueError:
            continue
    return memories


def memory_bytes() -> Decimal:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal:"):
            return Decimal(int(line.split()[1]) * 1024)
    return Decimal(0)


def nodes(
    settings: Sequence[NodeSettings] = (), *, gpus: Sequence[Decimal] | None = None
) -> list[Node]:
    """The nodes `settings` describe, anything left out taken from this machine (`gpus`: the
    memory of each of its GPUs, detected when not given)."""
    detected = gpu_memories() if gpus is None else list(gpus)
    cpu = Decimal(os.cpu_count() or 1)
    memory = memory_bytes()
    result: list[Node] = []
    next_index = 0
    for i, node in enumerate(settings or [NodeSettings()]):
        count = len(detected) if node.gpus is None else node.gpus
        each = None if node.gpu_memory is None else parse_quantity(node.gpu_memory)
        devices = []
        for index in range(next_index, next_index + count):
            known = detected[index] if index < len(detected) else None
            devices.append(Gpu(index, each if each is not None else known))
        next_index += count
        result.append(
            Node(
                name=node.name or (socket.gethostname() if i == 0 else f"node-{i}"),
                pool=node.pool,
                cpu=cpu if node.cpu_cores is None else Decimal(str(node.cpu_cores)),
                memory=memory if node.memory is None else parse_quantity(node.memory),
                gpus=tuple(devices),
                labels=dict(node.labels),
                taints=tuple(Taint(t.key, t.value, t.effect) for t in node.taints),
                max_pods=node.max_pods,
            )
        )
    return result
