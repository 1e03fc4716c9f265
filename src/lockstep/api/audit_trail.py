"""An ASGI middleware that makes the audit log's records: one for every call under `/api/`
that may change something (POST, PUT, PATCH, DELETE) made by an identified caller, and one for
every sign-in (`POST /api/v1/token`), once its answer is known. It hands each record to the
audit writer (services/audit.py) and goes on; the writer stores it.

Who: the caller `_caller` (api/deps.py) identified, kept in the request's state; for a
sign-in, the user name or client id the token route read (`note_sign_in`), never a password,
secret or token. What: the action and entity the route's template names
(domain/audit.py `describe_call`), with, for a creation, the new entity's id and name read from
its answer (nothing else of it). A call refused before its caller is identified (no token, or
one not valid: 401; a body too large: 413) names nobody and changes nothing: it is not
recorded, so that no one without a credential can fill the log (`lockstep_http_requests_total`
counts those). Every recorded call's answer carries its record's `X-Request-Id`.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lockstep.api.deps import PRINCIPAL_STATE, client_address
from lockstep.auth.tokens import Principal
from lockstep.domain.audit import (
    ANONYMOUS,
    CHANGING_METHODS,
    MAX_METADATA,
    OWN_PATH_PREFIX,
    TOKEN_PATH,
    AuditAction,
    AuditRecord,
    AuditSubjectType,
    CallDescription,
    call_url,
    clipped,
    created_entity,
    describe_call,
    result_of,
    to_the_millisecond,
)
from lockstep.domain.clock import Clock
from lockstep.domain.identity import SubjectType
from lockstep.services.audit import AuditWriter

log = logging.getLogger(__name__)

SIGN_IN_STATE = "audit_sign_in"
"""Where the token route leaves who signs in."""
MAX_CREATION_ANSWER_BYTES = 64 * 1024
"""The longest answer of a creation read for the new entity's id and name."""
CLUSTER_ENTITIES = frozenset(
    {"workload", "project", "department", "nodepool", "secret", "config-map", "claim"}
)
"""The entity types that live in the cluster, whose records name it."""
REQUEST_ID_HEADER = b"x-request-id"


@dataclass(frozen=True, slots=True)
class SignIn:
    """Who a token request names, and how."""

    subject: str
    subject_type: AuditSubjectType
    grant_type: str


def note_sign_in(request: Request, sign_in: SignIn) -> None:
    """Tell the audit trail who this token request signs in (the token route calls it once it
    has read the request's credentials)."""
    setattr(request.state, SIGN_IN_STATE, sign_in)


@dataclass(frozen=True, slots=True)
class Cluster:
    id: str
    name: str


