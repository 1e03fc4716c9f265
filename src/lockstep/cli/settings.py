"""Settings from CLI flags over `LOCKSTEP_*` environment variables over defaults."""

from __future__ import annotations

from typing import Any

from lockstep.config import Settings


def settings_from(**flags: Any) -> Settings:
    return Settings(**{name: value for name, value in flags.items() if value is not None})
