"""The token endpoint under brute force: 1,000 wrong passwords for one user, sent by 8
connections at once, while the other users sign in and read, side by side with the same
readers on a quiet server in one run.

The attacker is taken to come from many addresses: the server is started with a per-address
rate far above the attack (LOCKSTEP_TOKEN_REQUESTS_PER_MINUTE), so that what stops it is the
user's own backoff (services/users.py) and the per-name rate, not the rate of one address,
which would also hold back the readers on the same loopback address.

    .venv/bin/python -m bench.brute_force [--backend sqlite|postgresql] [--attempts 1000]

Reported: how many of the attempts were hashed (401) and how many refused before any hashing
(429); and the other users' sign-in and GET latency (p50, p99) with and without the attack.
Target (the bound docs/users.md states): the attacker hashes at most a few dozen guesses; the
other users' sign-in p99 stays within 100 ms of its quiet value and their GET p99 within 20 ms,
on this 2-core machine where the attacker's connections share the cores with lockstep.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from bench.harness import Server, server, store

USERS = 4
VICTIM = "victim@example.com"


@dataclass
class Latencies:
    sign_in: list[float] = field(default_factory=list)
    get: list[float] = field(default_factory=list)

    def summary(self) -> dict[str, float]:
        return {
            "sign_in_p50_ms": percentile(self.sign_in, 50),
            "sign_in_p99_ms": percentile(self.sign_in, 99),
            "get_p50_ms": percentile(self.get, 50),
            "get_p99_ms": percentile(self.get, 99),
            "samples": len(self.sign_in),
        }


def percentile(values: list[float], rank: int) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(rank / 100 * len(ordered)) - 1))
    return round(ordered[index] * 1000, 1)


def new_user(running: Server, email: str) -> tuple[str, str]:
    created = running.call("POST", "/api/v1/users", {"email": email})
    return str(created["id"]), str(created["tempPassword"])


def timed(send: Callable[[], httpx.Response], expected: int) -> tuple[float, httpx.Response]:
    start = time.perf_counter()
    response = send()
    took = time.perf_counter() - start
    if response.status_code != expected:
        raise RuntimeError(f"expected {expected}, got {response.status_code}: {response.text}")
    return took, response


def read_as_users(
    running: Server, users: list[tuple[str, str, str]], until: Callable[[], bool]
) -> Latencies:
    """Each user in turn signs in, then reads themself, until `until()` (at least once each)."""
    measured = Latencies()
    with httpx.Client(base_url=running.url, timeout=60) as client:
        turn = 0
        while turn < len(users) or not until():
            email, password, user_id = users[turn % len(users)]
            body = {"grantType": "password", "username": email, "password": password}
            took, signed_in = timed(functools.partial(client.post, "/api/v1/token", json=body), 200)
            measured.sign_in.append(took)
            headers = {"Authorization": f"Bearer {signed_in.json()['accessToken']}"}
            read = functools.partial(client.get, f"/api/v1/users/{user_id}", headers=headers)
            measured.get.append(timed(read, 200)[0])
            turn += 1
    return measured


def attack(running: Server, attempts: int, connections: int) -> tuple[Counter[int], float]:
    """`attempts` wrong passwords for the victim over `connections` connections at once."""
    answers: Counter[int] = Counter()
    left = [attempts]
    lock = threading.Lock()

    def one_connection() -> None:
        with httpx.Client(base_url=running.url, timeout=60) as client:
            while True:
                with lock:
                    if left[0] == 0:
                        return
                    left[0] -= 1
                guess = f"Guess-{left[0]}-x"
                body = {"grantType": "password", "username": VICTIM, "password": guess}
                status = client.post("/api/v1/token", json=body).status_code
                with lock:
                    answers[status] += 1

    start = time.perf_counter()
    threads = [threading.Thread(target=one_connection) for _ in range(connections)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", default="sqlite", choices=["sqlite", "postgresql"])
    parser.add_argument("--attempts", type=int, default=1000)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--quiet-seconds", type=float, default=10.0)
    options = parser.parse_args()
    settings = {"LOCKSTEP_TOKEN_REQUESTS_PER_MINUTE": "1000000"}
    with store(options.backend) as url, server(url, settings=settings) as running:
        new_user(running, VICTIM)
        users = []
        for index in range(USERS):
            email = f"reader-{index}@example.com"
            user_id, password = new_user(running, email)
            users.append((email, password, user_id))

        quiet_until = time.monotonic() + options.quiet_seconds
        quiet = read_as_users(running, users, lambda: time.monotonic() >= quiet_until)

        done = threading.Event()
        under: list[Latencies] = []
        reader = threading.Thread(
            target=lambda: under.append(read_as_users(running, users, done.is_set))
        )
        reader.start()
        answers, seconds = attack(running, options.attempts, options.connections)
        done.set()
        reader.join()

    record = {
        "backend": options.backend,
        "cpus": os.cpu_count(),
        "attempts": options.attempts,
        "connections": options.connections,
        "attack_seconds": round(seconds, 2),
        "answers": {str(status): count for status, count in sorted(answers.items())},
        "quiet": quiet.summary(),
        "under_attack": under[0].summary(),
        "sign_in_mean_ms_quiet": round(statistics.mean(quiet.sign_in) * 1000, 1),
    }
    print(json.dumps(record, indent=2))
    out = Path(__file__).resolve().parent / "results"
    out.mkdir(exist_ok=True)
    (out / f"brute-force-{int(time.time())}.json").write_text(json.dumps(record, indent=2))


if __name__ == "__main__":
    main()
