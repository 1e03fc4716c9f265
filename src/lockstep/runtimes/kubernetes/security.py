"""A pod spec's `security` as the pod's and the container's security contexts and the pod's
host namespaces.

Called by `pods`. User and group ids apply unless `uidGidSource` is `fromTheImage`, where the
image decides them (as Run:ai documents); `fromIdpToken` has no token here, so the ids given
apply as with `custom`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lockstep.schemas.security import Security, UidGidSource


@dataclass(frozen=True, slots=True)
class SecurityContexts:
    """The pod-level fields (`securityContext`, `hostIPC`, `hostNetwork`) and the main
    container's `securityContext`."""

    pod: dict[str, Any] = field(default_factory=dict)
    container: dict[str, Any] = field(default_factory=dict)


def supplemental_groups(text: str) -> list[int]:
    """`"2,3,5"` as `[2, 3, 5]` (an empty string: none)."""
    return [int(group) for group in text.split(",") if group.strip()]


def security_contexts(security: Security | None) -> SecurityContexts:
    if security is None:
        return SecurityContexts()
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
