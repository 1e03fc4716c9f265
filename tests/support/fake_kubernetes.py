"""A fake Kubernetes API server over real HTTP, for the tests of the Kubernetes runtime.

Kubernetes cannot run on the machines the tests run on, so `FakeKubernetes` stands in for the API
server: an in-memory object store behind a `ThreadingHTTPServer` on a free port, which the
official `kubernetes` client talks to exactly as to a real cluster (a kubeconfig with the URL and
a bearer token, real HTTP, chunked watch and log streams). Tests use it as a context manager,
write its kubeconfig with `write_kubeconfig`, and act through its helpers as the Training
Operator, the kubelet or the scheduler would: create pods with statuses, set a job's conditions,
add events, append to a pod's log, compact the watch history (to force a 410 Gone), end the open
watch streams, or make the next requests to a path fail (429, 500, 409, 403, …).

What it serves, for any group/version/plural (core `/api/v1/…`, groups `/apis/{g}/{v}/…`),
namespaced (`…/namespaces/{ns}/{plural}[/{name}[/status]]`) or cluster-scoped (`…/{plural}`,
e.g. nodes and namespaces; a namespaced plural there lists every namespace):

- GET one; LIST with equality/existence label selectors and `metadata.name`/`metadata.namespace`
  field selectors, `resourceVersion` in the list's metadata; POST (409 AlreadyExists; 404 when
  the namespace does not exist; `generateName`); PUT (with a resourceVersion precondition).
- DELETE (404 when absent): `propagationPolicy` from the query or the DeleteOptions body.
  Foreground marks the owner (deletionTimestamp, `foregroundDeletion` finalizer), deletes its
  dependents (objects whose `ownerReferences` name its uid), then it; Background (the default)
  deletes it, then its dependents; Orphan strips the owner references. Deleting a namespace
  deletes everything in it.
- PATCH: `application/merge-patch+json` (RFC 7386; a strategic merge patch is treated as one) and
  server-side apply `application/apply-patch+yaml` (requires `fieldManager`; creates the object
  when absent; merges the applied object into the stored one, maps deep and lists whole, and
  removes the fields this manager applied before but no longer does). A write that changes
  nothing changes nothing: no new resourceVersion, no watch event. `generation` goes up when
  something outside `metadata` and `status` changes.
- The `status` subresource (GET, PUT, merge PATCH); writes to the main resource keep the stored
  status, as for any resource with a status subresource.
- WATCH (`?watch=true`): a chunked JSON-lines stream of ADDED/MODIFIED/DELETED after
  `resourceVersion` (without one, or with "0", the current objects as ADDED first), filtered by
  namespace and selectors (an object leaving the selection is DELETED, entering it ADDED);
  `timeoutSeconds` honoured. A resourceVersion older than the compaction point, or a watch left
  behind by a compaction, gets the ERROR event with a 410 `Expired` Status, as the real server
  sends it, and the stream ends.
- `GET …/pods/{name}/log` with `follow` (until the pod is Succeeded/Failed or deleted),
  `tailLines`, `timestamps`, `sinceSeconds`; the `container` parameter is accepted, logs are per
  pod.
- Errors as `Status` objects (kind Status, status Failure, code, reason, message); every request
  needs `Authorization: Bearer <token>`.

What it does not do: schemas, validation, defaulting or admission; controllers (nothing happens
to a job unless a test does it); finalizers other than foreground deletion; pagination
(`limit`/`continue`); set-based selectors (`in`, `notin`: 400); list at an older
resourceVersion (lists are always current); watch bookmarks; JSON patch (415); field ownership
between managers (so no apply conflicts), `managedFields`; API discovery.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import secrets
import select
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

Object = dict[str, Any]
Key = tuple[str, str, str, str]
"""Where an object is stored: (group, plural, namespace, name); namespace "" when cluster-scoped."""

TOKEN = "fake-kubernetes-token-" + secrets.token_hex(8)
"""The bearer token every request must carry (the kubeconfig the fake writes has it)."""

APPLY_PATCH = "application/apply-patch+yaml"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
}
_SYSTEM_METADATA = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "managedFields",
)
_POD_ENDED = ("Succeeded", "Failed")


class ApiError(Exception):
    """Answered as a `Status` object with this code."""

    def __init__(self, code: int, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or _REASONS.get(code, "Unknown")

    def status(self) -> Object:
        return status_object(self.code, self.message, reason=self.reason)


def status_object(code: int, message: str, *, reason: str | None = None) -> Object:
    """A `Status` object as the API server sends it on errors."""
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason or _REASONS.get(code, "Unknown"),
        "code": code,
    }


def group_of(api_version: str) -> str:
    """The API group of an apiVersion ("" for the core group's "v1")."""
    return api_version.rpartition("/")[0]


def plural_of(kind: str) -> str:
    """The usual plural of a kind (PyTorchJob → pytorchjobs, Ingress → ingresses)."""
    lower = kind.lower()
    if lower.endswith(("s", "x")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in "aeiou":
        return lower[:-1] + "ies"
    return lower + "s"


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the fake answered (for tests that count calls or check content types)."""

    method: str
    path: str
    query: dict[str, list[str]]
    content_type: str
    status: int

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None


@dataclass(slots=True)
class _Fault:
    path: str
    status: int
    remaining: int
    method: str | None
    retry_after: float | None
    message: str


@dataclass(frozen=True, slots=True)
class _Event:
    resource_version: int
    type: str
    key: Key
    old: Object | None
    new: Object


@dataclass(slots=True)
class _LogLine:
    at: datetime
    text: str


@dataclass(frozen=True, slots=True)
class _Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    connected: Callable[[], bool]

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[-1] if values else None

    def flag(self, name: str) -> bool:
        return (self.param(name) or "").lower() in ("true", "1")

    @property
    def content_type(self) -> str:
        return self.headers.get("content-type", "").split(";")[0].strip().lower()


@dataclass(slots=True)
class _Reply:
    status: int
    body: Object | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class _Stream:
    chunks: Iterator[bytes]
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class _Route:
    group: str
    version: str
    plural: str
    namespace: str | None
    name: str | None
    subresource: str | None

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


class _Selector:
    """Equality and existence label selectors (`a=b,c!=d,e,!f`) and the metadata field
    selectors (`metadata.name=x`)."""

    def __init__(self, labels: str | None, fields: str | None) -> None:
        self.labels = [_requirement(part) for part in _split(labels)]
        self.fields = [_requirement(part) for part in _split(fields)]
        for key, _, _ in self.fields:
            if key not in ("metadata.name", "metadata.namespace"):
                raise ApiError(400, f'field label not supported: "{key}"')

    def matches(self, obj: Object) -> bool:
        metadata = obj.get("metadata", {})
        labels: dict[str, str] = metadata.get("labels") or {}
        fields = {
            "metadata.name": metadata.get("name", ""),
            "metadata.namespace": metadata.get("namespace", ""),
        }
        return all(_holds(labels, r) for r in self.labels) and all(
            _holds(fields, r) for r in self.fields
        )


def _split(selector: str | None) -> list[str]:
    return [part.strip() for part in (selector or "").split(",") if part.strip()]


def _requirement(text: str) -> tuple[str, str, str | None]:
    """(key, operator, value): operators `=`, `!=`, `exists`, `!exists`."""
    if re.search(r"\s(in|notin)\s*\(", text):
        raise ApiError(400, f"unsupported selector (set-based): {text!r}")
    if "!=" in text:
        key, _, value = text.partition("!=")
        return key.strip(), "!=", value.strip()
    if "=" in text:
        key, _, value = text.partition("==") if "==" in text else text.partition("=")
        return key.strip(), "=", value.strip()
    if text.startswith("!"):
        return text[1:].strip(), "!exists", None
    return text, "exists", None


def _holds(values: dict[str, str], requirement: tuple[str, str, str | None]) -> bool:
    key, operator, value = requirement
    if operator == "=":
        return values.get(key) == value
    if operator == "!=":
        return values.get(key) != value
    if operator == "exists":
        return key in values
    return key not in values


def _merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386: maps merge, `null` removes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = _merge_patch(result.get(key), value)
    return result


def _drop_unapplied(target: Object, previous: Object, applied: Object) -> None:
    """Remove from `target` what a manager applied before (`previous`) and no longer applies."""
    for key, before in previous.items():
        if key not in applied:
            target.pop(key, None)
        elif isinstance(before, dict) and isinstance(applied[key], dict):
            child = target.get(key)
            if isinstance(child, dict):
                _drop_unapplied(child, before, applied[key])


def _spec_of(obj: Object) -> Object:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


class FakeKubernetes:
    """An in-memory Kubernetes API server on 127.0.0.1, speaking real HTTP.

    `with FakeKubernetes() as cluster:` starts it; `cluster.url` and `cluster.token` (or
    `cluster.write_kubeconfig(path)`) configure a client. Every helper takes the lock, so a
    test may call them from any thread; `atomically()` holds it across several."""

    def __init__(self, *, namespaces: Iterable[str] = ("default",)) -> None:
        self.token = TOKEN
        self.requests: list[RecordedRequest] = []
        self._cond = threading.Condition(threading.RLock())
        self._objects: dict[Key, Object] = {}
        self._applied: dict[tuple[Key, str], Object] = {}
        self._events: list[_Event] = []
        self._logs: dict[tuple[str, str], list[_LogLine]] = {}
        self._faults: list[_Fault] = []
        self._resource_version = 0
        self._compacted = 0
        self._watch_epoch = 0
        self._stopping = False
        self._streams = 0
        self._connections: set[socket.socket] = set()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        for namespace in namespaces:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})

    # ---- lifecycle ------------------------------------------------------------------------

    def __enter__(self) -> FakeKubernetes:
        self.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop()

    def start(self) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop serving: end every stream, close every connection."""
        with self._cond:
            self._stopping = True
            self._cond.notify_all()
            deadline = time.monotonic() + 5.0
            while self._streams and time.monotonic() < deadline:
                self._cond.wait(0.05)
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5.0)

    @property
    def port(self) -> int:
        assert self._server is not None, "the fake API server is not started"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def write_kubeconfig(
        self, path: Path, *, context: str = "fake", namespace: str = "default"
    ) -> Path:
        """A kubeconfig whose context `context` points at this server with its bearer token."""
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "fake", "cluster": {"server": self.url}}],
            "users": [{"name": "lockstep", "user": {"token": self.token}}],
            "contexts": [
                {
                    "name": context,
                    "context": {"cluster": "fake", "user": "lockstep", "namespace": namespace},
                }
            ],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(config))
        return path

    # ---- state, for tests acting as controllers ---------------------------------------------

    @contextlib.contextmanager
    def atomically(self) -> Iterator[None]:
        """Hold the server's lock: no request is answered and no stream moves meanwhile."""
        with self._cond:
            yield

    @property
    def resource_version(self) -> int:
        with self._cond:
            return self._resource_version

    def create(self, obj: Object, *, plural: str | None = None) -> Object:
        """Store a new object as a controller would, status included (AlreadyExists: ApiError).
        Returns it as stored."""
        with self._cond:
            key = self._key_of(obj, plural)
            return copy.deepcopy(self._create(key, copy.deepcopy(obj), keep_status=True))

    def get(self, api_version: str, plural: str, namespace: str | None, name: str) -> Object | None:
        with self._cond:
            found = self._objects.get((group_of(api_version), plural, namespace or "", name))
            return copy.deepcopy(found)

    def objects(self, api_version: str, plural: str, namespace: str | None = None) -> list[Object]:
        """Every stored object of a resource (in one namespace, or all), oldest first."""
        group = group_of(api_version)
        with self._cond:
            return [
                copy.deepcopy(obj)
                for (g, p, ns, _), obj in self._objects.items()
                if g == group and p == plural and (namespace is None or ns == namespace)
            ]

    def update(
        self,
        api_version: str,
        plural: str,
        namespace: str | None,
        name: str,
        change: Callable[[Object], None],
    ) -> Object:
        """Change a stored object in place through `change` (status too); a new
        resourceVersion and a MODIFIED event when it changed anything."""
        with self._cond:
            key = (group_of(api_version), plural, namespace or "", name)
            current = self._require(key)
            changed = copy.deepcopy(current)
            change(changed)
            return copy.deepcopy(self._write(key, current, changed))

    def set_status(
        self, api_version: str, plural: str, namespace: str | None, name: str, status: Object
    ) -> Object:
        """Merge `status` into the object's status (as a controller's status patch would)."""

        def merge(obj: Object) -> None:
            obj["status"] = _merge_patch(obj.get("status") or {}, status)

        return self.update(api_version, plural, namespace, name, merge)

    def set_conditions(
        self,
        api_version: str,
        plural: str,
        namespace: str,
        name: str,
        conditions: Iterable[tuple[str, str]],
    ) -> Object:
        """Set a Kubeflow job's `status.conditions` to these (type, status) pairs, with the
        operator's reasons (`<Kind><Type>`) and timestamps."""
        stamp = now_rfc3339()
        kind = (self.get(api_version, plural, namespace, name) or {}).get("kind", "")
        rows = [
            {
                "type": type_,
                "status": status,
                "reason": f"{kind}{type_}",
                "message": f"{kind} {name} is {type_.lower()}.",
                "lastUpdateTime": stamp,
                "lastTransitionTime": stamp,
            }
            for type_, status in conditions
        ]
        return self.set_status(api_version, plural, namespace, name, {"conditions": rows})

    def delete(
        self,
        api_version: str,
        plural: str,
        namespace: str | None,
        name: str,
        *,
        propagation: str = "Background",
    ) -> Object:
        with self._cond:
            key = (group_of(api_version), plural, namespace or "", name)
            return copy.deepcopy(self._delete(key, propagation))

    def add_event(
        self,
        involved: Object,
        *,
        reason: str,
        message: str,
        type_: str = "Normal",
        source: str = "fake",
    ) -> Object:
        """A core/v1 Event about `involved` (an object as stored), in its namespace."""
        metadata = involved["metadata"]
        namespace = metadata.get("namespace") or "default"
        stamp = now_rfc3339()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": f"{metadata['name']}.{secrets.token_hex(8)}",
                "namespace": namespace,
            },
            "involvedObject": {
                "apiVersion": involved.get("apiVersion"),
                "kind": involved.get("kind"),
                "name": metadata["name"],
                "namespace": namespace,
                "uid": metadata.get("uid"),
            },
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": source},
            "count": 1,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
        }
        return self.create(event)

    def append_log(self, namespace: str, pod: str, *lines: str, at: datetime | None = None) -> None:
        """Lines the pod printed (without their newline), at `at` (now by default)."""
        with self._cond:
            log = self._logs.setdefault((namespace, pod), [])
            moment = at or datetime.now(UTC)
            log.extend(_LogLine(moment, line) for line in lines)
            self._cond.notify_all()

    def compact(self) -> int:
        """Forget the watch history up to now, as etcd's compaction does: a watch from an older
        resourceVersion, or one still behind, gets 410 Gone. Returns the compaction point."""
        with self._cond:
            self._compacted = self._resource_version
            self._events.clear()
            self._cond.notify_all()
            return self._compacted

    def end_watches(self) -> None:
        """End every open watch stream cleanly (as an API server does at its timeout, or when
        it restarts): each watcher must come back with the last resourceVersion it saw."""
        with self._cond:
            self._watch_epoch += 1
            self._cond.notify_all()

    def fail(
        self,
        path: str,
        status: int,
        *,
        times: int = 1,
        method: str | None = None,
        retry_after: float | None = None,
        message: str | None = None,
    ) -> None:
        """Answer the next `times` requests whose path starts with `path` (and whose method is
        `method`, when given) with `status` and a Status object; 429 carries Retry-After
        (1 second unless `retry_after` says otherwise)."""
        if status == 429 and retry_after is None:
            retry_after = 1
        text = message or {
            403: f'forbidden: User "lockstep" cannot access {path}',
            409: "Operation cannot be fulfilled: the object has been modified; please apply "
            "your changes to the latest version and try again",
            429: "Too many requests, please try again later.",
        }.get(status, f"injected failure {status}")
        with self._cond:
            self._faults.append(_Fault(path, status, times, method, retry_after, text))

    def requests_to(self, method: str, path_prefix: str = "/") -> list[RecordedRequest]:
        with self._cond:
            return [
                r for r in self.requests if r.method == method and r.path.startswith(path_prefix)
            ]

    # ---- storage --------------------------------------------------------------------------

    def _key_of(self, obj: Object, plural: str | None) -> Key:
        metadata = obj.get("metadata") or {}
        return (
            group_of(str(obj.get("apiVersion", ""))),
            plural or plural_of(str(obj.get("kind", ""))),
            metadata.get("namespace") or "",
            metadata.get("name", ""),
        )

    def _require(self, key: Key) -> Object:
        found = self._objects.get(key)
        if found is None:
            group, plural, _, name = key
            resource = f"{plural}.{group}" if group else plural
            raise ApiError(404, f'{resource} "{name}" not found')
        return found

    def _check_namespace(self, namespace: str) -> None:
        if namespace and ("", "namespaces", "", namespace) not in self._objects:
            raise ApiError(404, f'namespaces "{namespace}" not found')

    def _next_version(self) -> int:
        self._resource_version += 1
        return self._resource_version

    def _record(self, type_: str, key: Key, old: Object | None, new: Object) -> None:
        version = int(new["metadata"]["resourceVersion"])
        self._events.append(_Event(version, type_, key, copy.deepcopy(old), copy.deepcopy(new)))
        self._cond.notify_all()

    def _create(self, key: Key, obj: Object, *, keep_status: bool) -> Object:
        group, plural, namespace, name = key
        if not name:
            raise ApiError(422, "metadata.name: Required value: name or generateName is required")
        if key in self._objects:
            resource = f"{plural}.{group}" if group else plural
            raise ApiError(409, f'{resource} "{name}" already exists', reason="AlreadyExists")
        self._check_namespace(namespace)
        if not keep_status:
            obj.pop("status", None)
        metadata = obj.setdefault("metadata", {})
        for system in _SYSTEM_METADATA:
            metadata.pop(system, None)
        metadata.update(
            name=name,
            uid=str(uuid.uuid4()),
            resourceVersion=str(self._next_version()),
            creationTimestamp=now_rfc3339(),
            generation=1,
        )
        if namespace:
            metadata["namespace"] = namespace
        self._objects[key] = obj
        self._record("ADDED", key, None, obj)
        return obj

    def _write(self, key: Key, current: Object, changed: Object) -> Object:
        """Store `changed` in place of `current` (keeping the system's metadata) unless they
        are equal; returns what is stored."""
        metadata = changed.setdefault("metadata", {})
        for system in _SYSTEM_METADATA:
            if system in current["metadata"]:
                metadata[system] = current["metadata"][system]
            else:
                metadata.pop(system, None)
        return self._commit(key, current, changed)

    def _commit(self, key: Key, current: Object, changed: Object) -> Object:
        metadata = changed["metadata"]
        if changed == current:
            return current
        if _spec_of(changed) != _spec_of(current):
            metadata["generation"] = int(current["metadata"].get("generation", 0)) + 1
        metadata["resourceVersion"] = str(self._next_version())
        self._objects[key] = changed
        self._record("MODIFIED", key, current, changed)
        return changed

    def _delete(self, key: Key, propagation: str) -> Object:
        current = self._require(key)
        uid = current["metadata"]["uid"]
        dependents = [
            k
            for k, obj in self._objects.items()
            if any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or [])
        ]
        contained = [k for k in self._objects if key[:2] == ("", "namespaces") and k[2] == key[3]]
        if propagation == "Orphan":
            for dependent in dependents:
                obj = self._objects[dependent]
                orphan = copy.deepcopy(obj)
                references = orphan["metadata"].get("ownerReferences") or []
                orphan["metadata"]["ownerReferences"] = [
                    r for r in references if r.get("uid") != uid
                ]
                self._write(dependent, obj, orphan)
        elif propagation == "Foreground":
            marked = copy.deepcopy(current)
            marked["metadata"]["finalizers"] = [
                *(marked["metadata"].get("finalizers") or []),
                "foregroundDeletion",
            ]
            marked["metadata"]["deletionTimestamp"] = now_rfc3339()
            self._commit(key, current, marked)
            for dependent in dependents:
                if dependent in self._objects:
                    self._delete(dependent, "Foreground")
        gone = self._objects.pop(key)
        gone["metadata"]["resourceVersion"] = str(self._next_version())
        if key[:2] == ("", "pods"):
            self._logs.pop((key[2], key[3]), None)
        for applied in [k for k in self._applied if k[0] == key]:
            del self._applied[applied]
        self._record("DELETED", key, None, gone)
        for dependent in [*(dependents if propagation == "Background" else []), *contained]:
            if dependent in self._objects:
                self._delete(dependent, "Background")
        return gone

    # ---- HTTP -----------------------------------------------------------------------------

    def handle(self, request: _Request) -> _Reply | _Stream:
        """Answer one request (called on the server's handler threads)."""
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return _Reply(401, status_object(401, "Unauthorized"))
        with self._cond:
            for fault in self._faults:
                if request.path.startswith(fault.path) and fault.method in (None, request.method):
                    fault.remaining -= 1
                    if fault.remaining <= 0:
                        self._faults.remove(fault)
                    headers = {}
                    if fault.retry_after is not None:
                        headers["Retry-After"] = f"{fault.retry_after:g}"
                    return _Reply(fault.status, status_object(fault.status, fault.message), headers)
        try:
            route = _route(request.path)
            if route is None:
                raise ApiError(404, "the server could not find the requested resource")
            return self._serve(request, route)
        except ApiError as error:
            return _Reply(error.code, error.status())
        except ValueError as error:  # a number parameter that is not one
            return _Reply(400, status_object(400, f"bad request: {error}"))

    def _serve(self, request: _Request, route: _Route) -> _Reply | _Stream:
        method = request.method
        namespace = route.namespace or ""
        if route.subresource == "log":
            if method != "GET" or route.plural != "pods" or route.group:
                raise ApiError(405, "log is served for core pods, on GET")
            return self._log(request, namespace, route.name or "")
        if route.subresource not in (None, "status"):
            raise ApiError(404, f"subresource {route.subresource!r} is not served")
        if route.name is None:
            selector = _Selector(request.param("labelSelector"), request.param("fieldSelector"))
            if method == "GET" and request.flag("watch"):
                int(request.param("resourceVersion") or "0")  # a ValueError answers 400
                return _Stream(self._watch(request, route, selector))
            if method == "GET":
                return _Reply(200, self._list(route, selector))
            if method == "POST":
                obj = _json_body(request)
                if (obj.get("metadata") or {}).get("namespace") not in (None, "", namespace):
                    raise ApiError(400, "the namespace of the object does not match the URL")
                name = (obj.get("metadata") or {}).get("name")
                if not name and (prefix := (obj.get("metadata") or {}).get("generateName")):
                    obj["metadata"]["name"] = name = prefix + secrets.token_hex(3)[:5]
                with self._cond:
                    key = (route.group, route.plural, namespace, name or "")
                    self._check_kind(obj, route)
                    return _Reply(201, copy.deepcopy(self._create(key, obj, keep_status=False)))
            raise ApiError(405, f"{method} is not allowed on a collection")
        key = (route.group, route.plural, namespace, route.name)
        with self._cond:
            if method == "GET":
                return _Reply(200, copy.deepcopy(self._require(key)))
            if method == "DELETE":
                return _Reply(200, copy.deepcopy(self._delete(key, _propagation(request))))
            if method == "PUT":
                return self._put(request, route, key)
            if method == "PATCH":
                return self._patch(request, route, key)
        raise ApiError(405, f"{method} is not allowed")

    def _check_kind(self, obj: Object, route: _Route) -> None:
        if not obj.get("kind"):
            raise ApiError(400, "Object 'Kind' is missing")
        obj["apiVersion"] = route.api_version

    def _list(self, route: _Route, selector: _Selector) -> Object:
        with self._cond:
            items = [
                copy.deepcopy(obj)
                for (group, plural, ns, _), obj in self._objects.items()
                if group == route.group
                and plural == route.plural
                and (route.namespace is None or ns == route.namespace)
                and selector.matches(obj)
            ]
            version = self._resource_version
        kind = f"{items[0]['kind']}List" if items else "List"
        return {
            "apiVersion": route.api_version,
            "kind": kind,
            "metadata": {"resourceVersion": str(version)},
            "items": items,
        }

    def _put(self, request: _Request, route: _Route, key: Key) -> _Reply:
        current = self._require(key)
        obj = _json_body(request)
        wanted = (obj.get("metadata") or {}).get("resourceVersion")
        if not wanted:
            raise ApiError(
                422, "metadata.resourceVersion: Invalid value: 0: must be specified for an update"
            )
        self._precondition(current, wanted)
        if route.subresource == "status":
            changed = copy.deepcopy(current)
            changed["status"] = obj.get("status")
        else:
            changed = obj
            changed["status"] = current.get("status")
            if changed["status"] is None:
                changed.pop("status")
        return _Reply(200, copy.deepcopy(self._write(key, current, changed)))

    def _patch(self, request: _Request, route: _Route, key: Key) -> _Reply:
        content_type = request.content_type
        if content_type == APPLY_PATCH:
            if route.subresource:
                raise ApiError(415, "apply to a subresource is not supported by the fake")
            return self._apply(request, route, key)
        if content_type not in (MERGE_PATCH, STRATEGIC_MERGE_PATCH):
            raise ApiError(415, f"the patch type {content_type!r} is not supported")
        current = self._require(key)
        patch = _json_body(request)
        if wanted := (patch.get("metadata") or {}).get("resourceVersion"):
            self._precondition(current, wanted)
        if route.subresource == "status":
            changed = copy.deepcopy(current)
            changed["status"] = _merge_patch(current.get("status") or {}, patch.get("status"))
        else:
            changed = _merge_patch(current, {k: v for k, v in patch.items() if k != "status"})
        return _Reply(200, copy.deepcopy(self._write(key, current, changed)))

    def _apply(self, request: _Request, route: _Route, key: Key) -> _Reply:
        manager = request.param("fieldManager")
        if not manager:
            raise ApiError(
                422,
                'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
                "is required for apply patch",
            )
        try:
            applied = yaml.safe_load(request.body.decode())
        except yaml.YAMLError as error:
            raise ApiError(400, f"error decoding YAML: {error}") from error
        if not isinstance(applied, dict):
            raise ApiError(400, "the applied configuration is not an object")
        metadata = applied.setdefault("metadata", {})
        if metadata.get("name") != route.name:
            raise ApiError(400, "the name of the object does not match the name on the URL")
        if (metadata.get("namespace") or "") not in ("", route.namespace or ""):
            raise ApiError(400, "the namespace of the object does not match the URL")
        self._check_kind(applied, route)
        wanted = metadata.pop("resourceVersion", None)
        for system in _SYSTEM_METADATA:
            metadata.pop(system, None)
        applied.pop("status", None)
        current = self._objects.get(key)
        if current is None:
            created = self._create(key, copy.deepcopy(applied), keep_status=False)
            self._applied[(key, manager)] = applied
            return _Reply(201, copy.deepcopy(created))
        if wanted:
            self._precondition(current, wanted)
        changed = copy.deepcopy(current)
        previous = self._applied.get((key, manager))
        if previous is not None:
            _drop_unapplied(changed, previous, applied)
        changed = _deep_merge(changed, applied)
        stored = self._write(key, current, changed)
        self._applied[(key, manager)] = applied
        return _Reply(200, copy.deepcopy(stored))

    def _precondition(self, current: Object, wanted: str) -> None:
        if str(wanted) != current["metadata"]["resourceVersion"]:
            name = current["metadata"]["name"]
            raise ApiError(
                409,
                f'Operation cannot be fulfilled on "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
            )

    # ---- streams --------------------------------------------------------------------------

    def _watch(self, request: _Request, route: _Route, selector: _Selector) -> Iterator[bytes]:
        timeout = request.param("timeoutSeconds")
        deadline = time.monotonic() + float(timeout) if timeout else None
        since = request.param("resourceVersion") or "0"
        with self._cond:
            self._streams += 1
            epoch = self._watch_epoch
            if since == "0":
                cursor = self._resource_version
                lines = [
                    _line({"type": "ADDED", "object": obj})
                    for k, obj in self._objects.items()
                    if self._watched(k, route) and selector.matches(obj)
                ]
            else:
                cursor, lines = int(since), []
        try:
            while True:
                yield from lines
                with self._cond:
                    if self._watch_epoch != epoch:
                        return
                    if cursor < self._compacted:
                        expired = self._expired(cursor)
                        break
                    fresh = [e for e in self._events if e.resource_version > cursor]
                    if fresh:
                        cursor = fresh[-1].resource_version
                        lines = [
                            line
                            for event in fresh
                            if self._watched(event.key, route)
                            and (line := _event_line(event, selector)) is not None
                        ]
                        continue
                    lines = []
                    if self._stopping or (deadline and time.monotonic() >= deadline):
                        return
                    self._cond.wait(_wait(deadline))
                if not request.connected():
                    return
            yield expired
        finally:
            with self._cond:
                self._streams -= 1
                self._cond.notify_all()

    def _expired(self, cursor: int) -> bytes:
        message = f"too old resource version: {cursor} ({self._compacted})"
        return _line({"type": "ERROR", "object": status_object(410, message, reason="Expired")})

    @staticmethod
    def _watched(key: Key, route: _Route) -> bool:
        group, plural, namespace, _ = key
        return (
            group == route.group
            and plural == route.plural
            and (route.namespace is None or namespace == route.namespace)
        )

    def _log(self, request: _Request, namespace: str, name: str) -> _Stream:
        key = ("", "pods", namespace, name)
        with self._cond:
            self._require(key)
            lines = list(self._logs.get((namespace, name), []))
        cursor = len(lines)
        since_seconds = request.param("sinceSeconds")
        if since_seconds:
            earliest = datetime.now(UTC) - timedelta(seconds=int(since_seconds))
            lines = [line for line in lines if line.at >= earliest]
        tail = request.param("tailLines")
        if tail is not None:
            lines = lines[-int(tail) :] if int(tail) > 0 else []  # a ValueError answers 400
        stream = self._log_lines(
            request,
            key,
            first=lines,
            cursor=cursor,
            timestamps=request.flag("timestamps"),
            follow=request.flag("follow"),
        )
        return _Stream(stream, "text/plain")

    def _log_lines(
        self,
        request: _Request,
        key: Key,
        *,
        first: list[_LogLine],
        cursor: int,
        timestamps: bool,
        follow: bool,
    ) -> Iterator[bytes]:
        """`first`, then (following) every line appended after the `cursor`-th until the pod
        ends or goes."""
        _, _, namespace, name = key
        with self._cond:
            self._streams += 1
        try:
            lines = first
            while True:
                yield from (_log_line(line, timestamps) for line in lines)
                if not follow:
                    return
                with self._cond:
                    log = self._logs.get((namespace, name), [])
                    lines, cursor = log[cursor:], len(log)
                    if not lines:
                        pod = self._objects.get(key)
                        phase = (pod or {}).get("status", {}).get("phase")
                        if pod is None or phase in _POD_ENDED or self._stopping:
                            return
                        self._cond.wait(0.1)
                if not request.connected():
                    return
        finally:
            with self._cond:
                self._streams -= 1
                self._cond.notify_all()