class AuditTrail:
    def __init__(
        self, app: ASGIApp, *, writer: AuditWriter, clock: Clock, cluster: Cluster | None
    ) -> None:
        """`cluster`: the one cluster this server serves, named by the records of what lives
        in it (None when it serves several)."""
        self._app = app
        self._writer = writer
        self._clock = clock
        self._cluster = cluster

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if (
            scope["type"] != "http"
            or scope.get("method") not in CHANGING_METHODS
            or not str(scope.get("path", "")).startswith("/api/")
        ):
            await self._app(scope, receive, send)
            return
        state: dict[str, Any] = scope.setdefault("state", {})
        request_id = str(uuid.uuid4())
        status = 500  # what the client sees when the app raises before answering
        answer = bytearray()
        json_answer = False

        async def watched(message: Message) -> None:
            nonlocal status, json_answer
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = list(message.get("headers", []))
                json_answer = any(
                    name.lower() == b"content-type" and value.startswith(b"application/json")
                    for name, value in headers
                )
                message = {
                    **message,
                    "headers": [*headers, (REQUEST_ID_HEADER, request_id.encode())],
                }
            elif (
                message["type"] == "http.response.body"
                and json_answer
                and scope["method"] == "POST"
                and 200 <= status < 300
                and len(answer) <= MAX_CREATION_ANSWER_BYTES
            ):
                answer.extend(message.get("body", b""))
            await send(message)

        try:
            await self._app(scope, receive, watched)
        except Exception:
            await self._keep(scope, state, status=500, answer=b"", request_id=request_id)
            raise
        await self._keep(scope, state, status=status, answer=bytes(answer), request_id=request_id)

    async def _keep(
        self,
        scope: Scope,
        state: Mapping[str, Any],
        *,
        status: int,
        answer: bytes,
        request_id: str,
    ) -> None:
        try:
            record = self._record(scope, state, status=status, answer=answer, request_id=request_id)
        except Exception:  # an audit record never turns an answer into an error
            log.exception(
                "could not make the audit record of %s %s", scope["method"], scope["path"]
            )
            return
        if record is not None:
            await self._writer.record(record)

    def _record(
        self,
        scope: Scope,
        state: Mapping[str, Any],
        *,
        status: int,
        answer: bytes,
        request_id: str,
    ) -> AuditRecord | None:
        route = scope.get("route")
        template = getattr(route, "path", None)
        principal: Principal | None = state.get(PRINCIPAL_STATE)
        sign_in: SignIn | None = state.get(SIGN_IN_STATE)
        if template == TOKEN_PATH:
            subject = sign_in.subject if sign_in is not None else ANONYMOUS
            subject_type = sign_in.subject_type if sign_in is not None else AuditSubjectType.USER
            metadata = {} if sign_in is None else {"grantType": sign_in.grant_type}
        elif principal is not None:
            subject = principal.name
            subject_type = (
                AuditSubjectType.USER
                if principal.subject_type is SubjectType.USER
                else AuditSubjectType.APP
            )
            metadata = {}
            if principal.subject_type is SubjectType.USER and principal.client_id is not None:
                metadata["accessKey"] = principal.client_id
        else:
            return None
        described = describe_call(str(scope["method"]), template, scope.get("path_params", {}))
        described = self._completed(described, principal, template, status, answer)
        in_cluster = self._cluster is not None and described.entity_type in CLUSTER_ENTITIES
        return AuditRecord(
            id=str(uuid.uuid4()),
            timestamp=to_the_millisecond(self._clock()),
            subject=clipped(subject),
            subject_type=subject_type,
            action=described.action,
            result=result_of(status),
            http_method=str(scope["method"]),
            url=_url(scope),
            http_status_code=status,
            source_ip=clipped(client_address(Request(scope)), 64),
            request_id=request_id,
            entity_type=described.entity_type,
            entity_id=described.entity_id,
            entity_name=described.entity_name,
            cluster_id=self._cluster.id if in_cluster and self._cluster else None,
            cluster_name=self._cluster.name if in_cluster and self._cluster else None,
            metadata=dict(list(metadata.items())[:MAX_METADATA]),
        )

    @staticmethod
    def _completed(
        described: CallDescription,
        principal: Principal | None,
        template: str | None,
        status: int,
        answer: bytes,
    ) -> CallDescription:
        """The entity's id and name where the path does not give them: the caller themself
        (`/api/v1/me/…`), or what a creation's answer says."""
        if template is not None and template.startswith(OWN_PATH_PREFIX) and principal:
            return CallDescription(
                described.action,
                described.entity_type,
                principal.user_id,
                clipped(principal.name),
            )
        if described.action is AuditAction.CREATE and answer and 200 <= status < 300:
            try:
                body = orjson.loads(answer)
            except orjson.JSONDecodeError:
                return described
            entity_id, entity_name = created_entity(body)
            return CallDescription(
                described.action,
                described.entity_type,
                described.entity_id or entity_id,
                described.entity_name or entity_name,
            )
        return described


def _url(scope: Scope) -> str:
    """The absolute URL the call was made to (domain/audit.py `call_url`)."""
    headers = dict(scope.get("headers", []))
    host = headers.get(b"host")
    server = scope.get("server")
    if server is None:
        own = "localhost"
    else:
        name, port = server[0], server[1]
        own = f"[{name}]" if ":" in str(name) else str(name)
        own = own if port is None else f"{own}:{port}"
    return call_url(
        scheme=str(scope.get("scheme", "http")),
        host=None if host is None else host.decode("latin-1"),
        server=own,
        path=str(scope.get("path", "")),
        query=scope.get("query_string", b"").decode("latin-1"),
    )
