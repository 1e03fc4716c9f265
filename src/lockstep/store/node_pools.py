"""The node pool repository."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict
from lockstep.domain.node_pools import POOL_LABEL_KEY, NodePool
from lockstep.schemas.bounds import INT32_MAX
from lockstep.store.tables import node_pools


def _pool(row: Any) -> NodePool:
    return NodePool(
        id=str(row.id),
        name=row.name,
        cluster_id=row.cluster_id,
        label_key=row.label_key,
        label_value=row.label_value,
        created_by=row.created_by,
        updated_by=row.updated_by,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def _key(pool_id: str) -> int | None:
    key = int(pool_id) if pool_id.isascii() and pool_id.isdigit() and len(pool_id) <= 10 else None
    return key if key is not None and key <= INT32_MAX else None


class NodePoolRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def add(
        self,
        *,
        name: str,
        cluster_id: str,
        label_key: str,
        label_value: str,
        created_by: str,
        now: datetime,
    ) -> NodePool:
        values = {
            "name": name,
            "cluster_id": cluster_id,
            "label_key": label_key,
            "label_value": label_value,
            "created_by": created_by,
            "updated_by": created_by,
            "created_at": now,
            "updated_at": now,
        }
        nested = self._db.begin_nested()
        try:
            row = self._db.execute(insert(node_pools).returning(node_pools), values).one()
        except IntegrityError as error:
            nested.rollback()
            raise Conflict(f"a node pool named {name!r} already exists") from error
        nested.commit()
        return _pool(row)

    def ensure(self, cluster_id: str, names: Iterable[str], *, by: str, now: datetime) -> None:
        """Store each pool of `names` the cluster does not have yet (pools seen on nodes)."""
        known = {p.name for p in self.pools(cluster_id)}
        for name in sorted(set(names) - known):
            self.add(
                name=name,
                cluster_id=cluster_id,
                label_key=POOL_LABEL_KEY,
                label_value=name,
                created_by=by,
                now=now,
            )

    def pools(self, cluster_id: str | None = None) -> list[NodePool]:
        query = select(node_pools).order_by(node_pools.c.id)
        if cluster_id is not None:
            query = query.where(node_pools.c.cluster_id == cluster_id)
        return [_pool(r) for r in self._db.execute(query).all()]

    def pool(self, pool_id: str) -> NodePool | None:
        key = _key(pool_id)
        if key is None:
            return None
        row = self._db.execute(select(node_pools).where(node_pools.c.id == key)).first()
        return None if row is None else _pool(row)

    def update(
        self, pool_id: str, *, label_key: str, label_value: str, by: str, now: datetime
    ) -> NodePool:
        query = (
            update(node_pools)
            .where(node_pools.c.id == int(pool_id))
            .values(label_key=label_key, label_value=label_value, updated_by=by, updated_at=now)
            .returning(*node_pools.c)
        )
        return _pool(self._db.execute(query).one())

    def delete(self, pool_id: str) -> None:
        self._db.execute(delete(node_pools).where(node_pools.c.id == int(pool_id)))
