"""Time, injected: everything that needs "now" takes a `Clock` so tests can control it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    """The real clock: an aware UTC datetime."""
    return datetime.now(UTC)


def parse_moment(text: str) -> datetime:
    """An ISO-8601 date or date-time as an aware datetime; no offset means UTC."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def iso(moment: datetime) -> str:
    """ISO-8601 in UTC with milliseconds and `Z`, as the wire shows time."""
    if moment.utcoffset():
        moment = moment.astimezone(UTC)
    return moment.replace(tzinfo=None).isoformat(timespec="milliseconds") + "Z"
