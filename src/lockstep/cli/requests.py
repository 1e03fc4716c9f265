"""The request bodies `lockstep training <framework> submit`, `lockstep training submit` and
`lockstep workspace submit` send, built from their flags over an optional `-f request.json`:
pure functions, so what each flag does is tested without a server."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

FRAMEWORKS = {
    "pytorch": "PyTorch",
    "mpi": "MPI",
    "tf": "TF",
    "xgboost": "XGBoost",
    "jax": "JAX",
}


class BadFlag(ValueError):
    """A flag's value cannot be used (the message names the flag)."""


@dataclass(slots=True, kw_only=True)
class PodOptions:
    """The flags every submit has: what the pods run and what they ask for."""

    name: str
    project_id: str
    cluster_id: str
    image: str | None = None
    command: Sequence[str] = ()
    environment: Sequence[str] = ()
    working_dir: str | None = None
    gpu_devices: int | None = None
    gpu_portion: float | None = None
    gpu_memory: str | None = None
    cpu_core_request: float | None = None
    cpu_core_limit: float | None = None
    cpu_memory_request: str | None = None
    cpu_memory_limit: str | None = None
    node_pools: Sequence[str] = ()
    tolerations: Sequence[str] = ()
    labels: Sequence[str] = ()
    annotations: Sequence[str] = ()
    name_prefix: bool = False
    storage: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """`spec.storage` entries from the storage flags (see storage.py), added to the file's."""
    base: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True, kw_only=True)
class SubmitOptions(PodOptions):
    """A distributed workload's: its framework and topology."""

    framework: str
    workers: int | None = None
    backoff_limit: int | None = None
    clean_pod_policy: str | None = None
    min_replicas: int | None = None
    max_replicas: int | None = None
    slots_per_worker: int | None = None
    master: MasterOptions | None = None
    """The master's own command, environment or GPUs: it then runs a spec of its own."""
    no_master: bool = False
    """`--workers` counts every pod: the first of them coordinates (see `_without_master`)."""


@dataclass(slots=True, kw_only=True)
class TrainingOptions(PodOptions):
    """A training's: how often a failed pod runs again, and a Job's completions and
    parallelism."""

    backoff_limit: int | None = None
    completions: int | None = None
    parallelism: int | None = None


@dataclass(slots=True, kw_only=True)
class WorkspaceOptions(PodOptions):
    """A workspace's: the container ports it exposes (`CONTAINER[:EXTERNAL]`)."""

    ports: Sequence[str] = ()


@dataclass(slots=True)
class MasterOptions:
    command: str | None = None
    args: str | None = None
    environment: Sequence[str] = ()
    gpu_devices: int | None = None
    gpu_portion: float | None = None

    def given(self) -> bool:
        return any(
            value not in (None, ())
            for value in (
                self.command,
                self.args,
                self.environment,
                self.gpu_devices,
                self.gpu_portion,
            )
        )


def pairs(values: Sequence[str], flag: str) -> list[tuple[str, str]]:
    found = []
    for value in values:
        key, equals, rest = value.partition("=")
        if not equals or not key:
            raise BadFlag(f"{flag} takes KEY=VALUE, not {value!r}")
        found.append((key, rest))
    return found


def build(options: SubmitOptions) -> dict[str, Any]:
    """The Run:ai distributed creation request: `-f`'s body, then each flag given on top."""
    body, spec = _pod_request(options)
    spec["distributedFramework"] = FRAMEWORKS[options.framework]
    if options.workers is not None:
        spec["numWorkers"] = options.workers
    spec.setdefault("numWorkers", 1)
    _given(
        spec,
        backoffLimit=options.backoff_limit,
        cleanPodPolicy=options.clean_pod_policy,
        minReplicas=options.min_replicas,
        maxReplicas=options.max_replicas,
        slotsPerWorker=options.slots_per_worker,
    )
    if options.no_master:
        _without_master(spec, options)
    if options.master is not None and options.master.given():
        body["masterSpecSameAsWorker"] = False
        body["masterSpec"] = _master_spec(spec, options.master)
    body.setdefault("masterSpecSameAsWorker", True)
    return body


def build_training(options: TrainingOptions) -> dict[str, Any]:
    """The body of `POST /api/v1/workloads/trainings`."""
    body, spec = _pod_request(options)
    _given(
        spec,
        backoffLimit=options.backoff_limit,
        completions=options.completions,
        parallelism=options.parallelism,
    )
    return body


def build_workspace(options: WorkspaceOptions) -> dict[str, Any]:
    """The body of `POST /api/v1/workloads/workspaces`."""
    body, spec = _pod_request(options)
    if options.ports:
        spec["ports"] = [*spec.get("ports", []), *(_port(text) for text in options.ports)]
    return body


