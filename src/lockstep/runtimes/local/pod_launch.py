"""Translate a replica plan into what the local runtime runs for each pod: argv, environment,
working directory, limits. Pure; `LocalRuntime.render` returns exactly this as the dry run."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lockstep.domain.command_line import split_command_line
from lockstep.domain.images import mapped_environment
from lockstep.domain.plan import Replica, ReplicaPlan, Role
from lockstep.domain.quantities import parse_quantity
from lockstep.domain.secrets import ProjectSecrets, SecretKind
from lockstep.domain.workload import PortBinding
from lockstep.frameworks.endpoints import Endpoints
from lockstep.frameworks.registry import wiring_for
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.probes import HttpProbe
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.runtimes.local.sandbox.asked import VolumeAsk
from lockstep.runtimes.local.sandbox.definition import SandboxSpec
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.pod import EnvironmentVariable, ProbeScheme

LOOPBACK = "127.0.0.1"

PASS_THROUGH = (
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TERM",
)
"""Variables of lockstep's own environment a pod inherits, as a container inherits its image's."""


@dataclass(frozen=True, slots=True)
class PodIdentity:
    """Facts about a pod that `podFieldRef` may ask for."""

    uid: str
    name: str
    namespace: str
    node_name: str


@dataclass(frozen=True, slots=True)
class Limits:
    """What a pod's processes may use, from its compute spec."""

    memory_bytes: int | None = None
    cpu_cores: float | None = None
    pids: int | None = None
    """The most processes and threads at once (no field of the spec: `pod_bounds`)."""
    disk_bytes: int | None = None
    """The most its writable layers may hold on disk (no field of the spec: `pod_bounds`)."""

    @property
    def whole_cpus(self) -> int | None:
        """The cores a CPU limit pins the pod to where it cannot be a quota."""
        return None if self.cpu_cores is None else max(1, math.ceil(self.cpu_cores))

    def to_json(self) -> dict[str, Any]:
        return {
            "memoryBytes": self.memory_bytes,
            "cpuCores": self.cpu_cores,
            "pids": self.pids,
            "diskBytes": self.disk_bytes,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Limits:
        return cls(
            memory_bytes=data.get("memoryBytes"),
            cpu_cores=data.get("cpuCores"),
            pids=data.get("pids"),
            disk_bytes=data.get("diskBytes"),
        )


def limits_of(replica: Replica) -> Limits:
    compute = replica.spec.compute
    if compute is None:
        return Limits()
    memory = compute.cpu_memory_limit
    return Limits(
        memory_bytes=None if memory is None else math.ceil(parse_quantity(str(memory))),
        cpu_cores=compute.cpu_core_limit or None,
    )


@dataclass(frozen=True, slots=True)
class ImageEnvironment:
    """A local Python environment (a venv or conda prefix) standing in for an image."""

    prefix: Path

    def variables(self, inherited_path: str) -> dict[str, str]:
        """Its bin/ first on PATH, and the variable its kind of environment sets."""
        kind = "VIRTUAL_ENV" if (self.prefix / "pyvenv.cfg").exists() else "CONDA_PREFIX"
        path = (
            f"{self.prefix / 'bin'}:{inherited_path}"
            if inherited_path
            else str(self.prefix / "bin")
        )
        return {"PATH": path, kind: str(self.prefix)}


def lockstep_environment() -> Path | None:
    """The virtual environment lockstep runs in (None outside one). A pod of an image no
    environment is mapped to runs in lockstep's own environment, so its `bin/` comes first on
    the pod's PATH, as in an activated venv: `python3`, `torchrun` and `mpirun` are those
    installed with lockstep (`.venv/bin/pip install torch` makes torch a pod's)."""
    return Path(sys.prefix) if sys.prefix != sys.base_prefix else None


def with_paths_from(argv: Sequence[str], directory: Path) -> tuple[str, ...]:
    """`argv` with each relative path that names something in `directory` made absolute:
    a pod without a `workingDir` runs in its own directory, but `examples/train.py` means
    the file where lockstep was started, as a command typed there would. A command without a
    `/` is looked up on PATH, as a shell does; options (`-x`, `--y=…`) and words that name
    nothing there are left as they are."""

    def resolved(position: int, word: str) -> str:
        relative = word and not word.startswith(("/", "-", "~"))
        if relative and (position > 0 or "/" in word) and _names_something(directory / word):
            return str(directory / word)
        return word

    return tuple(resolved(position, word) for position, word in enumerate(argv))


def _names_something(path: Path) -> bool:
    try:
        return path.exists()
    except (OSError, ValueError):  # too long a name, a NUL: no file has it
        return False


def environment_for_image(image: str, environments: Mapping[str, Path]) -> ImageEnvironment | None:
    """The environment an operator mapped to `image` (domain/images.py), if any."""
    found = mapped_environment(image, environments)
    return None if found is None else ImageEnvironment(found)


@dataclass(frozen=True, slots=True)
class Launch:
    """One pod's process: what runs, with which environment, where."""

    pod_name: str
    role: str
    index: int
    image: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    working_dir: str | None
    project_id: str = ""
    references: Mapping[str, ValueReference] = field(default_factory=dict)
    """Variables read from the project's secrets and config maps when the pod starts."""
    notes: tuple[str, ...] = field(default=())
    limits: Limits = field(default_factory=Limits)
    create_home_dir: bool = False
    """HOME is a directory of the pod's own, created when the pod starts."""
    ports: tuple[PortBinding, ...] = ()
    readiness: HttpProbe | None = None
    sandbox: SandboxSpec | None = None
    """The sandbox the pod runs in (None: none, lockstep runs without one)."""
    volumes: tuple[VolumeAsk, ...] = ()
    """The storage to prepare before the pod starts (mounted as `sandbox` says)."""
    unapplied: tuple[str, ...] = ()
    """What the spec asks that is not applied (lockstep runs without a sandbox)."""
    worker_agent: bool = False
    """The pod runs lockstep's worker agent, outside its sandbox; the agent puts each
    command it runs in the sandbox."""

    def to_json(self) -> dict[str, Any]:
        return {
            "podName": self.pod_name,
            "role": self.role,
            "index": self.index,
            "image": self.image,
            "argv": list(self.argv),
            "env": dict(self.env),
            "workingDir": self.working_dir,
            "projectId": self.project_id,
            "references": {name: ref.to_json() for name, ref in self.references.items()},
            "limits": self.limits.to_json(),
            "createHomeDir": self.create_home_dir,
            "ports": [port.to_json() for port in self.ports],
            "readiness": None if self.readiness is None else self.readiness.to_json(),
            "sandbox": None if self.sandbox is None else self.sandbox.to_json(),
            "volumes": [volume.to_json() for volume in self.volumes],
            "unapplied": list(self.unapplied),
            "workerAgent": self.worker_agent,
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Launch:
        return cls(
            pod_name=data["podName"],
            role=data["role"],
            index=data["index"],
            image=data["image"],
            argv=tuple(data["argv"]),
            env=dict(data["env"]),
            working_dir=data["workingDir"],
            project_id=data.get("projectId", ""),
            references={
                name: ValueReference.from_json(ref)
                for name, ref in (data.get("references") or {}).items()
            },
            notes=tuple(data["notes"]),
            limits=Limits.from_json(data.get("limits") or {}),
            create_home_dir=bool(data.get("createHomeDir")),
            ports=tuple(PortBinding(**port) for port in data.get("ports") or ()),
            readiness=None if not data.get("readiness") else HttpProbe.from_json(data["readiness"]),
            sandbox=None if not data.get("sandbox") else SandboxSpec.from_json(data["sandbox"]),
            volumes=tuple(VolumeAsk.from_json(v) for v in data.get("volumes") or ()),
            unapplied=tuple(data.get("unapplied") or ()),
            worker_agent=bool(data.get("workerAgent")),
        )


WORKER_AGENT = (sys.executable, "-m", "lockstep.runtimes.local.worker_agent")
"""What an MPI worker without a command runs: lockstep's agent, which serves the launcher's
remote starts as sshd would (see worker_agent.py)."""
WORKLOAD_DIR = "LOCKSTEP_WORKLOAD_DIR"
"""The variable that tells the worker agent its workload's directory."""


def runs_worker_agent(plan: ReplicaPlan, replica: Replica) -> bool:
    return (
        plan.framework is DistributedFramework.MPI
        and replica.role is Role.WORKER
        and not replica.spec.command
    )


def argv_of(plan: ReplicaPlan, replica: Replica) -> tuple[str, ...]:
    """The pod's command and args, each split as a shell would split it."""
    if runs_worker_agent(plan, replica):
        return WORKER_AGENT
    try:
        command = split_command_line(replica.spec.command or "")
        args = split_command_line(replica.spec.args or "")
    except ValueError as error:
        raise PodStartError(f"pod {replica.pod_name}: its command line {error}") from error
    if not command:
        raise PodStartError(
            f"pod {replica.pod_name} has no command: the local runtime cannot run an "
            "image's entrypoint, so set spec.command"
        )
    return (*command, *args)


_FIELD_REFS: dict[str, Callable[[PodIdentity], str]] = {
    "metadata.name": lambda pod: pod.name,
    "metadata.namespace": lambda pod: pod.namespace,
    "metadata.uid": lambda pod: pod.uid,
    "spec.nodeName": lambda pod: pod.node_name,
    "spec.serviceAccountName": lambda _: "default",
    "status.podIP": lambda _: LOOPBACK,
    "status.podIPs": lambda _: LOOPBACK,
    "status.hostIP": lambda _: LOOPBACK,
    "status.hostIPs": lambda _: LOOPBACK,
}


@dataclass(frozen=True, slots=True)
class ValueReference:
    """An environment variable whose value is a key of a secret or config map of the
    workload's project, read when the pod starts (so it is never written to disk)."""

    kind: SecretKind
    name: str
    key: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind.value, "name": self.name, "key": self.key}

    @classmethod
    def from_json(cls, data: Mapping[str, str]) -> ValueReference:
        return cls(SecretKind(data["kind"]), data["name"], data["key"])

    def value_in(self, values: ProjectSecrets) -> str | None:
        if self.kind is SecretKind.SECRET:
            return values.secret(self.name, self.key)
        return values.config_map(self.name, self.key)


def resolve_references(launch: Launch, values: ProjectSecrets) -> dict[str, str]:
    """The values of a launch's references; `PodStartError` naming the first one missing."""
    resolved = {}
    for variable, reference in launch.references.items():
        value = reference.value_in(values)
        if value is None:
            raise PodStartError(
                f"environment variable {variable}: the project has no {reference.kind} "
                f"{reference.name!r} with a key {reference.key!r}"
            )
        resolved[variable] = value
    return resolved


def resolve(variable: EnvironmentVariable, pod: PodIdentity) -> str | ValueReference:
    """The value of one environment variable, or the reference to read it from when the pod
    starts. A reference wins over a literal value."""
    for kind, reference in (
        (SecretKind.SECRET, variable.secret),
        (SecretKind.CONFIG_MAP, variable.config_map),
    ):
        if reference is not None:
            if not reference.name or not reference.key:
                raise PodStartError(
                    f"environment variable {variable.name}: a {kind} reference needs a name "
                    "and a key"
                )
            return ValueReference(kind, reference.name, reference.key)
    if variable.pod_field_ref is not None and variable.pod_field_ref.path is not None:
        path = variable.pod_field_ref.path
        if path not in _FIELD_REFS:
            raise PodStartError(
                f"environment variable {variable.name}: podFieldRef {path!r} is not one of "
                f"{', '.join(sorted(_FIELD_REFS))}"
            )
        return _FIELD_REFS[path](pod)
    if variable.user_credential is not None:
        raise PodStartError(
            f"environment variable {variable.name}: user credentials are not available "
            "in the local runtime"
        )
    return variable.value or ""


def launch_of(
    plan: ReplicaPlan,
    replica: Replica,
    *,
    pod: PodIdentity,
    endpoints: Endpoints,
    inherited: Mapping[str, str],
    project_id: str,
    ports: Sequence[PortBinding] = (),
    runtime_env: Mapping[str, str] | None = None,
    image_environments: Mapping[str, Path] | None = None,
    own_environment: Path | None = None,
    paths_from: Path | None = None,
) -> Launch:
    """The launch of one replica; `PodStartError` when it cannot be run here. `runtime_env`
    holds variables the runtime adds, such as the paths of files it prepared for the pod;
    `image_environments` the local environments operators mapped to image names;
    `own_environment` lockstep's own (`lockstep_environment()`), for pods of other images;
    `paths_from` the directory lockstep was started from, against which the relative paths
    of the command line of a pod without a `workingDir` resolve (`with_paths_from`)."""
    env = {key: inherited[key] for key in PASS_THROUGH if key in inherited}
    env |= {key: value for key, value in inherited.items() if key.startswith("LC_")}
    image = replica.spec.image or ""
    notes: list[str] = []
    mapped = environment_for_image(image, image_environments or {})
    if mapped is not None:
        env |= mapped.variables(env.get("PATH", ""))
        notes.append(f"image {image} runs in the local environment {mapped.prefix}")
    else:
        notes.append(
            f"image {image or '(none)'} has no local environment mapped: the pod runs in "
            "lockstep's own environment"
        )
        if own_environment is not None:
            inherited_path = env.get("PATH")
            own_bin = str(own_environment / "bin")
            env["PATH"] = f"{own_bin}:{inherited_path}" if inherited_path else own_bin
    if replica.spec.compute is not None and replica.spec.compute.large_shm_request:
        notes.append("largeShmRequest: the pod shares this machine's /dev/shm")
    references: dict[str, ValueReference] = {}
    for variable in replica.spec.environment_variables or ():
        if variable.exclude or not variable.name:
            continue
        value = resolve(variable, pod)
        if isinstance(value, ValueReference):
            references[variable.name] = value
            env.pop(variable.name, None)
        else:
            env[variable.name] = value
            references.pop(variable.name, None)
    env |= wiring_for(plan.framework)(plan, replica, endpoints)
    env |= {host_port_variable(port.container): str(port.host) for port in ports}
    env |= runtime_env or {}
    env |= {"HOSTNAME": pod.name, POD_MARKER: pod.uid}
    argv = argv_of(plan, replica)
    if paths_from is not None and not replica.spec.working_dir:
        argv = with_paths_from(argv, paths_from)
    return Launch(
        project_id=project_id,
        references={n: r for n, r in references.items() if n not in env},
        pod_name=replica.pod_name,
        role=replica.role.value,
        index=replica.index,
        image=image,
        argv=argv,
        env=env,
        working_dir=replica.spec.working_dir,
        notes=tuple(notes),
        limits=limits_of(replica),
        create_home_dir=bool(replica.spec.create_home_dir),
        ports=tuple(ports),
        readiness=readiness_of(replica, ports),
        worker_agent=runs_worker_agent(plan, replica),
    )


def host_port_variable(container_port: int) -> str:
    """The variable that tells a pod where its container port is on this machine."""
    return f"LOCKSTEP_HOST_PORT_{container_port}"


def container_ports(replica: Replica) -> list[tuple[int, int | None, str | None]]:
    """The ports a replica declares: container port, the machine port asked for, name."""
    return [
        (port.container, port.external, port.name)
        for port in replica.spec.ports or ()
        if not port.exclude and port.container is not None
    ]


def readiness_of(replica: Replica, ports: Sequence[PortBinding]) -> HttpProbe | None:
    """The replica's httpGet readiness probe, aimed at the machine port of its container
    port (the port itself when the pod does not declare it)."""
    probes = replica.spec.probes
    probe = None if probes is None else probes.readiness
    get = None if probe is None or probe.handler is None else probe.handler.http_get
    if probe is None or get is None or get.port is None:
        return None
    host_port = next((p.host for p in ports if p.container == get.port), get.port)
    return HttpProbe(
        port=host_port,
        path=get.path or "/",
        host=get.host or LOOPBACK,
        https=get.scheme is ProbeScheme.HTTPS,
        initial_delay=float(probe.initial_delay_seconds or 0),
        period=float(probe.period_seconds or 10),
        timeout=float(probe.timeout_seconds or 1),
        success_threshold=probe.success_threshold or 1,
        failure_threshold=probe.failure_threshold or 3,
    )
