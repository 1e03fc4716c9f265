"""What each pod of a workload would be started as on this machine (its `Launch`: command,
environment, working directory, limits) — built apart from the runtime that starts it, so
that the API renders a dry run without a runtime of its own.

Used by `LocalRuntime` (start and render) and by the API's dry run (`?dryRun=true`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lockstep.domain.cluster import Assignment
from lockstep.domain.plan import ReplicaPlan, Role
from lockstep.domain.workload import Workload
from lockstep.frameworks import mpi
from lockstep.frameworks.endpoints import Endpoint
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.devices import gpu_environment
from lockstep.runtimes.local.pod_bounds import PodBounds
from lockstep.runtimes.local.pod_launch import (
    LOOPBACK,
    WORKLOAD_DIR,
    Launch,
    PodIdentity,
    launch_of,
    lockstep_environment,
    runs_worker_agent,
)
from lockstep.runtimes.local.ports import WorkloadPorts
from lockstep.runtimes.local.sandbox.policy import SandboxPolicy
from lockstep.runtimes.local.state import MPI_DIRECTORY, PodFiles
from lockstep.schemas.distributed import DistributedFramework

NOT_PLACED = "<assigned at start>"


@dataclass(frozen=True, slots=True)
class Launches:
    """Launches of pods whose files live under `root` (the local runtime's directory)."""

    root: Path
    environ: Mapping[str, str]
    """lockstep's own environment, of which a pod inherits only `pod_launch.PASS_THROUGH`."""
    image_environments: Mapping[str, Path] = field(default_factory=dict)
    sandboxes: SandboxPolicy | None = None
    """How pods are sandboxed; None: they are not (nor told what is not applied)."""
    bounds: PodBounds = field(default_factory=PodBounds)
    """What a pod that asks for nothing may take."""

    def launch(
        self,
        workload: Workload,
        plan: ReplicaPlan,
        pod_name: str,
        ports: WorkloadPorts,
        *,
        uid: str,
        on: Assignment | None = None,
    ) -> Launch:
        """The launch of a pod; `on` says where it was placed (a dry run: nowhere yet)."""
        endpoints = {name: Endpoint(LOOPBACK, port) for name, port in ports.endpoints.items()}
        node = on.node if on is not None else NOT_PLACED
        identity = PodIdentity(uid=uid, name=pod_name, namespace=workload.namespace, node_name=node)
        replica = plan.replica(pod_name)
        runtime_env = gpu_environment(on) if on is not None else {}
        mpi_directory = self.root / workload.id / MPI_DIRECTORY
        if replica.spec.create_home_dir:
            runtime_env["HOME"] = str(PodFiles(self.root / workload.id / pod_name).home)
        if plan.framework is DistributedFramework.MPI:
            runtime_env |= mpi.ON_ONE_MACHINE
            if runs_worker_agent(plan, replica):
                runtime_env[WORKLOAD_DIR] = str(self.root / workload.id)
            if replica.role is Role.LAUNCHER:
                runtime_env |= mpi.paths(
                    hostfile_path=str(mpi_directory / "hostfile"),
                    agent_path=str(mpi_directory / "rsh"),
                )
        launch = launch_of(
            plan,
            replica,
            pod=identity,
            endpoints=endpoints,
            inherited=self.environ,
            project_id=workload.project_id,
            ports=ports.containers.get(pod_name, ()),
            runtime_env=runtime_env,
            image_environments=self.image_environments,
            own_environment=lockstep_environment(),
            paths_from=Path.cwd(),
        )
        launch = dataclasses.replace(launch, limits=self.bounds.applied(launch.limits))
        if self.sandboxes is None:
            return launch
        launch = self.sandboxes.apply(
            launch, replica.spec, workload=workload, runtime_root=self.root, on=on
        )
        if plan.framework is DistributedFramework.MPI:
            launcher = replica.role is Role.LAUNCHER
            launch = self.sandboxes.expose_mpi_files(launch, mpi_directory, launcher=launcher)
        return launch

    def render(
        self, workload: Workload, plan: ReplicaPlan, ports: WorkloadPorts | None = None
    ) -> dict[str, Any]:
        """Every pod's launch, or why it cannot start (ports not allocated yet are shown as
        placeholders)."""
        ports = ports or WorkloadPorts.placeholder(plan)
        pods: list[dict[str, Any]] = []
        for replica in plan.replicas:
            try:
                launch = self.launch(workload, plan, replica.pod_name, ports, uid=NOT_PLACED)
                pods.append(launch.to_json())
            except PodStartError as error:
                pods.append({"podName": replica.pod_name, "error": str(error)})
        return {"runtime": "local", "pods": pods}
