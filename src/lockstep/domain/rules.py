"""The semantic rules of a creation request (distributed, training, workspace), beyond what
the schema states.

`check_request` and `check_single_pod_request` return every violation at once, each naming
the field (camelCase path) and the rule, so a user fixes a request in one round trip. Pure:
the service adds the rules that need the store (known project and cluster, free name).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal

from lockstep.domain.command_line import split_command_line
from lockstep.domain.errors import Violation
from lockstep.domain.plan import elastic_bounds, longest_pod_name_suffix
from lockstep.domain.quantities import MAX_QUANTITY, QUANTITY_BOUND, parse_quantity
from lockstep.schemas.base import WireModel, is_dns_label
from lockstep.schemas.bounds import INT32_MAX
from lockstep.schemas.compute import Compute, GpuRequestType
from lockstep.schemas.distributed import (
    DEFAULT_SLOTS_PER_WORKER,
    DEFAULT_SSH_AUTH_MOUNT_PATH,
    DistributedCreationRequest,
    DistributedFramework,
    PodSpec,
    WorkerSpec,
    pod_wire,
)
from lockstep.schemas.pod import MatchExpressionOperator, RestartPolicy, TolerationOperator
from lockstep.schemas.security import Security
from lockstep.schemas.single_pod import TrainingCreationRequest, WorkspaceCreationRequest
from lockstep.schemas.storage import Storage

NAME_SUFFIX_LENGTH = 6
"""`useGivenNameAsPrefix` appends `-` and five random characters."""

MAX_NAME_LENGTH = 63
_LABEL_NAME = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)$")
_LABEL_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_GROUPS = re.compile(r"^\s*\d+\s*(,\s*\d+\s*)*$")
_INTEGER = re.compile(r"^-?[0-9]+$")

ELASTIC_MIN = (
    "minReplicas: an elastic PyTorch workload (minReplicas/maxReplicas) is numWorkers worker "
    "pods, each a node of the rendezvous, and needs at least minReplicas of them"
)
ELASTIC_MAX = (
    "maxReplicas: an elastic PyTorch workload (minReplicas/maxReplicas) is numWorkers worker "
    "pods, each a node of the rendezvous, which admits at most maxReplicas nodes"
)
ELASTIC_NO_MASTER = (
    "must be omitted or equal to spec for an elastic PyTorch workload (minReplicas/"
    "maxReplicas): it is worker pods only, with no master pod"
)


def check_request(request: DistributedCreationRequest) -> list[Violation]:
    """Every semantic violation of `request`, in a stable order; empty when it is valid."""
    violations: list[Violation] = []
    if request.template_id is not None:
        violations.append(Violation("templateId", "workload templates are not supported"))
    spec = request.spec
    if spec is None:
        violations.append(Violation("spec", "required"))
        return violations
    violations += _check_topology(spec)
    violations += _check_name(request, spec)
    violations += _check_master(request, spec)
    violations += _check_pod_spec("spec", spec)
    if request.master_spec is not None:
        violations += _check_pod_spec("masterSpec", request.master_spec)
    return violations


def check_single_pod_request(
    request: TrainingCreationRequest | WorkspaceCreationRequest,
) -> list[Violation]:
    """Every semantic violation of a training's or workspace's request; empty when valid."""
    violations: list[Violation] = []
    if request.template_id is not None:
        violations.append(Violation("templateId", "workload templates are not supported"))
    spec = request.spec
    if spec is None:
        violations.append(Violation("spec", "required"))
        return violations
    if not spec.image:
        violations.append(Violation("spec.image", "required"))
    if spec.restart_policy is RestartPolicy.ALWAYS and isinstance(request, TrainingCreationRequest):
        violations.append(
            Violation(
                "spec.restartPolicy",
                "must be Never or OnFailure: a training's pods run to completion, as a Job's do",
            )
        )
    completions = 1
    if isinstance(request, TrainingCreationRequest) and request.spec is not None:
        for field, value in (
            ("completions", request.spec.completions),
            ("parallelism", request.spec.parallelism),
        ):
            if value is not None and value < 1:
                violations.append(Violation(f"spec.{field}", "must be greater than or equal to 1"))
        completions = max(1, request.spec.completions or 1)
    violations += _check_name_fits(request, f"-{completions - 1}")
    violations += _check_pod_spec("spec", spec)
    return violations


def _check_name(request: DistributedCreationRequest, spec: WorkerSpec) -> Iterator[Violation]:
    if spec.distributed_framework is None or spec.num_workers is None:
        yield from _check_name_fits(request, None)
        return
    suffix = longest_pod_name_suffix(spec.distributed_framework, spec.num_workers)
    yield from _check_name_fits(request, suffix)


def _check_name_fits(
    request: DistributedCreationRequest | TrainingCreationRequest | WorkspaceCreationRequest,
    suffix: str | None,
) -> Iterator[Violation]:
    """The name is a DNS label that leaves room for the pod names' `suffix`."""
    name = request.name
    if not is_dns_label(name):
        yield Violation(
            "name",
            "must be a DNS-1123 label: lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters",
        )
        return
    if suffix is None:
        return
    room = MAX_NAME_LENGTH - len(suffix)
    if request.use_given_name_as_prefix:
        room -= NAME_SUFFIX_LENGTH
    if len(name) > room:
        yield Violation(
            "name",
            f"must be at most {room} characters so that pod names such as "
            f"'<name>{suffix}' fit in {MAX_NAME_LENGTH}",
        )


