"""What the scheduler's last cycle found for each project and department, kept so that the API
(another process, perhaps) can show it: per node pool and resource, the deserved share, the
fair share, what is allocated and what is requested. The reconciler replaces it whenever a
cycle finds it changed."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

import orjson
from sqlalchemy import Connection, delete, insert, select

from lockstep.store.tables import fair_shares

ShareKey = tuple[str, str, str]
"""(org type — "project" or "department" —, its id, node pool)."""
Shares = Mapping[str, Mapping[str, float]]
"""Resource → {"deserved", "fairShare", "allocated", "requested"}, -1 for unlimited."""


class SchedulingRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def replace_shares(self, shares: Mapping[ShareKey, Shares], now: datetime) -> None:
        """Replace every stored share with `shares`."""
        self._db.execute(delete(fair_shares))
        if shares:
            self._db.execute(
                insert(fair_shares),
                [
                    {
                        "org_type": org_type,
                        "org_id": int(org_id),
                        "pool": pool,
                        "shares": orjson.dumps(values).decode(),
                        "updated_at": now,
                    }
                    for (org_type, org_id, pool), values in shares.items()
                ],
            )

    def shares(self) -> dict[ShareKey, Shares]:
        rows = self._db.execute(
            select(
                fair_shares.c.org_type,
                fair_shares.c.org_id,
                fair_shares.c.pool,
                fair_shares.c.shares,
            )
        ).all()
        return {(t, str(i), pool): orjson.loads(values) for t, i, pool, values in rows}
