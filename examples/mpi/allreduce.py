"""An MPI allreduce across every rank of an MPI distributed workload, with mpi4py.

The launcher pod runs `mpirun -n <numWorkers x slotsPerWorker> python allreduce.py`; mpirun
finds the workers in the hostfile named by OMPI_MCA_orte_default_hostfile (Open MPI 5 reads
PRTE_MCA_prte_default_hostfile) and starts ranks on them through the agent the environment
names — under the mpi-operator on Kubernetes and under lockstep's local runtime alike.

Each rank contributes rank + 1; every rank must end with size * (size + 1) / 2. Rank 0 prints
one line per rank, gathered, so the launcher's log shows the whole world.
"""

from __future__ import annotations

import os
import sys

from mpi4py import MPI


def main() -> int:
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    total = world.allreduce(rank + 1, op=MPI.SUM)
    expected = size * (size + 1) // 2
    pod = os.environ.get("HOSTNAME", "?")
    report = world.gather(
        f"rank {rank} of {size} in {pod}: sum {total}, expected {expected}", root=0
    )
    if rank == 0:
        assert report is not None
        print("\n".join(report), flush=True)
    ok = world.allreduce(int(total == expected), op=MPI.MIN)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
