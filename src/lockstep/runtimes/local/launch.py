"""Translate a replica plan into what the local runtime runs for each pod: argv, environment,
working directory. Pure; `LocalRuntime.render` returns exactly this as the dry run."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from lockstep.domain.plan import Replica, ReplicaPlan, Role
from lockstep.frameworks.endpoints import Endpoints
from lockstep.frameworks.registry import wiring_for
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.processes import POD_MARKER
from lockstep.schemas.distributed import DistributedFramework
from lockstep.schemas.pod import EnvironmentVariable

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
class Launch:
    """One pod's process: what runs, with which environment, where."""

    pod_name: str
    role: str
    index: int
    image: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    working_dir: str | None
    notes: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "podName": self.pod_name,
            "role": self.role,
            "index": self.index,
            "image": self.image,
            "argv": list(self.argv),
            "env": dict(self.env),
            "workingDir": self.working_dir,
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
            notes=tuple(data["notes"]),
        )


WAIT_LIKE_SSHD = ("/bin/sh", "-c", "trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done")
"""What an MPI worker without a command runs: nothing, until it is stopped (as `sshd -De`
would, serving the launcher's remote starts)."""


def argv_of(plan: ReplicaPlan, replica: Replica) -> tuple[str, ...]:
    """The pod's command and args, each split as a shell would split it."""
    if (
        plan.framework is DistributedFramework.MPI
        and replica.role is Role.WORKER
        and not replica.spec.command
    ):
        return WAIT_LIKE_SSHD
    try:
        command = shlex.split(replica.spec.command or "")
        args = shlex.split(replica.spec.args or "")
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


def resolve(variable: EnvironmentVariable, pod: PodIdentity) -> str:
    """The value of one environment variable. A reference wins over a literal value."""
    if variable.secret is not None:
        raise PodStartError(
            f"environment variable {variable.name}: secret references are not available "
            "in the local runtime yet"
        )
    if variable.config_map is not None:
        raise PodStartError(
            f"environment variable {variable.name}: configMap references are not available "
            "in the local runtime yet"
        )
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
    runtime_env: Mapping[str, str] | None = None,
) -> Launch:
    """The launch of one replica; `PodStartError` when it cannot be run here. `runtime_env`
    holds variables the runtime adds, such as the paths of files it prepared for the pod."""
    env = {key: inherited[key] for key in PASS_THROUGH if key in inherited}
    env |= {key: value for key, value in inherited.items() if key.startswith("LC_")}
    for variable in replica.spec.environment_variables or ():
        if variable.exclude or not variable.name:
            continue
        env[variable.name] = resolve(variable, pod)
    env |= wiring_for(plan.framework)(plan, replica, endpoints)
    env |= runtime_env or {}
    env |= {"HOSTNAME": pod.name, POD_MARKER: pod.uid}
    return Launch(
        pod_name=replica.pod_name,
        role=replica.role.value,
        index=replica.index,
        image=replica.spec.image or "",
        argv=argv_of(plan, replica),
        env=env,
        working_dir=replica.spec.working_dir,
    )
