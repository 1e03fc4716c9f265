"""The nodes of the cluster and what the admitted workloads hold of each: its CPU cores, its
memory and each GPU device's share (`GET /api/v1/clusters/{clusterUuid}/nodes`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal

from lockstep.auth.tokens import Principal
from lockstep.domain.cluster import Node
from lockstep.scheduler.placement import Usage
from lockstep.scheduler.resources import gang_needs
from lockstep.services.organization import OrganizationService
from lockstep.store.database import Database


@dataclass(frozen=True, slots=True)
class NodeUse:
    node: Node
    cpu: Decimal
    memory: Decimal
    gpus: dict[int, Decimal]
    """Device index → the share of it that is held."""


class NodeService:
    def __init__(
        self, database: Database, organization: OrganizationService, nodes: Sequence[Node]
    ) -> None:
        self._db = database
        self._organization = organization
        self._nodes = list(nodes)

    def nodes(self, caller: Principal, cluster_id: str) -> list[NodeUse]:
        """Every node, with what is held of it; the caller must see the cluster."""
        self._organization.cluster(caller, cluster_id)
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