def _check_topology(spec: WorkerSpec) -> Iterator[Violation]:
    framework = spec.distributed_framework
    if framework is None:
        yield Violation("spec.distributedFramework", "required")
    if spec.num_workers is None:
        yield Violation("spec.numWorkers", "required")
    if not spec.image:
        yield Violation("spec.image", "required")
    yield from _check_elasticity(spec)
    if framework is not DistributedFramework.MPI:
        # Clients generated from the document send its defaults (slotsPerWorker 1,
        # sshAuthMountPath /root/.ssh) for every framework: those are no-ops, not errors.
        for field, value, default in (
            ("slotsPerWorker", spec.slots_per_worker, DEFAULT_SLOTS_PER_WORKER),
            ("sshAuthMountPath", spec.ssh_auth_mount_path, DEFAULT_SSH_AUTH_MOUNT_PATH),
            ("mpiLauncherCreationPolicy", spec.mpi_launcher_creation_policy, None),
        ):
            if value is not None and value != default:
                yield Violation(f"spec.{field}", "allowed only when distributedFramework is MPI")
    if spec.ssh_auth_mount_path is not None and not spec.ssh_auth_mount_path.startswith("/"):
        yield Violation("spec.sshAuthMountPath", "must be an absolute path")


def _check_elasticity(spec: WorkerSpec) -> Iterator[Violation]:
    low, high, workers = spec.min_replicas, spec.max_replicas, spec.num_workers
    if low is None and high is None:
        return
    for field, value in (("minReplicas", low), ("maxReplicas", high)):
        if value is not None and value < 1:
            yield Violation(f"spec.{field}", "must be greater than or equal to 1")
    if low is not None and high is not None and high < low:
        yield Violation("spec.maxReplicas", "must be greater than or equal to minReplicas")
        return
    if spec.distributed_framework is not DistributedFramework.PYTORCH:
        for field, value in (("minReplicas", low), ("maxReplicas", high)):
            if value is not None and value != workers:
                yield Violation(
                    f"spec.{field}",
                    "elastic scaling (minReplicas/maxReplicas) is allowed only when "
                    "distributedFramework is PyTorch; otherwise it may only equal numWorkers",
                )
        return
    # The bounds count worker pods, every one a node of the rendezvous (there is no master).
    if workers is not None:
        if low is not None and workers < low:
            yield Violation("spec.numWorkers", f"must be greater than or equal to {ELASTIC_MIN}")
        if high is not None and workers > high:
            yield Violation("spec.numWorkers", f"must be less than or equal to {ELASTIC_MAX}")


