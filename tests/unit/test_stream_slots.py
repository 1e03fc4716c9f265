"""Slots of open streams, per caller and in all: a caller past its share is refused while
another is still served, a refusal names its limit, and a slot given back (once, however often
it is released) makes room again; and the settings that bound them."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from lockstep.auth.tokens import Principal
from lockstep.cli.main import app
from lockstep.config import Settings
from lockstep.domain.errors import TooManyRequests
from lockstep.domain.identity import SubjectType
from lockstep.services.stream_slots import Limit, StreamSlots

A = Principal(SubjectType.APP, "a", "a")
B = Principal(SubjectType.APP, "b", "b")


def slots() -> StreamSlots:
    return StreamSlots(
        "log streams",
        per_caller=Limit(2, "LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER"),
        overall=Limit(3, "LOCKSTEP_MAX_LOG_STREAMS"),
    )


def test_a_caller_past_its_share_is_refused_while_another_is_served() -> None:
    counted = slots()
    held = [counted.take(A), counted.take(A)]
    with pytest.raises(TooManyRequests) as refused:
        counted.take(A)
    assert "2 log streams of this caller" in refused.value.message
    assert "LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER" in refused.value.message
    assert refused.value.retry_after_seconds >= 1
    counted.take(B)
    assert (counted.held(A), counted.held(B), counted.held()) == (2, 1, 3)
    held[0].release()
    counted.take(A)


def test_past_the_overall_limit_every_caller_is_refused_until_one_ends() -> None:
    counted = slots()
    counted.take(A)
    first_of_b = counted.take(B)
    counted.take(B)
    with pytest.raises(TooManyRequests) as refused:
        counted.take(A)
    assert "3 log streams are open" in refused.value.message
    assert "LOCKSTEP_MAX_LOG_STREAMS)" in refused.value.message
    first_of_b.release()
    first_of_b.release()  # released twice: given back once
    assert counted.held() == 2
    counted.take(A)
    with pytest.raises(TooManyRequests):
        counted.take(A)


def test_without_an_overall_limit_only_shares_count() -> None:
    counted = StreamSlots("change streams", per_caller=Limit(1, "X"))
    taken = [counted.take(Principal(SubjectType.USER, str(n), str(n))) for n in range(50)]
    assert counted.held() == 50
    for slot in taken:
        slot.release()
    assert counted.held() == 0


def test_the_stream_limits_are_set_by_their_variables_or_flags_of_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = Settings()
    assert (defaults.max_log_streams, defaults.max_log_streams_per_caller) == (200, 20)
    assert (defaults.max_watch_streams, defaults.max_watch_streams_per_caller) == (100, 10)
    monkeypatch.setenv("LOCKSTEP_MAX_LOG_STREAMS", "50")
    monkeypatch.setenv("LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER", "5")
    monkeypatch.setenv("LOCKSTEP_MAX_WATCH_STREAMS_PER_CALLER", "3")
    chosen = Settings()
    assert (chosen.max_log_streams, chosen.max_log_streams_per_caller) == (50, 5)
    assert chosen.max_watch_streams_per_caller == 3
    for flag, variable in (
        ("--max-log-streams", "LOCKSTEP_MAX_LOG_STREAMS"),
        ("--max-log-streams-per-caller", "LOCKSTEP_MAX_LOG_STREAMS_PER_CALLER"),
        ("--max-watch-streams-per-caller", "LOCKSTEP_MAX_WATCH_STREAMS_PER_CALLER"),
    ):
        refused = CliRunner().invoke(app, ["serve", flag, "0"])
        assert refused.exit_code == 2, refused.output
        assert f"lockstep: {variable}: Input should be greater than or equal to 1" in (
            refused.output
        )
