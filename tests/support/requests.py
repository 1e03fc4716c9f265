"""Creation requests for tests."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

REPOSITORY = Path(__file__).resolve().parents[2]
EXAMPLES = REPOSITORY / "examples"


def distributed(
    cluster_id: str,
    *,
    name: str = "train",
    project_id: str = "1",
    framework: str = "PyTorch",
    workers: int = 2,
    command: str | None = None,
    args: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A distributed creation request; the spec defaults to a short-lived Python command."""
    body: dict[str, Any] = {
        "name": name,
        "projectId": project_id,
        "clusterId": cluster_id,
        "spec": {
            "image": "python:3.11",
            "distributedFramework": framework,
            "numWorkers": workers,
            "command": command or sys.executable,
            "args": args if args is not None else "-c pass",
            **spec,
        },
    }
    return body


def single_pod(
    cluster_id: str,
    *,
    name: str = "single",
    project_id: str = "1",
    command: str | None = None,
    args: str | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A training's or workspace's creation request; by default a short-lived Python command."""
    return {
        "name": name,
        "projectId": project_id,
        "clusterId": cluster_id,
        "spec": {
            "image": "python:3.11",
            "command": command or sys.executable,
            "args": args if args is not None else "-c pass",
            **spec,
        },
    }


def python(code: str) -> str:
    """`args` that run `code` with this interpreter's `-c`, quoted for shell-style splitting."""
    return "-c " + shlex.quote(code)


def sleeping(cluster_id: str, seconds: float = 600, **kwargs: Any) -> dict[str, Any]:
    """A workload whose pods sleep, to observe it while it runs."""
    return distributed(cluster_id, args=f"-c 'import time; time.sleep({seconds})'", **kwargs)


def shared(*paths: object) -> dict[str, Any]:
    """`storage` mounting each of the test's directories `paths` at the same path, writable:
    what a pod writes outside its volumes stays in its own root."""
    return {
        "hostPath": [
            {"path": str(path), "mountPath": str(path), "readOnly": False} for path in paths
        ]
    }
