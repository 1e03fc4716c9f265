"""The nodes of the cluster and what the workloads hold of each: its CPU cores, its memory and
each GPU device's share (`GET /api/v1/clusters/{clusterUuid}/nodes`). Where they come from is
the runtime's: the local runtime's nodes with the placements lockstep made (`LocalNodes`), or
the Kubernetes cluster's nodes with its pods (runtimes/kubernetes/nodes.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from lockstep.auth.tokens import Principal
from lockstep.domain.cluster import Node, NodeUse
from lockstep.domain.listing import ListQuery, SortOrder, matches
from lockstep.domain.organization import Cluster
from lockstep.scheduler.gang.of_workload import gang_needs
from lockstep.scheduler.nodes.usage import Usage
from lockstep.services.organization import OrganizationService
from lockstep.store.database import Database

NodeSource = Callable[[], list[NodeUse]]

GPU_PRODUCT_LABEL = "nvidia.com/gpu.product"
"""The label NVIDIA's GPU feature discovery gives a node: its `gpuType`."""


def _status(use: NodeUse) -> str:
    return "Ready" if use.ready else "NotReady"


NODE_FIELDS: dict[str, Callable[[NodeUse, Cluster], object]] = {
    "name": lambda use, _: use.node.name,
    "status": lambda use, _: _status(use),
    "nodePool": lambda use, _: use.node.pool,
    "gpuType": lambda use, _: use.node.label(GPU_PRODUCT_LABEL),
    "nvLinkDomainUid": lambda use, _: None,
    "nvLinkCliqueId": lambda use, _: None,
    "clusterUuid": lambda _, cluster: cluster.id,
}
"""What the nodes' `filterBy` and `sortBy` compare (the document's fields; lockstep knows no
NVLink domains, so theirs are null)."""


@dataclass(frozen=True, slots=True)
class NodePage:
    """One page of a cluster's nodes."""

    cluster: Cluster
    nodes: list[NodeUse]
    has_more: bool


class NodeService:
    def __init__(self, organization: OrganizationService, source: NodeSource) -> None:
        self._organization = organization
        self._source = source

    def nodes(
        self,
        caller: Principal,
        cluster_id: str,
        query: ListQuery | None = None,
        *,
        name: str | None = None,
    ) -> NodePage:
        """The nodes, with what is held of each, filtered, sorted and paged as `query` says
        (`name`: only the node of that name); the caller must see the cluster."""
        cluster = self._organization.cluster(caller, cluster_id)
        query = query or ListQuery()
        found = [
            use
            for use in self._source()
            if (name is None or use.node.name == name)
            and all(matches(f, NODE_FIELDS[f.field](use, cluster)) for f in query.filters)
            and (not query.search or query.search.lower() in use.node.name.lower())
        ]
        if query.sort_by is not None:
            key = NODE_FIELDS[query.sort_by]
            found.sort(
                key=lambda use: _sort_key(key(use, cluster)),
                reverse=query.sort_order is SortOrder.DESC,
            )
        elif query.sort_order is SortOrder.DESC:
            found.reverse()
        end = query.offset + query.limit
        return NodePage(cluster, found[query.offset : end], end < len(found))


def _sort_key(value: object) -> tuple[bool, str]:
    """By the wire form, nulls last."""
    return (True, "") if value is None else (False, str(value))


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
