"""A pod spec's `environmentVariables` as a container's `env`: literal values, and references
to a secret's or config map's key or to a field of the pod, read by the kubelet when the
container starts.

Called by `pods` for the main container. As in the local runtime, a reference wins over a
literal value set beside it, a later variable of the same name replaces an earlier one, and an
excluded variable is left out. The operators add their own variables (MASTER_ADDR, TF_CONFIG,
…) to the container named for them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lockstep.runtimes.base import PodStartError
from lockstep.schemas.pod import EnvironmentVariable


def env_var(variable: EnvironmentVariable) -> dict[str, Any]:
    """One `EnvVar`; `PodStartError` for a user credential, which lives in lockstep's control
    plane, not in the cluster."""
    name = variable.name or ""
    secret, config_map, field = variable.secret, variable.config_map, variable.pod_field_ref
    if secret is not None:
        return {
            "name": name,
            "valueFrom": {"secretKeyRef": {"name": secret.name or "", "key": secret.key or ""}},
        }
    if config_map is not None:
        return {
            "name": name,
            "valueFrom": {
                "configMapKeyRef": {"name": config_map.name or "", "key": config_map.key or ""}
            },
        }
    if field is not None and field.path is not None:
        return {"name": name, "valueFrom": {"fieldRef": {"fieldPath": field.path}}}
    if variable.user_credential is not None:
        raise PodStartError(
            f"environment variable {name}: user credentials are not available to pods "
            "on Kubernetes; put the value in a secret of the project and use `secret`"
        )
    return {"name": name, "value": variable.value or ""}


def container_env(variables: Iterable[EnvironmentVariable]) -> list[dict[str, Any]]:
    """The `env` of the variables that are not excluded, in first-seen order, the last
    definition of a name winning."""
    env: dict[str, dict[str, Any]] = {}
    for variable in variables:
        if variable.exclude or not variable.name:
            continue
        env[variable.name] = env_var(variable)
    return list(env.values())
