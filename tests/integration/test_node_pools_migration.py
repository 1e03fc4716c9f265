"""Revision 0006 (node pools) on a store made before it, on SQLite and PostgreSQL: every
cluster gets its `default` node pool, and the default project that the first start created
(and no other project) becomes unlimited if its resources were []."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

from alembic import command
from alembic.config import Config

from lockstep.domain.quotas import unbounded_resources
from lockstep.services.identity import BOOTSTRAP_ACTOR
from lockstep.store.database import _MIGRATIONS, Database

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _downgrade(store: Database, revision: str) -> None:
    config = Config()
    config.set_main_option("script_location", str(_MIGRATIONS))
    with store.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
        command.downgrade(config, revision)


def test_the_default_pool_is_added_and_only_the_bootstrap_default_project_unlimited(
    database_url: str,
) -> None:
    store = Database(database_url)
    try:
        _downgrade(store, "0005")  # a PostgreSQL test store comes migrated to the head
        with store.write() as unit:
            cluster = unit.organization.add_cluster(str(uuid.uuid4()), "local", NOW)
            department = unit.organization.add_department(
                name="default",
                cluster_id=cluster.id,
                created_by=BOOTSTRAP_ACTOR,
                resources=[],
                now=NOW,
            )
            ids = {}
            for name, by, resources in (
                ("default", BOOTSTRAP_ACTOR, []),
                ("other", BOOTSTRAP_ACTOR, []),
                ("set", "admin", [{"gpu": {"deserved": 2}}]),
            ):
                ids[name] = unit.organization.add_project(
                    name=name,
                    cluster_id=cluster.id,
                    department_id=department.id,
                    created_by=by,
                    requested_namespace=None,
                    resources=resources,
                    now=NOW,
                ).id
        store.migrate()
        with store.read() as unit:
            assert [p.name for p in unit.node_pools.pools(cluster.id)] == ["default"]
            found = {n: unit.organization.project(i) for n, i in ids.items()}
        stored = {n: p.resources for n, p in found.items() if p is not None}
        assert stored == {
            "default": unbounded_resources(),
            "other": [],
            "set": [{"gpu": {"deserved": 2}}],
        }
    finally:
        store.dispose()
