"""A cross-process reduction and all-gather over every worker of a JAX distributed workload.

Runs unchanged under lockstep's local runtime and under the Kubeflow JAXJob operator: both set
COORDINATOR_ADDRESS (worker-0's host, without a port), COORDINATOR_PORT, NUM_PROCESSES and
PROCESS_ID. Every process joins the coordination service on worker-0 with
`jax.distributed.initialize`, on CPU with the gloo collectives, then

- sums a global array with one element per process (process p contributes p + 1) that is
  sharded across the devices of every process, so the jitted sum is a real cross-process
  reduction that must equal NUM_PROCESSES * (NUM_PROCESSES + 1) / 2, and
- all-gathers each process's id, which must give 0, 1, ..., NUM_PROCESSES - 1 in order.

It prints one line naming the process and what it got, and exits 0 only when both are right.

    submit with: distributedFramework "JAX", command "python", args "examples/jax/allreduce.py"
"""

from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import Mesh, NamedSharding, PartitionSpec


def main() -> int:
    jax.config.update("jax_platforms", "cpu")
    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.distributed.initialize(
        coordinator_address=f"{os.environ['COORDINATOR_ADDRESS']}:{os.environ['COORDINATOR_PORT']}",
        num_processes=int(os.environ["NUM_PROCESSES"]),
        process_id=int(os.environ["PROCESS_ID"]),
    )
    process, processes = jax.process_index(), jax.process_count()

    # One row per device of every process; this process fills its own rows with process + 1.
    mesh = Mesh(np.array(jax.devices()), ("processes",))
    sharding = NamedSharding(mesh, PartitionSpec("processes"))
    local_rows = jax.local_device_count()
    local = np.full((local_rows,), float(process + 1), dtype=np.float32)
    global_array = jax.make_array_from_process_local_data(sharding, local)
    total = float(jax.jit(jnp.sum)(global_array)) / local_rows
    expected = processes * (processes + 1) / 2

    gathered = [int(p) for p in multihost_utils.process_allgather(np.int32(process))]
    correct = total == expected and gathered == list(range(processes))

    host = os.environ.get("HOSTNAME", "?")
    print(
        f"process {process} of {processes} on {host}: sum {total:g}, expected {expected:g}; "
        f"allgather {gathered}"
    )
    jax.distributed.shutdown()
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