def _deep_merge(target: Object, applied: Object) -> Object:
    """Maps merge key by key; anything else (lists included) is replaced."""
    result = copy.deepcopy(target)
    for key, value in applied.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = copy.deepcopy(value)
    return result


def _event_line(event: _Event, selector: _Selector) -> bytes | None:
    """The watch line for one stored change as a watcher with `selector` sees it, if any."""
    now = selector.matches(event.new)
    before = event.old is not None and selector.matches(event.old)
    type_ = event.type
    if type_ == "MODIFIED":
        if before and not now:
            type_ = "DELETED"
        elif now and not before:
            type_ = "ADDED"
        elif not now:
            return None
    elif not now:
        return None
    return _line({"type": type_, "object": event.new})


def _line(obj: Object) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode() + b"\n"


def _log_line(line: _LogLine, timestamps: bool) -> bytes:
    if timestamps:
        stamp = line.at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"
        return f"{stamp} {line.text}\n".encode()
    return f"{line.text}\n".encode()


def _wait(deadline: float | None) -> float:
    if deadline is None:
        return 0.1
    return max(0.0, min(0.1, deadline - time.monotonic()))


def _json_body(request: _Request) -> Object:
    try:
        body = json.loads(request.body or b"{}")
    except json.JSONDecodeError as error:
        raise ApiError(400, f"the body is not JSON: {error}") from error
    if not isinstance(body, dict):
        raise ApiError(400, "the body is not a JSON object")
    return body


