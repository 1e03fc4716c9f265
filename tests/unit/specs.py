"""Builders shared by the unit tests: wire-format creation requests, specs and replica plans.

Requests go through the real Pydantic schemas from JSON (as the API receives them), so a test
exercises exactly the objects the service hands to the pure layers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lockstep.domain.plan import ReplicaPlan, build_plan
from lockstep.schemas.distributed import DistributedCreationRequest, MasterSpec, WorkerSpec

CLUSTER_ID = "71f69d83-ba66-4822-adf5-55ce55efd210"

REFERENCE = Path(__file__).resolve().parents[1] / "reference"
"""The Run:ai contract: the OpenAPI subset and the documentation's example bodies."""


def reference_file(relative: str) -> Path:
    return REFERENCE / relative


BASE_SPEC: dict[str, Any] = {
    "image": "python:3.11",
    "distributedFramework": "PyTorch",
    "numWorkers": 2,
    "command": "python",
    "args": "-c pass",
}
"""A minimal valid worker spec."""


def request_body(
    *,
    name: str = "train",
    spec: Mapping[str, Any] | None = None,
    without: tuple[str, ...] = (),
    **top: Any,
) -> dict[str, Any]:
    """A creation body: `spec` is merged over `BASE_SPEC`, `without` drops spec keys, `top`
    sets top-level camelCase fields (masterSpec, masterSpecSameAsWorker, ...)."""
    merged = {**BASE_SPEC, **(spec or {})}
    for key in without:
        merged.pop(key, None)
    return {"name": name, "projectId": "1", "clusterId": CLUSTER_ID, "spec": merged, **top}


def creation_request(body: Mapping[str, Any]) -> DistributedCreationRequest:
    """Parse a body exactly as the API does."""
    return DistributedCreationRequest.model_validate_json(json.dumps(body))


def request(
    *,
    name: str = "train",
    spec: Mapping[str, Any] | None = None,
    without: tuple[str, ...] = (),
    **top: Any,
) -> DistributedCreationRequest:
    return creation_request(request_body(name=name, spec=spec, without=without, **top))


def worker_spec(fields: Mapping[str, Any]) -> WorkerSpec:
    return WorkerSpec.model_validate_json(json.dumps(dict(fields)))


def master_spec(fields: Mapping[str, Any]) -> MasterSpec:
    return MasterSpec.model_validate_json(json.dumps(dict(fields)))


def plan_of(
    framework: str = "PyTorch",
    workers: int = 2,
    *,
    name: str = "train",
    spec: Mapping[str, Any] | None = None,
    without: tuple[str, ...] = (),
    same_as_worker: bool | None = None,
    master: Mapping[str, Any] | None = None,
) -> ReplicaPlan:
    """The replica plan of a `BASE_SPEC`-derived spec with the given framework and workers;
    `without` drops spec keys."""
    fields = {**BASE_SPEC, "distributedFramework": framework, "numWorkers": workers, **(spec or {})}
    for key in without:
        fields.pop(key, None)
    return build_plan(
        name,
        worker_spec(fields),
        master_spec_same_as_worker=same_as_worker,
        master_spec=None if master is None else master_spec(master),
    )
