"""Slots of open streams, per caller and in all: a caller past its share is refused while
another is still served, a refusal names its limit, and a slot given back (once, however often
it is released) makes room again."""

from __future__ import annotations

import pytest

from lockstep.auth.tokens import Principal
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
