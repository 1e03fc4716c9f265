"""Where each replica of a workload can be reached: a host and the port its role listens on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int

    def __str__(self) -> str:
        return f"{self.host}:{self.port}"


Endpoints = Mapping[str, Endpoint]
"""The endpoint of each pod, by pod name."""
