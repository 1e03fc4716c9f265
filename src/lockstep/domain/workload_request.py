"""What the user asked for, as a workload stores it, read through typed accessors.

A workload keeps its request in its wire form (`spec`, and for a distributed workload
`masterSpecSameAsWorker` and `masterSpec`), which is what `GET` answers fast. This is the only
module that knows that form's camelCase keys: the rest of lockstep reads the typed accessors
below. The cheap ones read the wire form directly (the list pages' hot path builds no model);
the spec models and the gang's layout are built once, when first read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, cast

from lockstep.domain.kinds import WorkloadKind
from lockstep.domain.plan import (
    GangCounts,
    GangLayout,
    ReplicaPlan,
    build_plan,
    build_single_pod_plan,
    lay_out_gang,
    leader_spec,
)
from lockstep.schemas.distributed import DistributedFramework, MasterSpec, PodSpec, WorkerSpec
from lockstep.schemas.pod import ExposedUrl
from lockstep.schemas.single_pod import TrainingSpec, WorkspaceSpec

WireRequest = dict[str, Any]
"""The wire form of a request: `spec`, `masterSpecSameAsWorker`, `masterSpec`."""

WIRE_KEYS: Final = ("spec", "masterSpecSameAsWorker", "masterSpec")
"""What of a creation request its workload keeps."""

SPEC_MODELS: Final[dict[WorkloadKind, type[PodSpec]]] = {
    WorkloadKind.DISTRIBUTED: WorkerSpec,
    WorkloadKind.TRAINING: TrainingSpec,
    WorkloadKind.WORKSPACE: WorkspaceSpec,
}

_UNREAD: Final[Any] = object()


class WorkloadRequest:
    """A stored request of one kind, its parts computed once when first read (a lost race
    computes the same immutable value twice, so no lock is taken)."""

    __slots__ = ("_layout", "_leader", "_master", "_spec", "kind", "wire")

    def __init__(self, kind: WorkloadKind, wire: Mapping[str, Any]) -> None:
        self.kind = kind
        self.wire: Mapping[str, Any] = wire
        self._spec: PodSpec = _UNREAD
        self._master: MasterSpec | None = _UNREAD
        self._leader: PodSpec = _UNREAD
        self._layout: GangLayout = _UNREAD

    @classmethod
    def of_creation(cls, kind: WorkloadKind, wire: Mapping[str, Any]) -> WorkloadRequest:
        """What a workload keeps of a creation request's wire form."""
        return cls(kind, {key: wire[key] for key in WIRE_KEYS if key in wire})

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, WorkloadRequest):
            return NotImplemented
        return self.kind is other.kind and self.wire == other.wire

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"WorkloadRequest({self.kind.value}, {self.wire!r})"

    # --- read from the wire form, no model built ------------------------------------------

    @property
    def _spec_wire(self) -> Mapping[str, Any]:
        return cast(Mapping[str, Any], self.wire.get("spec") or {})

    @property
    def images(self) -> list[str]:
        """The images its pods run, sorted, each once."""
        master = self.wire.get("masterSpec") or {}
        return sorted({i for i in (self._spec_wire.get("image"), master.get("image")) if i})

    @property
    def command(self) -> str | None:
        return self._spec_wire.get("command") or None

    @property
    def args(self) -> str | None:
        return self._spec_wire.get("args") or None

    @property
    def preemptibility(self) -> str | None:
        """`preemptible` or `non-preemptible` when asked; None leaves it to the priority."""
        return self._spec_wire.get("preemptibility")

    @property
    def auto_deletion_seconds(self) -> int | None:
        """How long after it ends the workload is deleted; None: it is kept."""
        seconds = self._spec_wire.get("autoDeletionTimeAfterCompletionSeconds")
        return None if seconds is None else int(seconds)

    @property
    def termination_grace_seconds(self) -> float | None:
        seconds = self._spec_wire.get("terminationGracePeriodSeconds")
        return None if seconds is None else float(seconds)

    @property
    def terminate_after_preemption(self) -> bool:
        return bool(self._spec_wire.get("terminateAfterPreemption"))

    @property
    def claim_names(self) -> set[str]:
        """The names of the project's claims (not ephemeral ones) that its pods mount."""
        names: set[str] = set()
        for key in ("spec", "masterSpec"):
            pod_spec: Any = self.wire.get(key) or {}
            storage: Any = pod_spec.get("storage") if isinstance(pod_spec, dict) else None
            claims: Any = storage.get("pvc") if isinstance(storage, dict) else None
            for claim in claims or []:
                if (
                    isinstance(claim, dict)
                    and claim.get("claimName")
                    and not claim.get("ephemeral")
                ):
                    names.add(str(claim["claimName"]))
        return names

    @property
    def exposed_urls(self) -> list[ExposedUrl]:
        """Its exposedUrls (the spec's model is built only when it has some)."""
        if not self._spec_wire.get("exposedUrls"):
            return []
        return list(self.spec.exposed_urls or ())

    @property
    def counts(self) -> GangCounts:
        """What sizes its gang."""
        spec = self._spec_wire
        framework = spec.get("distributedFramework")
        return GangCounts(
            self.kind,
            DistributedFramework(framework) if framework else None,
            spec.get("numWorkers"),
            spec.get("minReplicas"),
            spec.get("maxReplicas"),
            spec.get("completions"),
            spec.get("parallelism"),
        )

    @property
    def layout(self) -> GangLayout:
        """How its gang is laid out (domain/plan.lay_out_gang)."""
        if self._layout is _UNREAD:
            self._layout = lay_out_gang(self.counts)
        return self._layout

    # --- the spec models, built once --------------------------------------------------------

    @property
    def spec(self) -> PodSpec:
        """The stored `spec`, as its kind's model (a distributed workload's: `WorkerSpec`)."""
        if self._spec is _UNREAD:
            model = SPEC_MODELS[self.kind]
            self._spec = model.model_validate(self._spec_wire, strict=False)
        return self._spec

    @property
    def worker_spec(self) -> WorkerSpec:
        """A distributed workload's `spec`: the workers' pod spec and the topology."""
        spec = self.spec
        if not isinstance(spec, WorkerSpec):
            raise TypeError(f"a {self.kind.value} workload has no worker spec")
        return spec

    @property
    def master_spec(self) -> MasterSpec | None:
        """A distributed workload's own `masterSpec`, when given."""
        if self._master is _UNREAD:
            master = self.wire.get("masterSpec")
            self._master = (
                None if master is None else MasterSpec.model_validate(master, strict=False)
            )
        return self._master

    @property
    def leader_spec(self) -> PodSpec:
        """The spec its leading pod runs: the master's when given, else the worker's."""
        if self._leader is _UNREAD:
            spec = self.spec
            self._leader = (
                leader_spec(
                    spec,
                    master_spec_same_as_worker=self.wire.get("masterSpecSameAsWorker"),
                    master_spec=self.master_spec,
                )
                if isinstance(spec, WorkerSpec)
                else spec
            )
        return self._leader

    def plan(self, workload_name: str) -> ReplicaPlan:
        """The replica plan of the request under the workload's name."""
        spec = self.spec
        if not isinstance(spec, WorkerSpec):
            return build_single_pod_plan(workload_name, self.kind, spec)
        return build_plan(
            workload_name,
            spec,
            master_spec_same_as_worker=self.wire.get("masterSpecSameAsWorker"),
            master_spec=self.master_spec,
        )
