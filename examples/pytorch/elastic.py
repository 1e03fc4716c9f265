"""A gloo all_reduce across the nodes of an elastic PyTorch job, launched by torchrun.

torchrun reads its options from PET_* environment variables when they are not given on its
command line (`torch.distributed.argparse_util.env`: `--nnodes` from PET_NNODES,
`--nproc-per-node` from PET_NPROC_PER_NODE, `--rdzv-backend` from PET_RDZV_BACKEND,
`--rdzv-endpoint` from PET_RDZV_ENDPOINT, `--rdzv-id` from PET_RDZV_ID, `--max-restarts` from
PET_MAX_RESTARTS). A PyTorch workload with minReplicas/maxReplicas is its worker pods only
(no master), and gets, in every pod, exactly what the Kubeflow PyTorchJob operator sets for an
elasticPolicy without a Master:

    PET_RDZV_BACKEND=c10d
    PET_RDZV_ENDPOINT=<worker-0>:<worker-0's port>   # the c10d rendezvous, hosted on worker-0
    PET_NNODES=<minReplicas>:<maxReplicas>

so every pod runs the same command line and torchrun needs no flags:

    command "torchrun", args "examples/pytorch/elastic.py"

Without PET_NPROC_PER_NODE torchrun starts one process per pod. Each pod's torchrun agent
joins the rendezvous, which closes as soon as maxReplicas nodes have joined, or 30 s after the
first minReplicas did; the agents then start this script with RANK, WORLD_SIZE, LOCAL_RANK,
MASTER_ADDR and MASTER_PORT of the group that formed. Ranks follow the order in which nodes
joined, not the pods' indexes. numWorkers 2 with minReplicas 2 and maxReplicas 2 make a world
of 2.

To try it by hand, start two agents in two shells (any free port):

    PET_NNODES=2:2 PET_RDZV_BACKEND=c10d PET_RDZV_ENDPOINT=127.0.0.1:29400 \
        torchrun examples/pytorch/elastic.py

Each rank contributes rank + 1, so after the reduction every rank must hold
WORLD_SIZE * (WORLD_SIZE + 1) / 2; the script prints what it got and exits 1 if it is wrong.
"""

from __future__ import annotations

import os
import socket
import sys

import torch
import torch.distributed as dist

TORCHRUN_VARIABLES = ("TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE", "LOCAL_RANK")
"""What torchrun's elastic agent sets for each process it starts."""


def main() -> int:
    missing = [name for name in TORCHRUN_VARIABLES if name not in os.environ]
    if missing:
        print(
            f"{sys.argv[0]}: {', '.join(missing)} not set: launch me with torchrun",
            file=sys.stderr,
        )
        return 2
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ["LOCAL_RANK"])
    dist.init_process_group(backend="gloo", rank=rank, world_size=world)
    value = torch.tensor([float(rank + 1)])
    dist.all_reduce(value, op=dist.ReduceOp.SUM)
    expected = world * (world + 1) / 2
    host = os.environ.get("HOSTNAME") or socket.gethostname()
    print(f"rank {rank} of {world} on {host}: sum {value.item():g}, expected {expected:g}")
    print(
        f"local rank {local_rank} of {os.environ.get('LOCAL_WORLD_SIZE', '?')}, "
        f"node {os.environ.get('GROUP_RANK', '?')}, "
        f"restart {os.environ.get('TORCHELASTIC_RESTART_COUNT', '?')}"
    )
    dist.barrier()
    dist.destroy_process_group()
    return 0 if value.item() == expected else 1


if __name__ == "__main__":
    sys.exit(main())
