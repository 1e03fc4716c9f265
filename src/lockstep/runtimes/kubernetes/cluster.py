"""lockstep's interface to a Kubernetes cluster (`Cluster`), and its implementation on the
official `kubernetes` client (`KubeCluster`).

The Kubernetes runtime and the reconciler depend on `Cluster` only, and see plain `dict`
manifests, `WatchEvent`s and the typed errors of `cluster_errors` — never the client's types.
Tests give them `KubeCluster` against the fake API server of `tests/support/fake_kubernetes.py`.
Importing this module does not import `kubernetes`: `KubeCluster` imports it when it is built
or first used, so `import lockstep` stays free of it (and of its start-up cost).

`KubeCluster` speaks to the API server through `ApiClient.param_serialize` + `call_api`, the
generic path of the client (its generated APIs validate every argument through pydantic and
know nothing of our kind table): server-side apply is a PATCH with
`application/apply-patch+yaml` (the client's REST layer sends a dict body as JSON, which is
YAML), `fieldManager=lockstep` and `force=true`. Every request is retried with exponential
backoff on 429 (honouring Retry-After), 5xx and connection errors, and apply also on 409;
the sleep is injected so tests do not wait.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import time
from collections.abc import Callable, Generator, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lockstep.runtimes.kubernetes.cluster_errors import (
    ClusterConflict,
    ClusterError,
    ClusterForbidden,
    ClusterNotFound,
    ClusterUnavailable,
)

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

Manifest = dict[str, Any]
Manifests = list[Manifest]

FIELD_MANAGER = "lockstep"
APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"
JSON = "application/json"


@dataclass(frozen=True, slots=True)
class Resource:
    """Where a kind lives in the API: its plural (the URL segment) and its scope."""

    plural: str
    namespaced: bool = True


RESOURCES: Mapping[str, Resource] = {
    # Kubeflow Training Operator v1 and mpi-operator v2beta1 jobs.
    "PyTorchJob": Resource("pytorchjobs"),
    "MPIJob": Resource("mpijobs"),
    "TFJob": Resource("tfjobs"),
    "XGBoostJob": Resource("xgboostjobs"),
    "JAXJob": Resource("jaxjobs"),
    # Gang scheduling: KAI (scheduling.run.ai) and Volcano (scheduling.volcano.sh) PodGroups.
    "PodGroup": Resource("podgroups"),
    "Queue": Resource("queues", namespaced=False),
    # What the operators create, what runs a training or workspace, and what lockstep
    # creates beside a job.
    "Job": Resource("jobs"),
    "StatefulSet": Resource("statefulsets"),
    "Pod": Resource("pods"),
    "Service": Resource("services"),
    "Ingress": Resource("ingresses"),
    "PersistentVolumeClaim": Resource("persistentvolumeclaims"),
    "ConfigMap": Resource("configmaps"),
    "Secret": Resource("secrets"),
    "Event": Resource("events"),
    "Lease": Resource("leases"),
    "Node": Resource("nodes", namespaced=False),
    "Namespace": Resource("namespaces", namespaced=False),
}
"""Kind → plural and scope, for every kind lockstep reads or writes (the one such table)."""


def resource_of(kind: str) -> Resource:
    try:
        return RESOURCES[kind]
    except KeyError:
        raise ValueError(f"lockstep does not know the Kubernetes kind {kind!r}") from None


def resource_path(
    api_version: str, kind: str, namespace: str | None, name: str | None = None
) -> str:
    """The URL path of a kind's collection (`name` None) or of one object. A namespaced kind
    without a namespace is its collection across every namespace."""
    resource = resource_of(kind)
    root = f"/api/{api_version}" if api_version == "v1" else f"/apis/{api_version}"
    if resource.namespaced and namespace:
        root += f"/namespaces/{namespace}"
    elif resource.namespaced and name is not None:
        raise ValueError(f"a {kind} is namespaced: give its namespace")
    path = f"{root}/{resource.plural}"
    return path if name is None else f"{path}/{name}"


class Propagation(StrEnum):
    """What a delete does to the objects the deleted one owns (`ownerReferences`)."""

    FOREGROUND = "Foreground"
    """They go first, then the owner (visible until then, with a deletionTimestamp)."""
    BACKGROUND = "Background"
    """The owner goes now; the garbage collector removes them after."""
    ORPHAN = "Orphan"
    """They stay, without the owner reference."""


class WatchEventType(StrEnum):
    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """One change of one object: its state after the change (its last state, for DELETED)."""

    type: WatchEventType
    object: Manifest
    resume_version: str = ""
    """Where a new watch may start after this event and lose nothing, given the objects the
    caller holds once it has taken this event in (`watch(resource_version=…, known=…)`): the
    object's resourceVersion for a change the server streamed; for the changes a list
    reported, "" (start without one: list again) up to the last, which has the list's."""

    @property
    def name(self) -> str:
        return str(self.object["metadata"]["name"])

    @property
    def namespace(self) -> str | None:
        namespace = self.object["metadata"].get("namespace")
        return str(namespace) if namespace else None

    @property
    def resource_version(self) -> str:
        return str(self.object["metadata"].get("resourceVersion", ""))


