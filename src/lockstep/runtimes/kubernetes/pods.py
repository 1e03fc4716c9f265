"""One replica type's pod template: the spec of what its pods run (`PodSpec`) as a container
named for the operator, with its environment, resources, probe, mounts and security, and the
pod's placement, scheduler wiring and metadata.

Called by `render` once per replica type of the job. Metadata: the spec's labels and
annotations (`exclude` honoured), under lockstep's own (the workload's identity, the role,
the scheduler's), which win a clash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lockstep.domain.command_line import split_command_line
from lockstep.domain.plan import ReplicaPlan, Role
from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.domain.workload import Workload
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.kubernetes.compute import pod_compute
from lockstep.runtimes.kubernetes.environment import container_env
from lockstep.runtimes.kubernetes.identity import ROLE, pod_selector, workload_labels
from lockstep.runtimes.kubernetes.kinds import ObjectKind
from lockstep.runtimes.kubernetes.placement import placement
from lockstep.runtimes.kubernetes.scheduling import Scheduling
from lockstep.runtimes.kubernetes.security import restricted_container, security_contexts
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.runtimes.kubernetes.storage import pod_storage
from lockstep.schemas.distributed import DistributedFramework, PodSpec
from lockstep.schemas.pod import Probes


@dataclass(frozen=True, slots=True)
class PodTemplate:
    """A replica type's `template`, and the claims its volumes need created first."""

    template: dict[str, Any]
    claims: list[dict[str, Any]]


def split(text: str | None, *, what: str) -> list[str]:
    """A command line split as a shell would split it."""
    try:
        return split_command_line(text or "")
    except ValueError as error:
        raise PodStartError(f"{what} {text!r} does not split as a shell would: {error}") from error


def readiness_probe(probes: Probes | None) -> dict[str, Any] | None:
    """The httpGet readiness probe, if the spec has one."""
    probe = None if probes is None else probes.readiness
    get = None if probe is None or probe.handler is None else probe.handler.http_get
    if probe is None or get is None or get.port is None:
        return None
    http: dict[str, Any] = {"path": get.path or "/", "port": get.port}
    if get.host:
        http["host"] = get.host
    if get.scheme is not None:
        http["scheme"] = get.scheme.value
    result: dict[str, Any] = {"httpGet": http}
    for key, value in (
        ("initialDelaySeconds", probe.initial_delay_seconds),
        ("periodSeconds", probe.period_seconds),
        ("timeoutSeconds", probe.timeout_seconds),
        ("successThreshold", probe.success_threshold),
        ("failureThreshold", probe.failure_threshold),
    ):
        if value is not None:
            result[key] = value
    return result


def container_ports(spec: PodSpec) -> list[dict[str, Any]]:
    """The container ports the spec declares, each once."""
    seen: dict[int, dict[str, Any]] = {}
    for port in spec.ports or ():
        if not port.exclude and port.container is not None:
            seen.setdefault(port.container, {"containerPort": port.container, "protocol": "TCP"})
    return list(seen.values())


def image_pull_secrets(spec: PodSpec) -> list[dict[str, str]]:
    secrets = []
    for secret in spec.image_pull_secrets or ():
        if secret.exclude or not secret.name:
            continue
        if secret.user_credential:
            raise PodStartError(
                f"image pull secret {secret.name}: user credentials are not available to "
                "pods on Kubernetes; use a secret of the project"
            )
        secrets.append({"name": secret.name})
    return secrets


def pod_metadata(
    spec: PodSpec, *, workload: Workload, role: Role | None, scheduling: Scheduling
) -> dict[str, Any]:
    """The template's labels and annotations: the spec's first, lockstep's over them."""
    labels = {
        label.name: label.value or ""
        for label in spec.labels or ()
        if not label.exclude and label.name
    }
    labels |= scheduling.pod_labels | workload_labels(workload)
    if role is not None:
        labels[ROLE] = role.value
    annotations = {
        a.name: a.value or "" for a in spec.annotations or () if not a.exclude and a.name
    }
    annotations |= scheduling.pod_annotations
    result: dict[str, Any] = {"labels": labels}
    if annotations:
        result["annotations"] = annotations
    return result


def main_container(
    spec: PodSpec, *, plan: ReplicaPlan, role: Role, kind: ObjectKind
) -> dict[str, Any]:
    """The container the operator wires (everything but resources, mounts and security)."""
    container: dict[str, Any] = {"name": kind.container_name, "image": spec.image or ""}
    if spec.image_pull_policy is not None:
        container["imagePullPolicy"] = spec.image_pull_policy.value
    command = split(spec.command, what="command")
    args = split(spec.args, what="args")
    mpi_worker = plan.framework is DistributedFramework.MPI and role is Role.WORKER
    if command:
        container["command"] = command
    if args and (command or not mpi_worker):
        container["args"] = args
    if spec.working_dir:
        container["workingDir"] = spec.working_dir
    if spec.stdin is not None:
        container["stdin"] = spec.stdin
    if spec.tty is not None:
        container["tty"] = spec.tty
    env = container_env(spec.environment_variables or ())
    if env:
        container["env"] = env
    ports = container_ports(spec)
    if ports:
        container["ports"] = ports
    probe = readiness_probe(spec.probes)
    if probe is not None:
        container["readinessProbe"] = probe
    return container


def pod_template(
    spec: PodSpec,
    *,
    workload: Workload,
    plan: ReplicaPlan,
    role: Role,
    kind: ObjectKind,
    scheduling: Scheduling,
    settings: KubernetesSettings,
    role_label: bool = True,
) -> PodTemplate:
    """The template of the pods of `role` running `spec`. Without `role_label` the template
    serves more than one role (JAX: the coordinating worker-0 and the other workers)."""
    container = main_container(spec, plan=plan, role=role, kind=kind)
    compute = pod_compute(spec.compute, settings.scheduler)
    if compute.resources:
        container["resources"] = compute.resources
    security = security_contexts(spec.security, workload.pod_security)
    if security.container:
        container["securityContext"] = security.container
    storage = pod_storage(spec.storage, workload=workload, settings=settings)
    mounts = [*storage.mounts, *compute.mounts]
    if mounts:
        container["volumeMounts"] = mounts
    if storage.devices:
        container["volumeDevices"] = storage.devices
    pod: dict[str, Any] = {"containers": [container]}
    if storage.init_containers:
        pod["initContainers"] = storage.init_containers
        if workload.pod_security is PodSecurityLevel.RESTRICTED:  # of every container
            pod["initContainers"] = [
                {**init, "securityContext": restricted_container(init.get("securityContext", {}))}
                for init in storage.init_containers
            ]
    volumes = [*storage.volumes, *compute.volumes]
    if volumes:
        pod["volumes"] = volumes
    pull_secrets = image_pull_secrets(spec)
    if pull_secrets:
        pod["imagePullSecrets"] = pull_secrets
    if spec.termination_grace_period_seconds is not None:
        pod["terminationGracePeriodSeconds"] = spec.termination_grace_period_seconds
    pod |= placement(spec, settings, selector=pod_selector(workload))
    pod |= security.pod
    pod |= scheduling.pod_spec
    meta = pod_metadata(
        spec, workload=workload, role=role if role_label else None, scheduling=scheduling
    )
    if compute.annotations:
        meta["annotations"] = {**meta.get("annotations", {}), **compute.annotations}
    return PodTemplate(template={"metadata": meta, "spec": pod}, claims=storage.claims)
