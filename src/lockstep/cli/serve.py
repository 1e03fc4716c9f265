"""`lockstep serve`: logging, first-start credentials, and uvicorn."""

from __future__ import annotations

import ctypes
import logging
import os
import sys

import uvicorn

from lockstep.api.app import create_app
from lockstep.config import Settings
from lockstep.logs import configure_logging
from lockstep.observability.instruments import use_directory
from lockstep.tuning import tune_garbage_collection

log = logging.getLogger("lockstep")


PROMETHEUS_DIRECTORY = "prometheus"
"""Under the data dir: the instruments' shared files (emptied at each start)."""

SECRET_VARIABLES = ("LOCKSTEP_BOOTSTRAP_CLIENT_SECRET",)
"""Read once into the settings, then wiped from lockstep's environment (see `wipe`)."""


def wipe(name: str) -> None:
    """Remove a variable from this process's environment, its value overwritten where the
    kernel shows it (/proc/<pid>/environ reads the environment as the process began), so that
    neither a child nor a reader of that file finds it."""
    libc = ctypes.CDLL(None)
    libc.getenv.restype = ctypes.c_void_p
    address = libc.getenv(name.encode())  # the original string, which unsetenv would keep
    value = os.environ.pop(name, None)  # unsetenv, for this process and its children
    if address and value is not None:
        ctypes.memset(address, 0, len(os.fsencode(value)))


def run_server(settings: Settings, *, access_log: bool) -> None:
    for name in SECRET_VARIABLES:
        wipe(name)
    configure_logging(settings)
    # The API and the reconciler process share their instruments through this directory.
    use_directory(settings.data_dir / PROMETHEUS_DIRECTORY, fresh=True)
    app = create_app(settings, reconciler_process=True)
    created = app.state.bootstrap
    if created is not None:
        log.info(
            "first start: created cluster %s, department %s and project %s",
            created.cluster_id,
            created.department_id,
            created.project_id,
        )
        if created.client_secret is not None:
            print(
                "lockstep created an administrator application.\n"
                f"  client id:     {created.client_id}\n"
                f"  client secret: {created.client_secret}\n"
                f"It is shown only this once and saved in {settings.credentials_path} (mode 0600).",
                file=sys.stderr,
                flush=True,
            )
    tune_garbage_collection()
    log.info("listening on http://%s:%d", settings.host, settings.port)
    uvicorn.run(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=access_log,
        timeout_graceful_shutdown=10,
    )