def _pod_request(options: PodOptions) -> tuple[dict[str, Any], dict[str, Any]]:
    """The request with the flags every kind has applied over `-f`'s body, and its `spec`
    (the same dict, for the caller's own fields)."""
    body = dict(options.base)
    spec: dict[str, Any] = dict(body.get("spec") or {})
    body.update(name=options.name, projectId=options.project_id, clusterId=options.cluster_id)
    if options.image is not None:
        spec["image"] = options.image
    if options.command:
        spec["command"] = options.command[0]
        if len(options.command) > 1:
            spec["args"] = shlex.join(options.command[1:])
    if options.working_dir is not None:
        spec["workingDir"] = options.working_dir
    if options.environment:
        variables = list(spec.get("environmentVariables") or [])
        variables += [{"name": k, "value": v} for k, v in pairs(options.environment, "-e")]
        spec["environmentVariables"] = variables
    compute = _compute(options, dict(spec.get("compute") or {}))
    if compute:
        spec["compute"] = compute
    if options.node_pools:
        spec["nodePools"] = list(options.node_pools)
    if options.tolerations:
        spec["tolerations"] = [_toleration(text) for text in options.tolerations]
    if options.storage:
        merged = dict(spec.get("storage") or {})
        for kind, volumes in options.storage.items():
            merged[kind] = [*merged.get(kind, []), *volumes]
        spec["storage"] = merged
    if options.labels:
        spec["labels"] = [{"name": k, "value": v} for k, v in pairs(options.labels, "--label")]
    if options.annotations:
        spec["annotations"] = [
            {"name": k, "value": v} for k, v in pairs(options.annotations, "--annotation")
        ]
    body["spec"] = spec
    if options.name_prefix:
        body["useGivenNameAsPrefix"] = True
    return body, spec


def _given(spec: dict[str, Any], **fields: object) -> None:
    """Set each field whose flag was given."""
    spec.update({key: value for key, value in fields.items() if value is not None})


def _port(text: str) -> dict[str, int]:
    """`--port 8888` (the container's port; this machine's is chosen) or `8888:30000` (and the
    port of the machine, or node, it is reached at)."""
    container, colon, external = text.partition(":")
    try:
        port = {"container": int(container)}
        if colon:
            port["external"] = int(external)
    except ValueError:
        raise BadFlag(f"--port takes CONTAINER[:EXTERNAL] port numbers, not {text!r}") from None
    return port


def _without_master(spec: dict[str, Any], options: SubmitOptions) -> None:
    """`--no-master`: no pod beyond the N workers asked for. A Run:ai request always has a
    leading replica (the API has no field to leave it out), so N pods in all become a master
    running the workers' spec plus N - 1 workers: the same N processes, rank 0 coordinating,
    as a job of N workers whose worker 0 coordinates."""
    if options.framework == "mpi":
        raise BadFlag("--no-master: an MPI workload always has its launcher")
    if options.master is not None and options.master.given():
        raise BadFlag("--no-master cannot be combined with the --master-* flags")
    total = spec["numWorkers"]
    if total < 2:
        raise BadFlag(
            f"--no-master needs --workers 2 or more (one of them coordinates), not {total}"
        )
    spec["numWorkers"] = total - 1


MASTER_FIELDS = ("image", "command", "args", "workingDir", "environmentVariables", "compute")
"""What a master with a spec of its own takes from the worker's unless its flags say otherwise."""


def _master_spec(worker: dict[str, Any], master: MasterOptions) -> dict[str, Any]:
    spec = {key: worker[key] for key in MASTER_FIELDS if key in worker}
    if master.command is not None:
        spec["command"] = master.command
        spec.pop("args", None)
    if master.args is not None:
        spec["args"] = master.args
    if master.environment:
        variables = {v["name"]: v for v in spec.get("environmentVariables", [])}
        for key, value in pairs(master.environment, "--master-environment"):
            variables[key] = {"name": key, "value": value}
        spec["environmentVariables"] = list(variables.values())
    compute = dict(spec.get("compute") or {})
    if master.gpu_devices is not None:
        compute["gpuDevicesRequest"] = master.gpu_devices
        for key in ("gpuRequestType", "gpuPortionRequest", "gpuMemoryRequest"):
            compute.pop(key, None)
    if master.gpu_portion is not None:
        compute.update(gpuRequestType="portion", gpuPortionRequest=master.gpu_portion)
        compute.setdefault("gpuDevicesRequest", 1)
    if compute:
        spec["compute"] = compute
    return spec


def _compute(options: PodOptions, compute: dict[str, Any]) -> dict[str, Any]:
    if options.gpu_devices is not None:
        compute["gpuDevicesRequest"] = options.gpu_devices
    if options.gpu_portion is not None:
        compute.update(gpuRequestType="portion", gpuPortionRequest=options.gpu_portion)
        compute.setdefault("gpuDevicesRequest", 1)
    if options.gpu_memory is not None:
        compute.update(gpuRequestType="memory", gpuMemoryRequest=options.gpu_memory)
        compute.setdefault("gpuDevicesRequest", 1)
    for key, value in (
        ("cpuCoreRequest", options.cpu_core_request),
        ("cpuCoreLimit", options.cpu_core_limit),
        ("cpuMemoryRequest", options.cpu_memory_request),
        ("cpuMemoryLimit", options.cpu_memory_limit),
    ):
        if value is not None:
            compute[key] = value
    return compute


def _toleration(text: str) -> dict[str, Any]:
    """`key=value:Effect`, `key:Effect`, `key=value` or `key` (Run:ai's --toleration)."""
    rest, _, effect = text.partition(":")
    key, equals, value = rest.partition("=")
    if not key:
        raise BadFlag(f"--toleration takes key[=value][:effect], not {text!r}")
    toleration: dict[str, Any] = {"name": key, "key": key}
    if equals:
        toleration.update(operator="Equal", value=value)
    else:
        toleration["operator"] = "Exists"
    if effect:
        toleration["effect"] = effect
    return toleration
