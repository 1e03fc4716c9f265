"""Node pool use cases (`/api/v1/node-pools`): the stored pools, each with its nodes, their
capacity and what admitted workloads hold of them, and its phase (Ready with nodes, Empty
without). Pools the nodes are in are stored when first seen, so every pool a node is in is
listed. Reading needs the right to read the pool's cluster; creating, updating and deleting
the right to change it (an administrator's)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.cluster import NodeUse
from lockstep.domain.errors import Conflict, InvalidRequest, NotFound
from lockstep.domain.listing import Filter, SortOrder, matches
from lockstep.domain.node_pools import NodePool
from lockstep.schemas.node_pools import NodePoolCreateRequest, NodePoolUpdateRequest
from lockstep.services.access import access_of
from lockstep.services.organization import OrganizationService
from lockstep.store.database import Database, UnitOfWork

NodeSource = Callable[[], list[NodeUse]]


@dataclass(frozen=True, slots=True)
class PoolView:
    """A pool with its cluster's name and the nodes in it."""

    pool: NodePool
    cluster_name: str
    nodes: list[NodeUse]

    @property
    def phase(self) -> str:
        return "Ready" if self.nodes else "Empty"

    def capacity(self) -> tuple[int, Decimal, Decimal]:
        """GPUs (devices), CPU (cores), memory (bytes)."""
        return (
            sum(len(u.node.gpus) for u in self.nodes),
            sum((u.node.cpu for u in self.nodes), Decimal(0)),
            sum((u.node.memory for u in self.nodes), Decimal(0)),
        )

    def allocated(self) -> tuple[Decimal, Decimal, Decimal]:
        return (
            sum((sum(u.gpus.values(), Decimal(0)) for u in self.nodes), Decimal(0)),
            sum((u.cpu for u in self.nodes), Decimal(0)),
            sum((u.memory for u in self.nodes), Decimal(0)),
        )


POOL_FIELDS: dict[str, Callable[[PoolView], object]] = {
    "name": lambda v: v.pool.name,
    "phase": lambda v: v.phase,
    "clusterId": lambda v: v.pool.cluster_id,
    "createdAt": lambda v: v.pool.created_at,
    "updatedAt": lambda v: v.pool.updated_at,
}
"""What `filterBy` and `sortBy` compare (the document's other fields are not kept: they are
refused in filters and sorted as equal)."""


class NodePoolService:
    def __init__(
        self, database: Database, organization: OrganizationService, source: NodeSource
    ) -> None:
        self._db = database
        self._organization = organization
        self._source = source
        self._clock = organization.clock

    def _views(self, unit: UnitOfWork, pools: Sequence[NodePool]) -> list[PoolView]:
        uses = self._source()
        names = {c.id: c.name for c in unit.organization.clusters()}
        return [
            PoolView(p, names.get(p.cluster_id, ""), [u for u in uses if p.holds(u.node)])
            for p in pools
        ]

    def _readable(self, unit: UnitOfWork, caller: Principal) -> list[NodePool]:
        access = access_of(unit, caller)
        visible = {c.id for c in self._organization.visible_in(unit, caller).clusters}
        for cluster_id in visible:
            self._organization.seen_pools(unit, cluster_id, caller.name)
        return [
            p
            for p in unit.node_pools.pools()
            if p.cluster_id in visible
            or access.allows(Action.READ, Resource.CLUSTERS, Scope(p.cluster_id))
        ]

    def pools(
        self,
        caller: Principal,
        *,
        filters: Sequence[Filter] = (),
        sort_by: str | None = None,
        order: SortOrder = SortOrder.ASC,
    ) -> list[PoolView]:
        with self._db.write() as unit:
            views = self._views(unit, self._readable(unit, caller))
        found = [v for v in views if all(matches(f, POOL_FIELDS[f.field](v)) for f in filters)]
        if sort_by is not None:
            key = POOL_FIELDS[sort_by]
            found.sort(key=lambda v: str(key(v)), reverse=order is SortOrder.DESC)
        elif order is SortOrder.DESC:
            found.reverse()
        return found

    def pool(self, caller: Principal, pool_id: str) -> PoolView:
        with self._db.write() as unit:
            readable = {p.id: p for p in self._readable(unit, caller)}
            pool = readable.get(pool_id) or unit.node_pools.pool(pool_id)
            if pool is None:
                raise NotFound(f"no node pool has the id {pool_id!r}")
            if pool.id not in readable:
                access_of(unit, caller).check(
                    Action.READ, Resource.CLUSTERS, Scope(pool.cluster_id)
                )
            return self._views(unit, [pool])[0]

    def create(self, caller: Principal, request: NodePoolCreateRequest) -> PoolView:
        cluster_id = str(request.cluster_id)
        with self._db.write() as unit:
            if unit.organization.cluster(cluster_id) is None:
                raise InvalidRequest.of("clusterId", f"no cluster has the id {cluster_id!r}")
            access_of(unit, caller).check(Action.UPDATE, Resource.CLUSTERS, Scope(cluster_id))
            pool = unit.node_pools.add(
                name=request.name,
                cluster_id=cluster_id,
                label_key=request.label_key,
                label_value=request.label_value,
                created_by=caller.name,
                now=self._clock(),
            )
            return self._views(unit, [pool])[0]

    def update(self, caller: Principal, pool_id: str, request: NodePoolUpdateRequest) -> PoolView:
        with self._db.write() as unit:
            pool = self._changeable(unit, caller, pool_id)
            updated = unit.node_pools.update(
                pool.id,
                label_key=request.label_key or pool.label_key,
                label_value=request.label_value or pool.label_value,
                by=caller.name,
                now=self._clock(),
            )
            return self._views(unit, [updated])[0]

    def delete(self, caller: Principal, pool_id: str) -> None:
        """Not the default pool, nor one that a project's or department's resources name."""
        with self._db.write() as unit:
            pool = self._changeable(unit, caller, pool_id)
            if pool.is_default:
                raise Conflict("the default node pool cannot be deleted")
            users = [
                f"project {p.name!r}"
                for p in unit.organization.projects()
                if _names(p.resources, pool)
            ] + [
                f"department {d.name!r}"
                for d in unit.organization.departments()
                if _names(d.resources, pool)
            ]
            if users:
                raise Conflict(
                    f"node pool {pool.name!r} is in the resources of {', '.join(users[:20])}"
                    f"{' and more' if len(users) > 20 else ''}; remove it from them first"
                )
            unit.node_pools.delete(pool.id)

    def _changeable(self, unit: UnitOfWork, caller: Principal, pool_id: str) -> NodePool:
        pool = unit.node_pools.pool(pool_id)
        if pool is None:
            raise NotFound(f"no node pool has the id {pool_id!r}")
        access_of(unit, caller).check(Action.UPDATE, Resource.CLUSTERS, Scope(pool.cluster_id))
        return pool


def _names(resources: Sequence[dict[str, object]], pool: NodePool) -> bool:
    for entry in resources:
        reference = entry.get("nodePool")
        if isinstance(reference, dict) and (
            reference.get("id") == pool.id or reference.get("name") == pool.name
        ):
            return True
    return False
