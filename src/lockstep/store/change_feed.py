"""Telling every lockstep process sharing a PostgreSQL store which workload changed: the API
of any replica publishes the id after its commit (`NOTIFY`), and the replica that reconciles
listens (`LISTEN`), so a workload created on one replica is acted on at once by the leader.

A notification sent while no one listens is lost, which is harmless: the leader reconciles
every live workload when it takes over and at each resync. Used by the Kubernetes runtime's
controller (reconciler/leader.py); SQLite needs none (one process reconciles in place).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import psycopg
from sqlalchemy import text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from lockstep.store.database import Database

log = logging.getLogger(__name__)

CHANNEL = "lockstep_workloads"
RECONNECT_SECONDS = 1.0


class ChangeFeed:
    def __init__(self, database: Database) -> None:
        if database.is_sqlite:
            raise ValueError("the change feed needs PostgreSQL")
        self._database = database
        url = make_url(database.url).set(drivername="postgresql")
        self._url = url.render_as_string(hide_password=False)

    def publish(self, workload_id: str) -> None:
        """Tell the listeners that `workload_id` changed (after the change is committed)."""
        try:
            with self._database.engine.connect() as connection:
                connection.execute(
                    text("SELECT pg_notify(:channel, :id)"), {"channel": CHANNEL, "id": workload_id}
                )
                connection.commit()
        except SQLAlchemyError as error:
            log.warning("could not publish that %s changed: %s", workload_id, error)

    def listen(self, on_change: Callable[[str], None], stop: threading.Event) -> None:
        """Call `on_change` with each id published, until `stop` is set; reconnects when the
        connection is lost. Runs on a thread of its own."""
        while not stop.is_set():
            try:
                with psycopg.connect(self._url, autocommit=True) as connection:
                    connection.execute(f"LISTEN {CHANNEL}")
                    while not stop.is_set():
                        for notification in connection.notifies(timeout=0.5):
                            on_change(notification.payload)
            except psycopg.Error as error:
                log.warning("listening for changes failed: %s; reconnecting", error)
                stop.wait(RECONNECT_SECONDS)
