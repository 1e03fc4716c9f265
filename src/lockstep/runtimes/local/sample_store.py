"""The local runtime's sampler wired to the store: each round's samples written in one
non-durable transaction (they can be lost with the machine, never half-written), together
with that round's bounded share of retention work (store/metrics.py `maintain`)."""

from __future__ import annotations

from datetime import datetime

from lockstep.config import Settings
from lockstep.domain.clock import Clock
from lockstep.domain.gpus import GpuReader
from lockstep.domain.metrics import Sample
from lockstep.runtimes.local import machine
from lockstep.runtimes.local.gpus import NvmlReader
from lockstep.runtimes.local.sampling.sampler import Record, Sampler
from lockstep.store.database import Database


def recorder(database: Database) -> Record:
    def record(at: datetime, samples: list[Sample]) -> None:
        with database.write(durable=False) as unit:
            unit.metrics.insert(samples)
            unit.metrics.maintain(at)

    return record


def sampler(
    database: Database, settings: Settings, *, clock: Clock, gpus: GpuReader | None = None
) -> Sampler:
    """The sampler of the local runtime these settings run (NVML's reader unless `gpus`)."""
    return Sampler(
        settings.runtime_dir,
        record=recorder(database),
        interval_seconds=settings.metrics_interval_seconds,
        gpus=gpus if gpus is not None else NvmlReader.open(),
        default_node=machine.nodes(settings.nodes)[0].name,
        clock=clock,
    )
