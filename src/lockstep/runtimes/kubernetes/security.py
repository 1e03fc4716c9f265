"""A pod spec's `security` as the pod's and the container's security contexts and the pod's
host namespaces.

Called by `pods`. User and group ids apply unless `uidGidSource` is `fromTheImage`, where the
image decides them (as Run:ai documents); `fromIdpToken` has no token here, so the ids given
apply as with `custom`.

A pod of a `restricted` project also gets what the level requires of every pod (the namespace's
`pod-security.kubernetes.io/enforce` label makes the API server refuse any other):
`allowPrivilegeEscalation: false`, every capability dropped but those its spec adds,
`runAsNonRoot: true` and the RuntimeDefault seccomp profile unless it names Localhost.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.schemas.security import SeccompProfileType, Security, UidGidSource


@dataclass(frozen=True, slots=True)
class SecurityContexts:
    """The pod-level fields (`securityContext`, `hostIPC`, `hostNetwork`) and the main
    container's `securityContext`."""

    pod: dict[str, Any] = field(default_factory=dict)
    container: dict[str, Any] = field(default_factory=dict)


def supplemental_groups(text: str) -> list[int]:
    """`"2,3,5"` as `[2, 3, 5]` (an empty string: none)."""
    return [int(group) for group in text.split(",") if group.strip()]


def security_contexts(
    security: Security | None, level: PodSecurityLevel = PodSecurityLevel.BASELINE
) -> SecurityContexts:
    contexts = SecurityContexts() if security is None else _asked(security)
    if level is PodSecurityLevel.RESTRICTED:
        return _restricted(contexts)
    return contexts


def _restricted(asked: SecurityContexts) -> SecurityContexts:
    pod_context = dict(asked.pod.get("securityContext") or {})
    pod_context["runAsNonRoot"] = True
    if pod_context.get("seccompProfile", {}).get("type") != SeccompProfileType.LOCALHOST.value:
        pod_context["seccompProfile"] = {"type": SeccompProfileType.RUNTIME_DEFAULT.value}
    container = restricted_container(asked.container)
    return SecurityContexts(pod={**asked.pod, "securityContext": pod_context}, container=container)


def restricted_container(context: dict[str, Any]) -> dict[str, Any]:
    """A container's `securityContext` as the restricted level requires it (of every
    container of the pod, init containers too)."""
    added = (context.get("capabilities") or {}).get("add")
    capabilities = {"drop": ["ALL"], **({"add": added} if added else {})}
    return {**context, "allowPrivilegeEscalation": False, "capabilities": capabilities}


def _asked(security: Security) -> SecurityContexts:
    pod_context: dict[str, Any] = {}
    if security.uid_gid_source is not UidGidSource.FROM_THE_IMAGE:
        if security.run_as_uid is not None:
            pod_context["runAsUser"] = security.run_as_uid
        if security.run_as_gid is not None:
            pod_context["runAsGroup"] = security.run_as_gid
        if security.supplemental_groups:
            pod_context["supplementalGroups"] = supplemental_groups(security.supplemental_groups)
    if security.run_as_non_root is not None:
        pod_context["runAsNonRoot"] = security.run_as_non_root
    if security.seccomp_profile_type is not None:
        pod_context["seccompProfile"] = {"type": security.seccomp_profile_type.value}
    container: dict[str, Any] = {}
    if security.read_only_root_filesystem is not None:
        container["readOnlyRootFilesystem"] = security.read_only_root_filesystem
    if security.allow_privilege_escalation is not None:
        container["allowPrivilegeEscalation"] = security.allow_privilege_escalation
    if security.capabilities:
        container["capabilities"] = {"add": [c.value for c in security.capabilities]}
    pod: dict[str, Any] = {}
    if pod_context:
        pod["securityContext"] = pod_context
    if security.host_ipc is not None:
        pod["hostIPC"] = security.host_ipc
    if security.host_network is not None:
        pod["hostNetwork"] = security.host_network
    return SecurityContexts(pod=pod, container=container)
