"""The quota options of `lockstep project` and `lockstep department` (`--gpu-deserved`,
`--gpu-limit`, `--gpu-weight`, the same for `--cpu-…` in millicores and `--memory-…` in MB,
and `--pool`), as one `resources[]` entry, and that entry merged into stored resources."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

import typer

DEFAULT_POOL = "default"

Pool = Annotated[
    str, typer.Option("--pool", help="The node pool the quota is for.", show_default=True)
]
GpuDeserved = Annotated[float | None, typer.Option(help="GPUs guaranteed (-1: unlimited).")]
GpuLimit = Annotated[float | None, typer.Option(help="Most GPUs held (-1: no limit).")]
GpuWeight = Annotated[float | None, typer.Option(help="Share of spare GPUs (weight).")]
CpuDeserved = Annotated[float | None, typer.Option(help="CPU millicores guaranteed.")]
CpuLimit = Annotated[float | None, typer.Option(help="Most CPU millicores held (-1: none).")]
CpuWeight = Annotated[float | None, typer.Option(help="Share of spare CPU (weight).")]
MemoryDeserved = Annotated[float | None, typer.Option(help="Memory guaranteed, in MB.")]
MemoryLimit = Annotated[float | None, typer.Option(help="Most memory held, in MB (-1: none).")]
MemoryWeight = Annotated[float | None, typer.Option(help="Share of spare memory (weight).")]


@dataclass(frozen=True, slots=True)
class QuotaOptions:
    pool: str
    gpu: tuple[float | None, float | None, float | None]
    cpu: tuple[float | None, float | None, float | None]
    memory: tuple[float | None, float | None, float | None]

    def entry(self) -> dict[str, Any]:
        """The `resources[]` entry these options give (only what was given)."""
        entry: dict[str, Any] = {"nodePool": {"id": self.pool}}
        for name, values in (("gpu", self.gpu), ("cpu", self.cpu), ("memory", self.memory)):
            quota = {
                key: value
                for key, value in zip(("deserved", "limit", "overQuotaWeight"), values, strict=True)
                if value is not None
            }
            if quota:
                entry[name] = quota | ({"units": "MB"} if name == "memory" else {})
        return entry


def merged(resources: list[dict[str, Any]], entry: dict[str, Any]) -> list[dict[str, Any]]:
    """`resources` with `entry` merged into the entry of its pool (or added)."""
    pool = entry["nodePool"]["id"]
    result = [dict(r) for r in resources]
    for stored in result:
        reference = stored.get("nodePool") or {}
        if pool in (reference.get("id"), reference.get("name")):
            for key in ("gpu", "cpu", "memory"):
                if key in entry:
                    stored[key] = {**(stored.get(key) or {}), **entry[key]}
            return result
    return [*result, entry]
