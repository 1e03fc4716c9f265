"""The backend: the one interface through which lockstep drives a runtime — the local runtime
(runtimes/local/backend.py) or Kubernetes (runtimes/kubernetes/backend.py). A backend is built
from the settings (`build`), renders a workload as its dry run (`renderer`), runs its
reconciliation (`start`, `stop`, told of changes by `notify` and `organization_changed`), and
answers for its nodes, its pods' logs, its measured figures and its claims; before a request
is stored it says what of it the backend refuses (`refusals`), and for a stored workload what
of it the backend does not apply (`unapplied`).

The base class keeps what every backend does the same way (its reconciliation goes through its
`Controller`); each backend fills in the rest. `create_app` builds the one the settings choose
(runtimes/registry.py) and reaches it only through this interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from lockstep.config import Settings
from lockstep.domain.claims import ClaimStore
from lockstep.domain.clock import Clock
from lockstep.domain.cluster import Node, NodeUse
from lockstep.domain.errors import Violation
from lockstep.domain.gpus import GpuReader
from lockstep.domain.organization import Department, Project
from lockstep.domain.workload import Workload
from lockstep.observability.instruments import Instruments
from lockstep.reconciler.control import Controller, Placement
from lockstep.reconciler.queue import ORGANIZATION_CHANGED
from lockstep.runtimes.base import PodLogs, Runtime
from lockstep.schemas.single_pod import CreationRequest
from lockstep.services.metrics.sources import MetricsSource
from lockstep.store.database import Database

Renderer = Callable[[Workload], dict[str, Any]]
"""A workload's dry run: what the backend would run or apply for it."""
Organization = Callable[[Workload], tuple[Department | None, Project] | None]
"""A workload's department and project as stored; None when its project is unknown."""


@dataclass(frozen=True, slots=True)
class Wiring:
    """What a backend is built with beside the settings."""

    database: Database
    clock: Clock
    instruments: Instruments
    placement: Placement = Placement.THREAD
    """Where the local runtime's reconciler runs."""
    runtime: Runtime | None = None
    """The runtime the local reconciler drives (tests); the local runtime when None."""
    gpus: GpuReader | None = None
    """What the local runtime's metrics sampler reads GPUs with (NVML when None)."""


class Backend(ABC):
    """A runtime as the rest of lockstep drives it."""

    def __init__(
        self,
        *,
        controller: Controller,
        logs: PodLogs,
        metrics: MetricsSource,
        claims: ClaimStore | None = None,
    ) -> None:
        """`controller`: who runs the reconciliation; `logs`: where pods' logs are read;
        `metrics`: where measured figures come from; `claims`: the backend's own claims (None
        where it keeps none)."""
        self.controller = controller
        self.logs = logs
        self.metrics = metrics
        self.claims = claims

    @classmethod
    @abstractmethod
    def build(cls, settings: Settings, wiring: Wiring) -> Backend:
        """The backend these settings configure, wired to the store, ready to `start`."""

    @classmethod
    @abstractmethod
    def renderer(cls, settings: Settings, *, organization: Organization | None = None) -> Renderer:
        """The dry run of this backend as the settings configure it (pure: it runs and applies
        nothing); `organization` finds a workload's department and project."""

    # --- reconciliation -------------------------------------------------------------------

    def start(self) -> None:
        """Start reconciling."""
        self.controller.start()

    def stop(self) -> None:
        """Stop reconciling, then let go of what the backend holds."""
        self.controller.stop()
        self.close()

    def close(self) -> None:
        """Let go of what the backend holds beside its reconciliation (nothing by default)."""
        return

    def notify(self, workload_id: str) -> None:
        """The workload changed in the store: reconcile it soon."""
        self.controller.notify(workload_id)

    def organization_changed(self) -> None:
        """A project or department changed: the reconciler applies it at once."""
        self.controller.notify(ORGANIZATION_CHANGED)

    def reconciler_runs(self) -> bool | None:
        """Whether the reconciler runs; None where this process does not lead."""
        return self.controller.reconciler_runs()

    # --- what it answers for --------------------------------------------------------------

    @abstractmethod
    def nodes(self) -> Sequence[Node]:
        """The nodes alone, without what is held of them."""

    @abstractmethod
    def node_uses(self) -> list[NodeUse]:
        """The nodes, with what the workloads hold of each."""

    def refusals(self, request: CreationRequest) -> list[Violation]:
        """What the backend refuses of a request before it is stored (nothing by default)."""
        return []

    def unapplied(self, workload: Workload) -> list[str]:
        """What a stored workload asks that the backend does not apply, each field once
        (nothing by default)."""
        return []
