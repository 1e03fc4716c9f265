"""Who runs a backend's reconciliation, and where: the `Controller` the API starts, tells of
every change and asks whether it runs (for readiness), and `Placement`, where the local
runtime's reconciler runs (on a thread, in a child process, or in a sibling shared by several
API processes). Each backend has its controllers (runtimes/local/controllers.py, the
Kubernetes runtime's in runtimes/kubernetes/reconciler.py)."""

from __future__ import annotations

import enum
from typing import Protocol


class Placement(enum.Enum):
    """Where the API's reconciler runs (the local runtime)."""

    THREAD = "thread"
    """On a thread of the API's process (tests, and the in-process server)."""
    CHILD = "child"
    """In a child process of the API's, which supervises it (`lockstep serve`)."""
    SIBLING = "sibling"
    """In a process the server's parent supervises, shared by several API processes."""


class Controller(Protocol):
    def start(self) -> None: ...

    def notify(self, workload_id: str) -> None:
        """The workload changed in the store: reconcile it soon."""
        ...

    def reconciler_runs(self) -> bool | None:
        """Whether the reconciler runs; None where this process does not lead (another
        replica reconciles). For readiness (/readyz)."""
        ...

    def stop(self) -> None: ...
