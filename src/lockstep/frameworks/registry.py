"""Which wiring each distributed framework uses (every framework has one); a training or
workspace, which has none, uses the single-pod wiring."""

from __future__ import annotations

from collections.abc import Callable

from lockstep.domain.plan import Replica, ReplicaPlan
from lockstep.frameworks import jax, mpi, pytorch, single_pod, tensorflow, xgboost
from lockstep.frameworks.endpoints import Endpoints
from lockstep.schemas.distributed import DistributedFramework

Wiring = Callable[[ReplicaPlan, Replica, Endpoints], dict[str, str]]

WIRING: dict[DistributedFramework, Wiring] = {
    DistributedFramework.PYTORCH: pytorch.environment,
    DistributedFramework.TF: tensorflow.environment,
    DistributedFramework.XGBOOST: xgboost.environment,
    DistributedFramework.JAX: jax.environment,
    DistributedFramework.MPI: mpi.environment,
}


def wiring_for(framework: DistributedFramework | None) -> Wiring:
    """The wiring of `framework` (None: a training's or workspace's)."""
    return single_pod.environment if framework is None else WIRING[framework]
