"""The nodes of the cluster and what the workloads hold of each: its CPU cores, its memory and
each GPU device's share (`GET /api/v1/clusters/{clusterUuid}/nodes`). Where they come from is
the runtime's: the local runtime's nodes with the placements lockstep made (`LocalNodes`), or
the Kubernetes cluster's nodes with its pods (runtimes/kubernetes/nodes.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from decimal import Decimal

from lockstep.auth.tokens import Principal
from lockstep.domain.cluster import Node, NodeUse
from lockstep.scheduler.placement import Usage
from lockstep.scheduler.resources import gang_needs
from lockstep.services.organization import OrganizationService
from lockstep.store.database import Database

NodeSource = Callable[[], list[NodeUse]]


class NodeService:
    def __init__(self, organization: OrganizationService, source: NodeSource) -> None:
        self._organization = organization
        self._source = source

    def nodes(self, caller: Principal, cluster_id: str) -> list[NodeUse]:
        """Every node, with what is held of it; the caller must see the cluster."""
        self._organization.cluster(caller, cluster_id)
        return self._source()


class LocalNodes:
    """The local runtime's nodes, and what the placements of admitted workloads hold."""

    def __init__(self, database: Database, nodes: Sequence[Node]) -> None:
        self._db = database
        self._nodes = list(nodes)

    def __call__(self) -> list[NodeUse]:
        with self._db.read() as unit:
            admitted = unit.workloads.admitted()
        usage = Usage(self._nodes)
        for workload in admitted:
            if workload.placement is not None:
                usage.hold(gang_needs(workload.plan()), workload.placement)
        return [
            NodeUse(
                node,
                cpu=node.cpu - usage.free_cpu(node),
                memory=node.memory - usage.free_memory(node),
                gpus={g.index: Decimal(1) - usage.free_share(node, g.index) for g in node.gpus},
            )
            for node in self._nodes
        ]
