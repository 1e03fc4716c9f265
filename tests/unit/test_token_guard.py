"""The token guard (api/token_guard.py) with a clock of the test's: allowances spent and
refilled evenly over a minute, refused checks counted against their application and successes
not, at most `at_once` checks running at once, and the memory of allowances bounded."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from lockstep.api.token_guard import Allowances, TokenGuard
from lockstep.domain.errors import TooManyRequests, Unauthenticated


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def accepted() -> str:
    return "token"


def refused() -> str:
    raise Unauthenticated("the client id or secret is not valid")


def check(guard: TokenGuard, address: str, application: str, verify: object) -> object:
    return asyncio.run(guard.check(address, application, verify))  # type: ignore[arg-type]


def test_an_address_has_a_burst_then_one_check_per_share_of_the_minute() -> None:
    clock = Clock()
    guard = TokenGuard(per_minute=6, at_once=2, clock=clock)
    for index in range(6):
        assert check(guard, "10.0.0.1", f"app-{index}", accepted) == "token"
    with pytest.raises(TooManyRequests) as caught:
        check(guard, "10.0.0.1", "app-x", accepted)
    assert caught.value.retry_after_seconds == 10
    assert caught.value.message == (
        "too many checks of credentials from the address 10.0.0.1: at most 6 a minute "
        "(this server's limit); try again in 10 s"
    )
    assert check(guard, "10.0.0.2", "app-x", accepted) == "token"  # another address
    clock.now += 9.5
    with pytest.raises(TooManyRequests) as caught:
        check(guard, "10.0.0.1", "app-x", accepted)
    assert caught.value.retry_after_seconds == 1
    clock.now += 0.5
    assert check(guard, "10.0.0.1", "app-x", accepted) == "token"


def test_only_refused_checks_count_against_an_application() -> None:
    clock = Clock()
    guard = TokenGuard(per_minute=3, at_once=2, clock=clock)
    for index in range(10):
        assert check(guard, f"10.0.1.{index}", "ci", accepted) == "token"
    for index in range(3):
        with pytest.raises(Unauthenticated):
            check(guard, f"10.0.2.{index}", "ci", refused)
    with pytest.raises(TooManyRequests) as caught:
        check(guard, "10.0.3.1", "ci", accepted)
    assert caught.value.message.startswith(
        "too many refused credentials for the application id 'ci': at most 3 a minute"
    )
    assert check(guard, "10.0.3.1", "other", accepted) == "token"
    clock.now += 20
    assert check(guard, "10.0.3.2", "ci", accepted) == "token"


def test_a_refusal_for_the_rate_spends_nothing() -> None:
    """A check refused for one rate uses nothing of the other's allowance."""
    clock = Clock()
    guard = TokenGuard(per_minute=1, at_once=1, clock=clock)
    with pytest.raises(Unauthenticated):
        check(guard, "10.0.0.1", "ci", refused)
    with pytest.raises(TooManyRequests):
        check(guard, "10.0.0.2", "ci", accepted)  # the application's, not the address's
    assert check(guard, "10.0.0.2", "other", accepted) == "token"


def test_at_most_at_once_checks_run_together() -> None:
    guard = TokenGuard(per_minute=1000, at_once=3)
    running = 0
    most = 0
    lock = threading.Lock()

    def slow() -> str:
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        time.sleep(0.02)
        with lock:
            running -= 1
        return "token"

    async def crowd() -> list[str]:
        return await asyncio.gather(
            *(guard.check(f"10.0.0.{i}", f"app-{i}", slow) for i in range(20))
        )

    assert asyncio.run(crowd()) == ["token"] * 20
    assert most == 3


def test_the_allowances_remembered_are_bounded() -> None:
    clock = Clock()
    allowances = Allowances(2, clock=clock, max_tracked=3)
    for key in ("a", "b", "c"):
        allowances.take(key)
        allowances.take(key)
    allowances.take("d")  # "a", used longest ago, is forgotten: its allowance is full again
    assert allowances.wait_for("c") > 0
    assert allowances.wait_for("a") == 0
