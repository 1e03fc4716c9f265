"""Typed errors of lockstep's interface to a Kubernetes cluster (`cluster.Cluster`).

`cluster.KubeCluster` raises them `from` the `kubernetes` client's exception (or urllib3's, for a
connection that failed), so nothing above `runtimes/kubernetes/` ever sees the client's types.
The Kubernetes runtime and the reconciler catch them: a `ClusterUnavailable` is worth retrying
later; a `ClusterForbidden` carries the API server's own words, shown to the user as the
workload's condition; the others are permanent for the request that raised them.
"""

from __future__ import annotations

from lockstep.domain.errors import LockstepError


class ClusterError(LockstepError):
    """The API server refused a request, or answered with something lockstep cannot use.

    `status` is the HTTP status (None when no answer came), `reason` the `reason` of the
    server's `Status` object (`Forbidden`, `Invalid`, `Conflict`, …) and `message` its
    `message`, or what went wrong when the server said nothing useful."""

    def __init__(self, message: str, *, status: int | None = None, reason: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


class ClusterForbidden(ClusterError):
    """The cluster does not let lockstep do this (403), or does not accept its credentials
    (401). The message is the API server's, e.g. `pytorchjobs.kubeflow.org "x" is forbidden:
    User "system:serviceaccount:lockstep:lockstep" cannot create resource …`."""


class ClusterNotFound(ClusterError):
    """The object (or its namespace) does not exist, where the operation needed it to."""


class ClusterConflict(ClusterError):
    """The object changed under the request (409) and retrying did not help."""


class ClusterUnavailable(ClusterError):
    """The API server could not be reached, was overloaded (429) or failed (5xx), and kept
    doing so through every retry: transient, worth trying again later."""

    transient = True
