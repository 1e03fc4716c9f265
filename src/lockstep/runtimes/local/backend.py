"""The local runtime as a backend: its reconciler where the placement puts it (controllers.py),
this machine's nodes with what lockstep placed on them, the pods' logs under the runtime's
directory, the samples its sampler keeps in the store, its claims (directories on this
machine), its dry run (the pods' launches), and what its sandbox refuses or, switched off
(LOCKSTEP_SANDBOX=off), does not apply."""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from lockstep.config import SandboxMode, Settings
from lockstep.domain.cluster import Node, NodeUse
from lockstep.domain.errors import Violation
from lockstep.domain.workload import Workload
from lockstep.runtimes.backend import Backend, Organization, Renderer, Wiring
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local import machine
from lockstep.runtimes.local.controllers import controller_for
from lockstep.runtimes.local.log_reader import LocalLogReader
from lockstep.runtimes.local.pod_bounds import bounds_of
from lockstep.runtimes.local.sandbox.asked import isolation_asked
from lockstep.runtimes.local.sandbox.policy import policy_of, unknown_data_volumes
from lockstep.runtimes.local.volumes.claims import Claims
from lockstep.runtimes.local.workload_launches import Launches
from lockstep.schemas.single_pod import CreationRequest
from lockstep.services.metrics.sources import SampledMetrics
from lockstep.services.nodes import LocalNodes


class LocalBackend(Backend):
    """Pods as supervised process groups on this machine."""

    def __init__(self, settings: Settings, wiring: Wiring) -> None:
        database = wiring.database
        self._settings = settings
        self._nodes = machine.nodes(settings.nodes)
        self._node_uses = LocalNodes(database, self._nodes)
        super().__init__(
            controller=controller_for(
                wiring.placement,
                database,
                settings,
                clock=wiring.clock,
                runtime=wiring.runtime,
                instruments=wiring.instruments,
                gpus=wiring.gpus,
            ),
            logs=LocalLogReader(settings.runtime_dir),
            metrics=SampledMetrics(database),
            claims=Claims(settings.claims_dir, clock=wiring.clock),
        )
        self._unsandboxed = settings.sandbox is SandboxMode.OFF

    @classmethod
    def build(cls, settings: Settings, wiring: Wiring) -> LocalBackend:
        return cls(settings, wiring)

    @classmethod
    def renderer(cls, settings: Settings, *, organization: Organization | None = None) -> Renderer:
        """Each pod's launch, as the runtime would start it."""

        @functools.cache
        def launches() -> Launches:
            # Built at the first dry run, not at start-up: it probes bwrap (the runtime does too).
            return Launches(
                settings.runtime_dir,
                dict(os.environ),
                settings.image_environments,
                policy_of(settings),
                bounds_of(settings),
            )

        def render(workload: Workload) -> dict[str, Any]:
            return launches().render(workload, workload.plan())

        return render

    def nodes(self) -> Sequence[Node]:
        return self._nodes

    def node_uses(self) -> list[NodeUse]:
        return self._node_uses()

    def refusals(self, request: CreationRequest) -> list[Violation]:
        """The data volumes the request mounts that no administrator registered here."""
        return unknown_data_volumes(request, self._settings.data_volumes)

    def unapplied(self, workload: Workload) -> list[str]:
        """Without a sandbox: what the workload's specs ask that only a sandbox gives."""
        return isolation_asked_of(workload) if self._unsandboxed else []


def isolation_asked_of(workload: Workload) -> list[str]:
    """What the workload's specs ask that only a sandbox gives, each field once."""
    asked: dict[str, None] = {}
    request = workload.request
    for read in (lambda: request.spec, lambda: request.master_spec):
        with contextlib.suppress(ValidationError, PodStartError):
            spec = read()
            if spec is not None:
                asked |= dict.fromkeys(isolation_asked(spec))
    return list(asked)
