"""503 when the store is unreachable, nothing half-stored, and recovery once it is back."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import pytest
from fastapi.testclient import TestClient

from lockstep.api.app import create_app
from lockstep.store import database
from tests.conftest import make_settings
from tests.support.api import Api
from tests.support.databases import PostgresTemplates, postgres_url, require_postgres
from tests.support.proxy import OutageProxy
from tests.support.requests import distributed


@pytest.fixture
def behind_proxy(
    tmp_path: Path, postgres_templates: PostgresTemplates
) -> Iterator[tuple[Api, OutageProxy]]:
    require_postgres()
    with postgres_templates.fresh() as url:
        parts = urlsplit(url)
        proxy = OutageProxy(parts.hostname or "127.0.0.1", parts.port or 5432)
        user = f"{parts.username}@" if parts.username else ""
        proxied = urlunsplit(parts._replace(netloc=f"{user}127.0.0.1:{proxy.port}"))
        with TestClient(create_app(make_settings(tmp_path / "data", proxied))) as client:
            yield Api.login(client), proxy
        proxy.cut()


def test_unreachable_store_answers_503_and_recovers(behind_proxy: tuple[Api, OutageProxy]) -> None:
    api, proxy = behind_proxy
    cluster = api.cluster_id()
    kept = api.create(distributed(cluster, name="before", compute={"cpuCoreRequest": 100000}))

    proxy.cut()
    for response in (
        api.get(f"/api/v1/workloads/distributed/{kept['workloadId']}"),
        api.get("/api/v1/workloads"),
        api.post("/api/v1/workloads/distributed", json=distributed(cluster, name="during")),
        api.client.post(
            "/api/v1/token",
            json={
                "grantType": "app_token",
                "AppId": "admin",
                "AppSecret": "admin-secret-for-tests",
            },
        ),
    ):
        assert response.status_code == 503, response.text
        assert response.json() == {
            "code": 503,
            "message": "the store is unreachable; please try again shortly",
        }
        assert response.headers["retry-after"] == "1"

    proxy.resume()
    names = [w["name"] for w in api.get("/api/v1/workloads").json()["workloads"]]
    assert names == ["before"]
    assert (
        api.create(distributed(cluster, name="after", compute={"cpuCoreRequest": 100000}))["name"]
        == "after"
    )


def test_a_connection_that_died_while_idle_is_replaced_unseen(
    tmp_path: Path, postgres_templates: PostgresTemplates, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool checks a connection that sat idle before lending it (here: every one), so a
    server that dropped lockstep's connections meanwhile costs no request a 503."""
    require_postgres()
    monkeypatch.setattr(database, "PING_AFTER_IDLE_SECONDS", 0.0)
    with (
        postgres_templates.fresh() as url,
        TestClient(create_app(make_settings(tmp_path / "data", url))) as client,
    ):
        api = Api.login(client)
        assert api.get("/api/v1/workloads").status_code == 200
        name = urlsplit(url).path.lstrip("/")
        with psycopg.connect(postgres_url(), autocommit=True) as admin:
            ended = admin.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> pg_backend_pid()",
                (name,),
            ).fetchone()
        assert ended is not None and ended[0] >= 1
        for _ in range(3):
            response = api.get("/api/v1/workloads")
            assert response.status_code == 200, response.text
