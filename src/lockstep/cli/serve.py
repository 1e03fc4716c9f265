"""`lockstep serve`: logging, first-start credentials, and uvicorn: one API process with its
reconciler process, or several API processes on one socket with one reconciler process beside
them (LOCKSTEP_API_PROCESSES)."""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import socket
import sys
from typing import Any

import uvicorn
from fastapi import FastAPI
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import Multiprocess

from lockstep.api.app import create_app
from lockstep.api.http_protocol import RunaiHttpProtocol
from lockstep.assembly import bootstrap, open_core
from lockstep.config import Settings
from lockstep.logs import configure_logging
from lockstep.observability.instruments import use_directory
from lockstep.reconciler.control import Placement
from lockstep.reconciler.fifo import make_fifo
from lockstep.runtimes.local.controllers import ProcessController, notification_pipe
from lockstep.services.identity import BootstrapResult
from lockstep.tuning import tune_garbage_collection

log = logging.getLogger("lockstep")


PROMETHEUS_DIRECTORY = "prometheus"
"""Under the data dir: the instruments' shared files (emptied at each start)."""

SECRET_VARIABLES = ("LOCKSTEP_BOOTSTRAP_CLIENT_SECRET",)
"""Read once into the settings, then wiped from lockstep's environment (see `wipe`)."""

API_SETTINGS = "LOCKSTEP_API_PROCESS_SETTINGS"
"""The server's settings as JSON, so that each API process runs with exactly them."""
PARENT = "LOCKSTEP_API_PROCESS_PARENT"
"""The server's process id, which each API process outlives by no more than a signal."""
GRACEFUL_SHUTDOWN_SECONDS = 10
PR_SET_PDEATHSIG = 1
BACKLOG = 2048
"""The connections the socket queues before the API accepts them (uvicorn's default)."""


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
    # The API processes and the reconciler process share their instruments through this
    # directory.
    use_directory(settings.data_dir / PROMETHEUS_DIRECTORY, fresh=True)
    if settings.api_processes > 1:
        _serve_in_processes(settings, access_log=access_log)
        return
    listening = _listen(settings)
    log.info("listening on http://%s:%d", settings.host, settings.port)
    app = create_app(settings, reconciler=Placement.CHILD)
    RunaiHttpProtocol.configure(settings)
    _announce(app.state.bootstrap, settings)
    tune_garbage_collection()
    server = uvicorn.Server(_uvicorn_config(app, settings, access_log=access_log))
    try:
        server.run(sockets=[listening])
    except KeyboardInterrupt:
        pass
    finally:
        listening.close()
    if not server.started:
        sys.exit(STARTUP_FAILURE)


def _uvicorn_config(
    app: FastAPI | str, settings: Settings, *, access_log: bool, **more: Any
) -> uvicorn.Config:
    """How uvicorn serves the API, in one process or several (`more`: their options)."""
    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        http=RunaiHttpProtocol,
        log_config=None,
        access_log=access_log,
        backlog=BACKLOG,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECONDS,
        **more,
    )


def _listen(settings: Settings) -> socket.socket:
    """The API's socket, bound and listening on the configured address before anything else
    starts: an address already in use ends the server at once, saying which (and nothing has
    claimed to listen)."""
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((settings.host, settings.port))
        listening.listen(BACKLOG)
    except OSError as error:
        listening.close()
        log.error("cannot listen on http://%s:%d: %s", settings.host, settings.port, error.strerror)
        sys.exit(STARTUP_FAILURE)
    return listening


def _serve_in_processes(settings: Settings, *, access_log: bool) -> None:
    """`settings.api_processes` API processes accepting on one socket (uvicorn's workers,
    each started again if it dies) and one reconciler process beside them, all children of
    this one, which serves nothing itself. The socket listens first (an address in use ends
    the server before it starts anything); the store is migrated and bootstrapped next, so
    that the API processes start on a store that is ready."""
    listening = _listen(settings)
    listening.set_inheritable(True)  # the API processes accept on it too (as uvicorn's own)
    log.info(
        "listening on http://%s:%d with %d API processes",
        settings.host,
        settings.port,
        settings.api_processes,
    )
    core = open_core(settings)
    try:
        _announce(bootstrap(core), settings)
    finally:
        core.close()
    make_fifo(notification_pipe(settings))
    reconciler = ProcessController(settings)
    reconciler.start()
    os.environ[API_SETTINGS] = settings.model_dump_json(
        exclude={"bootstrap_client_id", "bootstrap_client_secret"}
    )
    os.environ[PARENT] = str(os.getpid())
    config = _uvicorn_config(
        f"{__name__}:api_process",
        settings,
        access_log=access_log,
        factory=True,
        workers=settings.api_processes,
    )
    try:
        supervisor = Multiprocess(config, sockets=[listening])
        supervisor.run()
    finally:
        reconciler.stop()
        listening.close()
    if any(process.exitcode == STARTUP_FAILURE for process in supervisor.processes):
        sys.exit("lockstep: an API process could not start (its log says why)")


def api_process() -> FastAPI:
    """One of several API processes (uvicorn's worker calls this as it starts): the API, its
    reconciler in the sibling process the server started. One that cannot start exits with
    uvicorn's STARTUP_FAILURE, on which the parent stops the server."""
    _end_with_the_server()
    settings = Settings.model_validate_json(os.environ[API_SETTINGS])
    configure_logging(settings)
    use_directory(settings.data_dir / PROMETHEUS_DIRECTORY, fresh=False)
    RunaiHttpProtocol.configure(settings)
    try:
        app = create_app(settings, reconciler=Placement.SIBLING)
    except Exception:  # the server's parent then stops, rather than start it again and again
        log.exception("an API process could not start")
        sys.exit(STARTUP_FAILURE)
    tune_garbage_collection()
    return app


def _end_with_the_server() -> None:
    """Have the kernel end this process when the server's process ends, however it ends (a
    SIGKILL too), so that no API process outlives it."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != int(os.environ[PARENT]):
        sys.exit("lockstep: the server ended as this API process started")


def _announce(created: BootstrapResult | None, settings: Settings) -> None:
    """Say what a first start created, and the generated secret (this once)."""
    if created is None:
        return
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
