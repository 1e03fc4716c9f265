"""Which wiring each distributed framework uses."""

from __future__ import annotations

from collections.abc import Callable

from lockstep.domain.plan import Replica, ReplicaPlan
from lockstep.frameworks import pytorch
from lockstep.frameworks.endpoints import Endpoints
from lockstep.schemas.distributed import DistributedFramework

Wiring = Callable[[ReplicaPlan, Replica, Endpoints], dict[str, str]]

WIRING: dict[DistributedFramework, Wiring] = {
    DistributedFramework.PYTORCH: pytorch.environment,
}


def wiring_for(framework: DistributedFramework) -> Wiring | None:
    """The wiring of `framework`, or None when lockstep cannot wire it yet."""
    return WIRING.get(framework)