class Cluster(Protocol):
    """What lockstep does with a Kubernetes cluster. Objects are plain manifests (`dict`s as
    the API server sends them); the four leading arguments name one object as the API does
    (apiVersion, kind, namespace — None for cluster-scoped kinds —, name). Raises the errors of
    `cluster_errors`: `ClusterUnavailable` when retrying did not help, `ClusterForbidden` with
    the server's message, another `ClusterError` otherwise."""

    def apply(self, manifest: Manifest) -> Manifest:
        """Create or update the object to match `manifest` (server-side apply, field manager
        `lockstep`, forced): idempotent — applying the same manifest again changes nothing,
        not even the resourceVersion. Returns the object as stored."""
        ...

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Manifest | None:
        """The object, or None when there is none."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        *,
        labels: Mapping[str, str] | None = None,
    ) -> tuple[Manifests, str]:
        """The objects of a kind (in a namespace, or in every one with None) carrying all of
        `labels`, and the list's resourceVersion (to watch from)."""
        ...

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        propagation: Propagation = Propagation.FOREGROUND,
    ) -> bool:
        """Delete the object (and, with foreground or background propagation, what it owns).
        False when it was already gone."""
        ...

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        merge_patch: Mapping[str, Any],
    ) -> Manifest:
        """Apply a JSON merge patch (RFC 7386: maps merge, `None` removes) to an existing
        object (`ClusterNotFound` when there is none); returns the object as stored."""
        ...

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        *,
        labels: Mapping[str, str] | None = None,
        resource_version: str | None = None,
        known: Iterable[Manifest] = (),
        timeout_seconds: float | None = None,
    ) -> Generator[WatchEvent, None, None]:
        """Every change to the objects `list` would return, in order, after `resource_version`
        — for which `known` are the objects the caller holds (the items of the list that gave
        it). Without a resource_version, the watch lists first and yields the difference from
        `known`: with nothing known, every object as ADDED.

        The watch resumes from the last resourceVersion it saw whenever the server ends a
        stream. When the server answers 410 Gone (its history no longer reaches back that
        far), it lists again and yields the difference from what it has yielded (ADDED,
        MODIFIED, and DELETED with the last state it knew), then watches on: the caller never
        sees the 410 and loses no change — though it may see only an object's newest state.

        Runs until `timeout_seconds` have passed (None: for ever); nothing is sent until the
        first event is asked for. `close()` it when done, to release its connection. To carry
        on later, watch again from the last event's `resume_version` (None when it is "") with
        the objects held then as `known`."""
        ...

    def pod_log(
        self,
        namespace: str,
        name: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
    ) -> Generator[str, None, None]:
        """What a pod printed, line by line, each ending in a newline (nothing when there is no
        such pod); `follow` goes on with every new line until the container ends. Nothing is
        sent until the first line is asked for; `close()` it to stop following."""
        ...

    def nodes(self) -> Manifests:
        """Every node of the cluster."""
        ...

    def close(self) -> None:
        """Release the connections."""
        ...


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently a request is retried on a transient failure."""

    attempts: int = 6
    """Tries in all, the first included."""
    first_delay: float = 0.2
    max_delay: float = 10.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1, 2, …): what the server's Retry-After
        said, else `first_delay` doubled each time up to `max_delay`."""
        if retry_after is not None:
            return max(0.0, retry_after)
        return min(self.max_delay, self.first_delay * 2.0 ** (retry - 1))


