"""Readiness probes (httpGet), run as the kubelet runs them: after `initialDelaySeconds`, every
`periodSeconds`, each try given `timeoutSeconds`; a pod turns ready after `successThreshold`
successes in a row and unready after `failureThreshold` failures. A status from 200 to 399 is
a success; HTTPS is not verified, as the kubelet does not verify it either.

One thread probes every pod; a change of readiness is reported with the pod's workload id.
"""

from __future__ import annotations

import heapq
import http.client
import ssl
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

_UNVERIFIED = ssl._create_unverified_context()  # noqa: S323 (as the kubelet: not verified)


@dataclass(frozen=True, slots=True)
class HttpProbe:
    """A readiness probe of a pod, its port already the machine's."""

    port: int
    path: str = "/"
    host: str = "127.0.0.1"
    https: bool = False
    initial_delay: float = 0.0
    period: float = 10.0
    timeout: float = 1.0
    success_threshold: int = 1
    failure_threshold: int = 3

    def to_json(self) -> dict[str, Any]:
        return {
            "port": self.port,
            "path": self.path,
            "host": self.host,
            "https": self.https,
            "initialDelay": self.initial_delay,
            "period": self.period,
            "timeout": self.timeout,
            "successThreshold": self.success_threshold,
            "failureThreshold": self.failure_threshold,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HttpProbe:
        return cls(
            port=data["port"],
            path=data["path"],
            host=data["host"],
            https=data["https"],
            initial_delay=data["initialDelay"],
            period=data["period"],
            timeout=data["timeout"],
            success_threshold=data["successThreshold"],
            failure_threshold=data["failureThreshold"],
        )

    def succeeds(self) -> bool:
        """One try: does the pod answer with a status from 200 to 399 in time?"""
        connection: http.client.HTTPConnection
        if self.https:
            connection = http.client.HTTPSConnection(
                self.host, self.port, timeout=self.timeout, context=_UNVERIFIED
            )
        else:
            connection = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            connection.request("GET", self.path, headers={"User-Agent": "lockstep-probe"})
            return 200 <= connection.getresponse().status < 400
        except (OSError, http.client.HTTPException):
            return False
        finally:
            connection.close()


@dataclass(slots=True)
class _Probed:
    workload_id: str
    probe: HttpProbe
    ready: bool = False
    streak: int = 0
    """Consecutive results that disagree with `ready`."""


@dataclass(order=True, slots=True)
class _Due:
    at: float
    uid: str = field(compare=False)


class Prober:
    """Probes pods and remembers which are ready; `on_change(workload_id)` on each change."""

    def __init__(
        self, on_change: Callable[[str], None], *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._on_change = on_change
        self._clock = clock
        self._pods: dict[str, _Probed] = {}
        self._due: list[_Due] = []
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._thread = threading.Thread(target=self._run, name="lockstep-probes", daemon=True)
        self._thread.start()

    def watch(self, uid: str, workload_id: str, probe: HttpProbe, *, started: float) -> None:
        """Probe the pod `uid` from `initial_delay` after `started` (a monotonic moment)."""
        with self._lock:
            if uid in self._pods:
                return
            self._pods[uid] = _Probed(workload_id, probe)
            heapq.heappush(self._due, _Due(started + probe.initial_delay, uid))
            self._wake.notify()

    def forget(self, uid: str) -> None:
        with self._lock:
            self._pods.pop(uid, None)

    def is_ready(self, uid: str) -> bool:
        with self._lock:
            probed = self._pods.get(uid)
            return probed is not None and probed.ready

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._wake.notify()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._closed and (not self._due or self._due[0].at > self._clock()):
                    wait = None if not self._due else self._due[0].at - self._clock()
                    self._wake.wait(wait)
                if self._closed:
                    return
                due = heapq.heappop(self._due)
                probed = self._pods.get(due.uid)
            if probed is None:
                continue
            succeeded = probed.probe.succeeds()
            with self._lock:
                if self._pods.get(due.uid) is not probed:
                    continue
                changed = self._record(probed, succeeded)
                heapq.heappush(self._due, _Due(self._clock() + probed.probe.period, due.uid))
            if changed:
                self._on_change(probed.workload_id)

    @staticmethod
    def _record(probed: _Probed, succeeded: bool) -> bool:
        if succeeded == probed.ready:
            probed.streak = 0
            return False
        probed.streak += 1
        threshold = probed.probe.success_threshold if succeeded else probed.probe.failure_threshold
        if probed.streak < threshold:
            return False
        probed.ready, probed.streak = succeeded, 0
        return True