def _check_master(request: DistributedCreationRequest, spec: WorkerSpec) -> Iterator[Violation]:
    same, master = request.master_spec_same_as_worker, request.master_spec
    if elastic_bounds(spec) is not None and master is not None:
        if master.to_wire() != pod_wire(spec):
            yield Violation("masterSpec", ELASTIC_NO_MASTER)
        return
    if same is False and master is None:
        yield Violation("masterSpec", "required when masterSpecSameAsWorker is false")
    if same is True and master is not None and master.to_wire() != pod_wire(spec):
        yield Violation(
            "masterSpec",
            "must be omitted or equal to the worker spec when masterSpecSameAsWorker is true",
        )
    if master is not None and same is not True and not master.image:
        yield Violation("masterSpec.image", "required when the master has its own spec")


def _check_pod_spec(path: str, spec: PodSpec) -> Iterator[Violation]:
    for field, text in (("command", spec.command), ("args", spec.args)):
        if text is not None:
            try:
                split_command_line(text)
            except ValueError as error:
                yield Violation(f"{path}.{field}", f"must split as a shell would: {error}")
    if spec.compute is not None:
        yield from _check_compute(f"{path}.compute", spec.compute)
    if spec.storage is not None:
        yield from _check_storage(f"{path}.storage", spec.storage)
    for field, value in (
        ("backoffLimit", spec.backoff_limit),
        (
            "autoDeletionTimeAfterCompletionSeconds",
            spec.auto_deletion_time_after_completion_seconds,
        ),
    ):
        if value is not None and value < 0:
            yield Violation(f"{path}.{field}", "must be greater than or equal to 0")
    for i, env in enumerate(spec.environment_variables or ()):
        where = f"{path}.environmentVariables[{i}]"
        if not env.name:
            yield Violation(f"{where}.name", "required")
        elif "=" in env.name:
            yield Violation(f"{where}.name", "must not contain '='")
        sources: tuple[tuple[str, WireModel | None, tuple[str, ...]], ...] = (
            ("secret", env.secret, ("name", "key")),
            ("configMap", env.config_map, ("name", "key")),
            ("userCredential", env.user_credential, ("name", "key")),
            ("podFieldRef", env.pod_field_ref, ("path",)),
        )
        for source, reference, keys in sources:
            if reference is not None:
                for key in keys:
                    if getattr(reference, key) is None:
                        yield Violation(f"{where}.{source}.{key}", "required")
    for i, label in enumerate(spec.labels or ()):
        if not label.name:
            yield Violation(f"{path}.labels[{i}].name", "required")
        elif not _is_label_key(label.name):
            yield Violation(
                f"{path}.labels[{i}].name",
                "must be a Kubernetes label key: an optional DNS prefix and '/', then up "
                "to 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric",
            )
        if label.value and not _is_label_value(label.value):
            yield Violation(
                f"{path}.labels[{i}].value",
                "must be at most 63 letters, digits, '-', '_' or '.', "
                "starting and ending alphanumeric",
            )
    for i, annotation in enumerate(spec.annotations or ()):
        if not annotation.name:
            yield Violation(f"{path}.annotations[{i}].name", "required")
    for i, port in enumerate(spec.ports or ()):
        if port.container is None:
            yield Violation(f"{path}.ports[{i}].container", "required")
    for i, toleration in enumerate(spec.tolerations or ()):
        where = f"{path}.tolerations[{i}]"
        if toleration.operator is TolerationOperator.EXISTS and toleration.value:
            yield Violation(f"{where}.value", "must be empty when operator is Exists")
        if not toleration.key and toleration.operator is not TolerationOperator.EXISTS:
            yield Violation(f"{where}.operator", "must be Exists when no key is given")
    if spec.pod_affinity is not None and spec.pod_affinity.type and not spec.pod_affinity.key:
        yield Violation(f"{path}.podAffinity.key", "required when type is set")
    probe = spec.probes.readiness if spec.probes else None
    if probe and probe.handler and probe.handler.http_get and probe.handler.http_get.port is None:
        yield Violation(f"{path}.probes.readiness.handler.httpGet.port", "required")
    if spec.node_affinity_required is not None:
        yield from _check_node_affinity(f"{path}.nodeAffinityRequired", spec)
    if spec.security is not None:
        yield from _check_security(f"{path}.security", spec.security)


