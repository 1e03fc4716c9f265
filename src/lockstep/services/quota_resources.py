"""`resources[]` checked against the cluster's node pools, and merged as PATCH merges them.

Each entry's `nodePool` must name a pool of the cluster, by `id` or by `name` (an `id` that is
no pool's id but is a pool's name names that pool); it is stored with both filled. A pool may
appear once, and so may the entry without a pool. Called by the organization service inside
its transaction, so a refused `resources[]` stores nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from lockstep.domain.errors import InvalidRequest, Violation
from lockstep.domain.node_pools import NodePool
from lockstep.schemas.organization import ResourcesUpdateRequest


def resolved(entries: Sequence[dict[str, Any]], pools: Sequence[NodePool]) -> list[dict[str, Any]]:
    """`entries` with each pool reference complete; `InvalidRequest` naming the entry when a
    pool is unknown or named twice."""
    by_id = {p.id: p for p in pools}
    by_name = {p.name: p for p in pools}
    seen: dict[str | None, int] = {}
    violations: list[Violation] = []
    result = []
    for index, entry in enumerate(entries):
        field = f"resources[{index}].nodePool"
        reference = entry.get("nodePool")
        pool: NodePool | None = None
        if reference:
            pool_id = str(reference.get("id") or "")
            name = reference.get("name")
            pool = by_id.get(pool_id) or by_name.get(name or pool_id)
            if pool is None:
                known = ", ".join(sorted(by_name)) or "none"
                violations.append(
                    Violation(field, f"no node pool {name or pool_id!r}; node pools: {known}")
                )
                continue
            if name is not None and name != pool.name:
                violations.append(
                    Violation(field, f"id {pool_id!r} is the pool {pool.name!r}, not {name!r}")
                )
                continue
        key = None if pool is None else pool.name
        if key in seen:
            what = "the entry without a node pool" if key is None else f"node pool {key!r}"
            violations.append(
                Violation(field, f"{what} is already given by resources[{seen[key]}]")
            )
            continue
        seen[key] = index
        completed = dict(entry)
        if pool is not None:
            completed["nodePool"] = {"id": pool.id, "name": pool.name}
        result.append(completed)
    if violations:
        raise InvalidRequest(violations)
    return result


def merged(
    stored: Sequence[dict[str, Any]], patch: Sequence[dict[str, Any]]
) -> list[dict[str, Any]]:
    """PATCH: each entry of `patch` (resolved) updates the stored entry of the same pool field
    by field (`gpu`, `cpu`, `memory` key by key, `priority`), or is added; the result is
    checked again as a whole `resources[]`."""
    result = [dict(e) for e in stored]
    for entry in patch:
        pool = (entry.get("nodePool") or {}).get("name")
        target = next((e for e in result if (e.get("nodePool") or {}).get("name") == pool), None)
        if target is None:
            result.append(dict(entry))
            continue
        for key, value in entry.items():
            if key in {"gpu", "cpu", "memory"} and isinstance(value, dict):
                target[key] = {**(target.get(key) or {}), **value}
            elif key != "nodePool":
                target[key] = value
    try:
        checked = ResourcesUpdateRequest.model_validate({"resources": result}, strict=False)
    except ValidationError as error:
        raise InvalidRequest(
            [
                Violation(_path(e["loc"]), e["msg"].removeprefix("Value error, "))
                for e in error.errors()
            ]
        ) from error
    return checked.resources_wire()


def _path(location: Sequence[int | str]) -> str:
    path = ""
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path