def _propagation(request: _Request) -> str:
    policy = request.param("propagationPolicy")
    if policy is None and request.body:
        policy = _json_body(request).get("propagationPolicy")
    policy = policy or "Background"
    if policy not in ("Foreground", "Background", "Orphan"):
        raise ApiError(400, f"propagationPolicy: Unsupported value: {policy!r}")
    return str(policy)


def _route(path: str) -> _Route | None:
    parts = [part for part in path.split("/") if part]
    if parts[:2] == ["api", "v1"]:
        group, version, rest = "", "v1", parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    namespace = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        namespace, rest = rest[1], rest[2:]
    if not 1 <= len(rest) <= 3:
        return None
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    return _Route(group, version, rest[0], namespace, name, subresource)


def _handler_for(fake: FakeKubernetes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in separate writes: without this, Nagle's algorithm and
            # the client's delayed ACK hold every answer back for 40 ms.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with fake._cond:
                fake._connections.add(self.connection)

        def finish(self) -> None:
            with fake._cond:
                fake._connections.discard(self.connection)
            with contextlib.suppress(OSError):
                super().finish()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read `fake.requests` instead."""

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def do_PUT(self) -> None:
            self._answer()

        def do_PATCH(self) -> None:
            self._answer()

        def do_DELETE(self) -> None:
            self._answer()

        def _connected(self) -> bool:
            try:
                readable, _, _ = select.select([self.connection], [], [], 0)
                return not readable or self.connection.recv(1, socket.MSG_PEEK) != b""
            except OSError:
                return False

        def _answer(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            request = _Request(
                method=self.command,
                path=url.path,
                query=parse_qs(url.query, keep_blank_values=True),
                headers={k.lower(): v for k, v in self.headers.items()},
                body=self.rfile.read(length) if length else b"",
                connected=self._connected,
            )
            answer = fake.handle(request)
            status = answer.status if isinstance(answer, _Reply) else 200
            with fake._cond:
                fake.requests.append(
                    RecordedRequest(
                        request.method, request.path, request.query, request.content_type, status
                    )
                )
            try:
                if isinstance(answer, _Reply):
                    self._reply(answer)
                else:
                    self._stream(answer)
            except OSError:
                self.close_connection = True

        def _reply(self, reply: _Reply) -> None:
            body = json.dumps(reply.body).encode() if reply.body is not None else b""
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def _stream(self, stream: _Stream) -> None:
            self.send_response(200)
            self.send_header("Content-Type", stream.content_type)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.wfile.flush()
            try:
                for chunk in stream.chunks:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            finally:
                close = getattr(stream.chunks, "close", None)
                if close is not None:
                    close()

    return Handler