def _check_security(path: str, security: Security) -> Iterator[Violation]:
    groups = security.supplemental_groups
    if groups and not _GROUPS.fullmatch(groups):
        yield Violation(
            f"{path}.supplementalGroups",
            "must be a comma-separated list of group ids, e.g. '2,3,5'",
        )
    elif groups and any(len(g.strip()) > 10 or int(g) > INT32_MAX for g in groups.split(",")):
        yield Violation(
            f"{path}.supplementalGroups", f"each group id must be less than or equal to {INT32_MAX}"
        )
    if security.run_as_non_root and security.run_as_uid == 0:
        yield Violation(f"{path}.runAsUid", "must not be 0 when runAsNonRoot is true")


def _check_node_affinity(path: str, spec: PodSpec) -> Iterator[Violation]:
    affinity = spec.node_affinity_required
    assert affinity is not None
    for t, term in enumerate(affinity.node_selector_terms or ()):
        for e, expression in enumerate(term.match_expressions or ()):
            where = f"{path}.nodeSelectorTerms[{t}].matchExpressions[{e}].values"
            values = expression.values or []
            operator = expression.operator
            if operator in {MatchExpressionOperator.IN, MatchExpressionOperator.NOT_IN}:
                if not values:
                    yield Violation(where, f"required when operator is {operator}")
            elif operator in {
                MatchExpressionOperator.EXISTS,
                MatchExpressionOperator.DOES_NOT_EXIST,
            }:
                if values:
                    yield Violation(where, f"must be empty when operator is {operator}")
            elif len(values) != 1 or not _INTEGER.fullmatch(values[0]):
                yield Violation(where, f"must hold exactly one integer when operator is {operator}")


def _check_compute(path: str, compute: Compute) -> Iterator[Violation]:
    kind = compute.gpu_request_type
    if kind is GpuRequestType.PORTION and compute.gpu_portion_request is None:
        yield Violation(f"{path}.gpuPortionRequest", "required when gpuRequestType is portion")
    if kind is GpuRequestType.MEMORY and compute.gpu_memory_request is None:
        yield Violation(f"{path}.gpuMemoryRequest", "required when gpuRequestType is memory")
    if kind is None and compute.gpu_portion_request is not None and compute.gpu_memory_request:
        yield Violation(
            f"{path}.gpuRequestType",
            "required when both gpuPortionRequest and gpuMemoryRequest are set",
        )
    if kind is GpuRequestType.MEMORY and (compute.gpu_devices_request or 0) > 1:
        yield Violation(
            f"{path}.gpuDevicesRequest",
            "more than one device is allowed with a fractional request only when "
            "gpuRequestType is portion",
        )
    portion = compute.gpu_portion_request
    if portion is not None and not 0 < portion <= 1:
        yield Violation(
            f"{path}.gpuPortionRequest",
            "must be greater than 0 and at most 1 (a fraction of one device); "
            "use gpuDevicesRequest for whole devices",
        )
    if compute.gpu_portion_limit is not None:
        if portion is None:
            yield Violation(f"{path}.gpuPortionLimit", "allowed only with gpuPortionRequest")
        elif compute.gpu_portion_limit < portion:
            yield Violation(
                f"{path}.gpuPortionLimit", "must be greater than or equal to gpuPortionRequest"
            )
    if (
        compute.cpu_core_limit is not None
        and compute.cpu_core_request is not None
        and compute.cpu_core_limit < compute.cpu_core_request
    ):
        yield Violation(f"{path}.cpuCoreLimit", "must be greater than or equal to cpuCoreRequest")
    parsed: dict[str, Decimal] = {}
    for field, text in (
        ("gpuMemoryRequest", compute.gpu_memory_request),
        ("gpuMemoryLimit", compute.gpu_memory_limit),
        ("cpuMemoryRequest", compute.cpu_memory_request),
        ("cpuMemoryLimit", compute.cpu_memory_limit),
    ):
        if text is None:
            continue
        value, broken = _quantity(text, "must be a quantity such as 512Mi, 20M or 2G")
        if broken is not None:
            yield Violation(f"{path}.{field}", broken)
        elif value is not None:
            parsed[field] = value
    for field, cores in (
        ("cpuCoreRequest", compute.cpu_core_request),
        ("cpuCoreLimit", compute.cpu_core_limit),
    ):
        if cores is not None and cores > MAX_CPU_CORES:
            yield Violation(f"{path}.{field}", CPU_CORES_BOUND)
    for limit, request in (
        ("gpuMemoryLimit", "gpuMemoryRequest"),
        ("cpuMemoryLimit", "cpuMemoryRequest"),
    ):
        if limit in parsed and request in parsed and parsed[limit] < parsed[request]:
            yield Violation(f"{path}.{limit}", f"must be greater than or equal to {request}")
    for i, resource in enumerate(compute.extended_resources or ()):
        for key, given in (("resource", resource.resource), ("quantity", resource.quantity)):
            if given is None:
                yield Violation(f"{path}.extendedResources[{i}].{key}", "required")
        if resource.quantity is not None:
            _, broken = _quantity(resource.quantity, "must be a quantity such as 1, 500m or 2k")
            if broken is not None:
                yield Violation(f"{path}.extendedResources[{i}].quantity", broken)


