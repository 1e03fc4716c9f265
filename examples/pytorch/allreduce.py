"""A gloo all_reduce across every replica of a PyTorch distributed workload.

Runs unchanged under lockstep's local runtime and under the Kubeflow PyTorchJob operator:
both set MASTER_ADDR, MASTER_PORT, WORLD_SIZE and RANK. Each rank contributes rank + 1, so
after the reduction every rank must hold WORLD_SIZE * (WORLD_SIZE + 1) / 2.

    lockstep's quick start submits it with: command "python", args "examples/pytorch/allreduce.py"
"""

from __future__ import annotations

import os
import sys

import torch
import torch.distributed as dist


def main() -> int:
    dist.init_process_group(backend="gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    expected = world * (world + 1) / 2
    host = os.environ.get("HOSTNAME", "?")
    print(f"rank {rank} of {world} on {host}: sum {value.item():g}, expected {expected:g}")
    dist.barrier()
    dist.destroy_process_group()
    return 0 if value.item() == expected else 1


if __name__ == "__main__":
    sys.exit(main())