DEFAULT_RETRY = RetryPolicy()


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    path: str
    query: list[tuple[str, str]]
    body: Any = None
    content_type: str | None = None
    read_timeout: float | None = None
    """Seconds to wait for the server between two reads: None for the cluster's request
    timeout, `math.inf` for none at all (a followed log)."""


class _Expired(Exception):
    """The server's history no longer reaches the watched resourceVersion (410 Gone)."""


_CONNECT_TIMEOUT = 10.0
_WATCH_WINDOW_SECONDS = 300
_TRANSIENT = (429, 500, 502, 503, 504)


class KubeCluster:
    """`Cluster` on the official `kubernetes` client: one `ApiClient` (its configuration says
    where the API server is and how to authenticate), the retry policy, the sleep between
    retries (injected: tests pass a recorder) and the field manager of server-side apply."""

    def __init__(
        self,
        api_client: ApiClient,
        *,
        field_manager: str = FIELD_MANAGER,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Callable[[float], None] = time.sleep,
        request_timeout: float = 30.0,
        watch_window_seconds: int = _WATCH_WINDOW_SECONDS,
    ) -> None:
        self._api = api_client
        self._field_manager = field_manager
        self._retry = retry
        self._sleep = sleep
        self._request_timeout = request_timeout
        self._watch_window = watch_window_seconds

    @classmethod
    def from_config(
        cls,
        kubeconfig: Path | None = None,
        context: str | None = None,
        *,
        retry: RetryPolicy = DEFAULT_RETRY,
        sleep: Callable[[float], None] = time.sleep,
    ) -> KubeCluster:
        """From a kubeconfig file and context; with neither, from the pod's service account
        when running in a cluster, else from the default kubeconfig ($KUBECONFIG or
        ~/.kube/config) and its current context."""
        from kubernetes import config
        from kubernetes.client import ApiClient, Configuration

        configuration = Configuration()
        in_cluster = bool(os.environ.get("KUBERNETES_SERVICE_HOST"))
        try:
            if kubeconfig is None and context is None and in_cluster:
                config.load_incluster_config(  # type: ignore[no-untyped-call]
                    client_configuration=configuration
                )
            else:
                config.load_kube_config(  # type: ignore[no-untyped-call]
                    config_file=str(kubeconfig) if kubeconfig else None,
                    context=context,
                    client_configuration=configuration,
                    persist_config=False,
                )
        except (config.ConfigException, OSError, ValueError) as error:
            where = f"kubeconfig {kubeconfig}" if kubeconfig else "the Kubernetes configuration"
            raise ClusterError(f"cannot load {where}: {error}") from error
        return cls(ApiClient(configuration), retry=retry, sleep=sleep)

    def close(self) -> None:
        self._api.close()  # type: ignore[no-untyped-call]

    def __enter__(self) -> KubeCluster:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- Cluster --------------------------------------------------------------------------

    def apply(self, manifest: Manifest) -> Manifest:
        api_version, kind = str(manifest["apiVersion"]), str(manifest["kind"])
        metadata = manifest["metadata"]
        path = resource_path(api_version, kind, metadata.get("namespace"), metadata["name"])
        query = [("fieldManager", self._field_manager), ("force", "true")]
        request = _Request("PATCH", path, query, body=manifest, content_type=APPLY_PATCH)
        return _typed(self._json(request, retry_conflicts=True), api_version, kind)

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Manifest | None:
        request = _Request("GET", resource_path(api_version, kind, namespace, name), [])
        response = self._send(request, accept=(404,))
        if response.status == 404:
            response.read()
            return None
        return _typed(_decode(response, request), api_version, kind)

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        *,
        labels: Mapping[str, str] | None = None,
    ) -> tuple[Manifests, str]:
        request = _Request("GET", resource_path(api_version, kind, namespace), _selector(labels))
        body = self._json(request)
        items = [_typed(item, api_version, kind) for item in body.get("items") or []]
        return items, str((body.get("metadata") or {}).get("resourceVersion", ""))

    def delete(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        *,
        propagation: Propagation = Propagation.FOREGROUND,
    ) -> bool:
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "propagationPolicy": str(propagation),
        }
        path = resource_path(api_version, kind, namespace, name)
        request = _Request("DELETE", path, [], body=options, content_type=JSON)
        response = self._send(request, accept=(404,))
        response.read()
        return bool(response.status != 404)

    def patch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        name: str,
        merge_patch: Mapping[str, Any],
    ) -> Manifest:
        path = resource_path(api_version, kind, namespace, name)
        request = _Request("PATCH", path, [], body=dict(merge_patch), content_type=MERGE_PATCH)
        return _typed(self._json(request), api_version, kind)

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        *,
        labels: Mapping[str, str] | None = None,
        resource_version: str | None = None,
        known: Iterable[Manifest] = (),
        timeout_seconds: float | None = None,
    ) -> Generator[WatchEvent, None, None]:
        deadline = None if timeout_seconds is None else time.monotonic() + timeout_seconds
        seen = {_identity(obj): obj for obj in known}
        version = resource_version
        if version is None:
            version = yield from self._relist(api_version, kind, namespace, labels, seen)
        path = resource_path(api_version, kind, namespace)
        early_ends = 0  # streams in a row the server ended early without a line: back off
        while (window := self._window(deadline)) is not None:
            if early_ends:
                self._sleep(self._retry.delay(early_ends))
            query = [
                ("watch", "true"),
                ("resourceVersion", version),
                ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", str(window)),
                *_selector(labels),
            ]
            request = _Request("GET", path, query, read_timeout=window + _CONNECT_TIMEOUT)
            started, received = time.monotonic(), False
            try:
                with contextlib.closing(self._stream(request, expired_status=410)) as lines:
                    for line in lines:
                        received = True
                        event = _watch_event(line, request)
                        if event is None:
                            continue
                        type_, obj = event
                        version = str(obj["metadata"].get("resourceVersion") or version)
                        if type_ == "BOOKMARK":
                            continue
                        obj = _typed(obj, api_version, kind)
                        if type_ == WatchEventType.DELETED:
                            seen.pop(_identity(obj), None)
                        else:
                            seen[_identity(obj)] = obj
                        yield WatchEvent(WatchEventType(type_), obj, _version(obj))
            except _Expired:
                version = yield from self._relist(api_version, kind, namespace, labels, seen)
            early = not received and time.monotonic() - started < window / 2
            early_ends = early_ends + 1 if early else 0

    def pod_log(
        self,
        namespace: str,
        name: str,
        *,
        container: str | None = None,
        follow: bool = False,
        tail_lines: int | None = None,
        since_seconds: int | None = None,
        timestamps: bool = False,
    ) -> Generator[str, None, None]:
        query = [("follow", str(follow).lower()), ("timestamps", str(timestamps).lower())]
        if container is not None:
            query.append(("container", container))
        if tail_lines is not None:
            query.append(("tailLines", str(tail_lines)))
        if since_seconds is not None:
            query.append(("sinceSeconds", str(since_seconds)))
        path = resource_path("v1", "Pod", namespace, name) + "/log"
        request = _Request("GET", path, query, read_timeout=math.inf if follow else None)
        with contextlib.closing(self._stream(request, absent_status=404)) as lines:
            for line in lines:
                yield line.decode("utf-8", errors="replace") + "\n"

    def nodes(self) -> Manifests:
        return self.list("v1", "Node", None)[0]

    # ---- watching -------------------------------------------------------------------------

    def _window(self, deadline: float | None) -> int | None:
        """The server-side timeout of the next watch request; None once the deadline passed."""
        if deadline is None:
            return self._watch_window
        left = deadline - time.monotonic()
        return None if left <= 0 else min(self._watch_window, max(1, math.ceil(left)))

    def _relist(
        self,
        api_version: str,
        kind: str,
        namespace: str | None,
        labels: Mapping[str, str] | None,
        seen: dict[tuple[str, str], Manifest],
    ) -> Generator[WatchEvent, None, str]:
        """List, yield how the list differs from `seen` (updating it), and return the list's
        resourceVersion."""
        items, version = self.list(api_version, kind, namespace, labels=labels)
        current = {_identity(item): item for item in items}
        changes: list[tuple[WatchEventType, Manifest]] = []
        for identity, before in list(seen.items()):
            now = current.get(identity)
            if now is None or _uid(now) != _uid(before):
                del seen[identity]
                changes.append((WatchEventType.DELETED, before))
        for identity, now in current.items():
            known = seen.get(identity)
            seen[identity] = now
            if known is None:
                changes.append((WatchEventType.ADDED, now))
            elif _version(known) != _version(now):
                changes.append((WatchEventType.MODIFIED, now))
        for index, (type_, obj) in enumerate(changes, start=1):
            yield WatchEvent(type_, obj, version if index == len(changes) else "")
        return version

    # ---- HTTP -----------------------------------------------------------------------------

    def _call(self, request: _Request) -> Any:
        """Send one request; the client's `RESTResponse` (its body not read yet)."""
        headers = {"Accept": JSON}
        if request.content_type is not None:
            headers["Content-Type"] = request.content_type
        serialized = self._api.param_serialize(
            method=request.method,
            resource_path=request.path,
            query_params=request.query,
            header_params=headers,
            body=request.body,
            auth_settings=["BearerToken"],
        )
        read_timeout = request.read_timeout
        if read_timeout is None:
            read_timeout = self._request_timeout
        timeout = (_CONNECT_TIMEOUT, None if math.isinf(read_timeout) else read_timeout)
        return self._api.call_api(*serialized, _request_timeout=timeout)

    def _send(
        self, request: _Request, *, accept: tuple[int, ...] = (), retry_conflicts: bool = False
    ) -> Any:
        """Send `request` until it succeeds or fails for good. Returns the response (body not
        read) when its status is 2xx or in `accept`; raises a `ClusterError` otherwise."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        retry = 0
        while True:
            retry += 1
            retry_after: float | None = None
            try:
                response = self._call(request)
                status = int(response.status)
                if 200 <= status <= 299 or status in accept:
                    return response
                body = response.read().decode("utf-8", errors="replace")
                retry_after = _retry_after(response.headers)
                ApiException.from_response(http_resp=response, body=body, data=None)
            except ApiException as error:
                status = int(error.status or 0)
                transient = status in _TRANSIENT or (status == 409 and retry_conflicts)
                if not transient or retry >= self._retry.attempts:
                    raise _error_of(request, status, error.body) from error
            except (HTTPError, OSError) as error:
                if retry >= self._retry.attempts:
                    raise ClusterUnavailable(
                        f"cannot reach the Kubernetes API server ({request.method} "
                        f"{request.path}): {error}"
                    ) from error
            self._sleep(self._retry.delay(retry, retry_after))

    def _json(self, request: _Request, *, retry_conflicts: bool = False) -> Manifest:
        return _decode(self._send(request, retry_conflicts=retry_conflicts), request)

    def _stream(
        self,
        request: _Request,
        *,
        absent_status: int | None = None,
        expired_status: int | None = None,
    ) -> Generator[bytes, None, None]:
        """The lines of a streamed response (without their newline), as they arrive. A
        response with `absent_status` is no lines; `expired_status` raises `_Expired`. A stream
        whose connection drops ends quietly (the caller resumes)."""
        from urllib3.exceptions import HTTPError

        accept = tuple(s for s in (absent_status, expired_status) if s is not None)
        response = self._send(request, accept=accept)
        try:
            if response.status == expired_status:
                raise _Expired
            if response.status == absent_status:
                return
            buffer = b""
            try:
                for chunk in response.response.stream(amt=None, decode_content=True):
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    yield from lines
            except (HTTPError, OSError):
                return
            if buffer:
                yield buffer
        finally:
            response.response.close()
            response.response.release_conn()


def _selector(labels: Mapping[str, str] | None) -> list[tuple[str, str]]:
    if not labels:
        return []
    return [("labelSelector", ",".join(f"{key}={value}" for key, value in sorted(labels.items())))]


def _typed(obj: Manifest, api_version: str, kind: str) -> Manifest:
    """The object with its apiVersion and kind (list items and watch objects may lack them)."""
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    return obj


def _identity(obj: Manifest) -> tuple[str, str]:
    metadata = obj.get("metadata") or {}
    return str(metadata.get("namespace") or ""), str(metadata.get("name", ""))


def _uid(obj: Manifest) -> str:
    return str((obj.get("metadata") or {}).get("uid", ""))


def _version(obj: Manifest) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def _watch_event(line: bytes, request: _Request) -> tuple[str, Manifest] | None:
    """(type, object) of one line of a watch stream; None for a blank line. An ERROR event
    raises: `_Expired` for 410, the matching `ClusterError` otherwise."""
    if not line.strip():
        return None
    try:
        event = json.loads(line)
        type_, obj = str(event["type"]), event["object"]
    except (ValueError, KeyError, TypeError) as error:
        raise ClusterError(f"a watch of {request.path} sent something else: {line!r}") from error
    if not isinstance(obj, dict):
        raise ClusterError(f"a watch of {request.path} sent an event without an object")
    if type_ == "ERROR":
        code = int(obj.get("code") or 0)
        if code == 410:
            raise _Expired
        raise _error_of(request, code, json.dumps(obj))
    return type_, obj


def _decode(response: Any, request: _Request) -> Manifest:
    try:
        body = json.loads(response.read())
    except ValueError as error:
        raise ClusterError(
            f"{request.method} {request.path}: the API server did not answer JSON"
        ) from error
    if not isinstance(body, dict):
        raise ClusterError(f"{request.method} {request.path}: the API server sent {body!r}")
    return body


def _retry_after(headers: Any) -> float | None:
    """The Retry-After header in seconds (its HTTP-date form is ignored)."""
    value = headers.get("Retry-After") if headers is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _error_of(request: _Request, status: int, body: str | None) -> ClusterError:
    """Our error for a failed request, carrying the server's `Status` message and reason."""
    message, reason = "", ""
    try:
        payload = json.loads(body or "")
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        message = str(payload.get("message") or "")
        reason = str(payload.get("reason") or "")
    if not message:
        message = f"{request.method} {request.path} failed with HTTP {status}"
        if body:
            message += f": {body[:200]}"
    if status in (401, 403):
        return ClusterForbidden(message, status=status, reason=reason)
    if status == 404:
        return ClusterNotFound(message, status=status, reason=reason)
    if status == 409:
        return ClusterConflict(message, status=status, reason=reason)
    if status in _TRANSIENT:
        return ClusterUnavailable(
            f"the Kubernetes API server kept failing ({status} {reason}): {message}",
            status=status,
            reason=reason,
        )
    return ClusterError(message, status=status, reason=reason)