MAX_CPU_CORES = int(MAX_QUANTITY) // 1000
"""The most cores a request may ask: Kubernetes holds CPU as millicores in a quantity."""
CPU_CORES_BOUND = (
    f"must be at most {MAX_CPU_CORES} cores: Kubernetes holds CPU as millicores, "
    f"at most {int(MAX_QUANTITY)} (2^63-1)"
)


def _quantity(text: str, rule: str) -> tuple[Decimal | None, str | None]:
    """The value of a quantity a request asks for, or the rule it breaks: `rule` when it is
    not a quantity, `QUANTITY_BOUND` when it is over Kubernetes' largest."""
    try:
        value = parse_quantity(text)
    except ValueError:
        return None, rule
    if value > MAX_QUANTITY:
        return None, QUANTITY_BOUND
    return value, None


_STORAGE_REQUIRED: dict[str, tuple[str, ...]] = {
    "dataVolume": ("id", "mountPath"),
    "pvc": ("path",),
    "hostPath": ("path", "mountPath"),
    "nfs": ("server", "path", "mountPath"),
    "git": ("repository", "path"),
    "s3": ("bucket", "path"),
    "configMapVolume": ("configMap", "mountPath"),
    "secretVolume": ("secret", "mountPath"),
    "emptyDirVolume": ("path",),
}


def _check_storage(path: str, storage: Storage) -> Iterator[Violation]:
    wire = storage.to_wire()
    for kind, required in _STORAGE_REQUIRED.items():
        for i, item in enumerate(wire.get(kind) or ()):
            for key in required:
                if item.get(key) is None:
                    yield Violation(f"{path}.{kind}[{i}].{key}", "required")
    for i, pvc in enumerate(storage.pvc or ()):
        if pvc.existing_pvc and not pvc.claim_name:
            yield Violation(f"{path}.pvc[{i}].claimName", "required when existingPvc is true")
        if pvc.claim_name and not is_dns_label(pvc.claim_name):
            yield Violation(
                f"{path}.pvc[{i}].claimName",
                "must be a DNS-1123 label: lower-case letters, digits and '-', starting and "
                "ending with a letter or digit",
            )
        if not pvc.existing_pvc and pvc.claim_info is not None and pvc.claim_info.size is not None:
            _, broken = _quantity(pvc.claim_info.size, "must be a quantity such as 10Gi")
            if broken is not None:
                yield Violation(f"{path}.pvc[{i}].claimInfo.size", broken)
    for i, empty in enumerate(storage.empty_dir_volume or ()):
        if empty.size_limit is not None:
            _, broken = _quantity(empty.size_limit, "must be a quantity such as 1Gi")
            if broken is not None:
                yield Violation(f"{path}.emptyDirVolume[{i}].sizeLimit", broken)


def _is_label_key(key: str) -> bool:
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _LABEL_PREFIX.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _LABEL_NAME.fullmatch(name) is not None


def _is_label_value(value: str) -> bool:
    return len(value) <= 63 and _LABEL_NAME.fullmatch(value) is not None
