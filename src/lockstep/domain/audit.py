"""The audit log's model: a record of one call that changed something or signed someone in,
what a call's route says about it (its action and the entity it acts on), and the checked
query of `GET /api/v1/audit/log` (its `filterBy`, `sortBy` and paging).

Pure: the API's audit trail (api/audit_trail.py) describes each call with `describe_call`,
the audit service (services/audit.py) checks queries with `parse_audit_filters`, the store
(store/audit.py) turns an `AuditQuery` into SQL.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from urllib.parse import parse_qsl, quote, urlencode

from lockstep.domain.clock import parse_moment
from lockstep.domain.errors import InvalidRequest
from lockstep.domain.listing import Filter, Operator, SortOrder, parse_filters

TENANT_ID = "1"
"""The one tenant lockstep serves, as the rest of the API names it (`tenantId` 1)."""
ANONYMOUS = "anonymous"
"""The subject of a sign-in whose request named nobody (a body that is not JSON, no name)."""

MAX_URL_LENGTH = 2048
"""The longest url kept of a call (characters); a longer one is cut, ending with `…`."""
MAX_NAME_LENGTH = 255
"""The longest subject, entity name or id kept (characters)."""
MAX_METADATA = 10
"""The most metadata entries of a record, as the contract bounds them."""
MAX_PAGE = 1000
"""The most records one page holds (`numberOfSamples`, as the contract bounds it)."""
DEFAULT_PAGE = 20
MAX_FILE_RECORDS = 100_000
"""The most records one downloaded file holds; narrow `start` and `end` for more."""


class AuditAction(StrEnum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    SIGN_IN = "sign-in"
    SIGN_OUT = "sign-out"
    RESET_PASSWORD = "reset-password"  # noqa: S105 (an action's name)


class AuditResult(StrEnum):
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class AuditSubjectType(StrEnum):
    USER = "User"
    APP = "App"
    """An application: a service account, or lockstep's own operator."""


CHANGING_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One call, as the audit log keeps it."""

    id: str
    timestamp: datetime
    subject: str
    subject_type: AuditSubjectType
    action: AuditAction
    result: AuditResult
    http_method: str
    url: str
    http_status_code: int
    source_ip: str
    request_id: str
    entity_type: str | None = None
    entity_id: str | None = None
    entity_name: str | None = None
    cluster_id: str | None = None
    cluster_name: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    tenant_id: str = TENANT_ID


def to_the_millisecond(moment: datetime) -> datetime:
    """`moment` as the wire shows it (ISO 8601 with milliseconds): a record's timestamp is kept
    so, so that a filter on a timestamp a reader was shown finds its record."""
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def result_of(status: int) -> AuditResult:
    return AuditResult.SUCCEEDED if 200 <= status < 300 else AuditResult.FAILED


def clipped(text: str, longest: int = MAX_NAME_LENGTH) -> str:
    """`text`, cut to `longest` characters (the last one `…`) when longer."""
    return text if len(text) <= longest else text[: longest - 1] + "…"


_PLAIN_HOST = re.compile(r"^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$")
_PATH_SAFE = "/-._~!$&'()*+,;=:@"
_CUT_ESCAPE = re.compile(r"%[0-9A-Fa-f]?$")


def call_url(*, scheme: str, host: str | None, server: str, path: str, query: str) -> str:
    """The absolute URL a call was made to, as the contract's `uri` format wants it: the
    scheme, the host the client addressed (`server`, this server's own address, when it named
    none or named it oddly), the path and the query, escaped; at most `MAX_URL_LENGTH`
    characters (a longer one is cut, never inside an escape)."""
    authority = host if host and _PLAIN_HOST.match(host) else server
    url = f"{scheme}://{authority}{quote(path, safe=_PATH_SAFE)}"
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        url += "?" + urlencode(pairs, quote_via=quote)
    if len(url) > MAX_URL_LENGTH:
        url = _CUT_ESCAPE.sub("", url[:MAX_URL_LENGTH])
    return url


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(text: str) -> str:
    """`text` as a cell of a CSV file: one starting as a formula does (`=`, `+`, `-`, `@`) is
    written after a `'`, so that a name a caller chose (a user name tried at a sign-in) is shown
    by a spreadsheet, never run."""
    return "'" + text if text.startswith(FORMULA_STARTS) else text


# --- what a route says about a call ----------------------------------------------------------

ENTITY_TYPES: dict[str, str] = {
    "workloads": "workload",
    "distributed": "workload",
    "trainings": "workload",
    "workspaces": "workload",
    "projects": "project",
    "departments": "department",
    "node-pools": "nodepool",
    "secrets": "secret",
    "configmaps": "config-map",
    "claims": "claim",
    "users": "user",
    "me": "user",
    "access-rules": "access-rule",
    "service-accounts": "service-account",
    "apps": "app",
    "access-keys": "access-key",
    "user-applications": "user-application",
}
"""The collections of the API's paths, by the entity type a record names."""

UPDATES = frozenset({"suspend", "resume", "secret", "resources"})
"""Steps of a path that change the entity before them (`…/{workloadId}/suspend`)."""
STEP_ACTIONS: dict[str, AuditAction] = {
    "logout": AuditAction.SIGN_OUT,
    "password": AuditAction.RESET_PASSWORD,
}
TOKEN_PATH = "/api/v1/token"  # noqa: S105 (a path)
OWN_PATH_PREFIX = "/api/v1/me/"
"""Paths about the caller themself: their entity is the caller."""
_PARAMETER = re.compile(r"^\{(?P<name>[^}]+)\}$")


@dataclass(frozen=True, slots=True)
class CallDescription:
    """What a call's route says of it."""

    action: AuditAction
    entity_type: str | None = None
    entity_id: str | None = None
    entity_name: str | None = None


def describe_call(
    method: str, template: str | None, path_params: Mapping[str, object]
) -> CallDescription:
    """The action of a changing call and the entity it acts on, from its route's template
    (`/api/v1/org-unit/projects/{projectId}/secrets/{name}`) and the values of its parameters.

    The entity is the last collection the template names; the parameter after it is its id, or
    its name when the parameter is `name`. A POST creates, unless a step after the entity says
    otherwise (`suspend`, `resume`, `secret`: update; `logout`: sign-out; `password`:
    reset-password); PUT and PATCH update; DELETE deletes. A call no route matched names no
    entity."""
    method = method.upper()
    if template == TOKEN_PATH:
        return CallDescription(AuditAction.SIGN_IN)
    by_method = {"PUT": AuditAction.UPDATE, "PATCH": AuditAction.UPDATE}
    action = by_method.get(method, AuditAction.DELETE if method == "DELETE" else None)
    if template is None:
        return CallDescription(action or AuditAction.CREATE)
    entity_type: str | None = None
    entity_id: str | None = None
    entity_name: str | None = None
    step: str | None = None
    segments = template.strip("/").split("/")
    for index, segment in enumerate(segments):
        if _PARAMETER.match(segment):
            continue
        if segment in ENTITY_TYPES:
            entity_type, entity_id, entity_name, step = ENTITY_TYPES[segment], None, None, None
            following = segments[index + 1] if index + 1 < len(segments) else ""
            parameter = _PARAMETER.match(following)
            if parameter is not None:
                value = path_params.get(parameter["name"])
                text = None if value is None else clipped(str(value))
                if parameter["name"] == "name":
                    entity_name = text
                else:
                    entity_id = text
        elif segment in UPDATES or segment in STEP_ACTIONS:
            step = segment
    if action is None:  # a POST
        if step in STEP_ACTIONS:
            action = STEP_ACTIONS[step]
        elif step in UPDATES:
            action = AuditAction.UPDATE
        else:
            action = AuditAction.CREATE
    return CallDescription(action, entity_type, entity_id, entity_name)


CREATED_ID_KEYS = ("id", "workloadId")
CREATED_NAME_KEYS = ("name", "username")


def created_entity(body: object) -> tuple[str | None, str | None]:
    """The id and name a creation's answer gives its new entity; only these two are read of
    it (an answer may hold a one-time password or secret, which no record keeps)."""
    if not isinstance(body, Mapping):
        return None, None
    found_id = next((body[key] for key in CREATED_ID_KEYS if _plain(body.get(key))), None)
    name = next((body[key] for key in CREATED_NAME_KEYS if _plain(body.get(key))), None)
    return (
        None if found_id is None else clipped(str(found_id)),
        None if name is None else clipped(str(name)),
    )


def _plain(value: object) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool) and str(value) != ""


# --- reading the log -------------------------------------------------------------------------

FILTER_FIELDS = frozenset(
    {
        "timestamp",
        "subject",
        "subject_type",
        "source_ip",
        "action",
        "result",
        "url",
        "entity_type",
        "entity_name",
        "cluster_name",
    }
)
"""What `filterBy` may name (the contract's `AuditLogFilter`)."""
SORT_FIELDS = frozenset(
    {
        "timestamp",
        "subject",
        "subject_type",
        "source_ip",
        "action",
        "http_method",
        "result",
        "url",
        "entity_type",
        "entity_name",
        "entity_id",
    }
)
"""What `sortBy` may name (the contract's `AuditLogSort`)."""
DATE_OPERATORS = frozenset(
    {Operator.EQUALS, Operator.NOT_EQUALS, Operator.AT_MOST, Operator.AT_LEAST}
)
"""The operators a date (`timestamp`) takes, as the contract says."""
FILTER_EXPRESSION = re.compile(
    r"^(?P<field>[A-Za-z][A-Za-z0-9_]*)(?P<op>==|!=|<=|>=|=@|!@|=\^|=\$)(?P<value>.+)$"
)
"""One `filterBy` expression of the audit log: its fields are snake_case."""


@dataclass(frozen=True, slots=True)
class TimeFilter:
    """A `timestamp` filter, its value read as a moment."""

    operator: Operator
    moment: datetime


@dataclass(frozen=True, slots=True)
class AuditQuery:
    """Records of `[start, end]`, checked."""

    start: datetime
    end: datetime
    filters: tuple[Filter, ...] = ()
    """On text fields."""
    time_filters: tuple[TimeFilter, ...] = ()
    sort_by: str = "timestamp"
    sort_order: SortOrder = SortOrder.ASC
    offset: int = 0
    limit: int = DEFAULT_PAGE


def parse_time_range(start: str, end: str) -> tuple[datetime, datetime]:
    """`start` and `end` as moments; `InvalidRequest` naming each that is not ISO 8601, or
    `end` before `start`."""
    moments: list[datetime] = []
    for name, text in (("start", start), ("end", end)):
        try:
            moments.append(parse_moment(text))
        except ValueError as error:
            raise InvalidRequest.of(
                name, f"{text!r} is not an ISO 8601 date-time (2026-12-06T12:00:00Z)"
            ) from error
    if moments[1] < moments[0]:
        raise InvalidRequest.of("end", "must not be before start")
    return moments[0], moments[1]


def parse_audit_filters(
    expressions: list[str],
) -> tuple[tuple[Filter, ...], tuple[TimeFilter, ...]]:
    """`filterBy` of the audit log: text filters, and `timestamp` ones with their moments;
    `InvalidRequest` naming `filterBy` and the rule broken."""
    parsed = parse_filters(expressions, allowed=FILTER_FIELDS, expression=FILTER_EXPRESSION)
    texts = tuple(item for item in parsed if item.field != "timestamp")
    times: list[TimeFilter] = []
    for item in parsed:
        if item.field != "timestamp":
            continue
        if item.operator not in DATE_OPERATORS:
            raise InvalidRequest.of(
                "filterBy",
                f"timestamp{item.operator.value}{item.value}: a date takes only ==, !=, <= and >=",
            )
        try:
            times.append(TimeFilter(item.operator, parse_moment(item.value)))
        except ValueError as error:
            raise InvalidRequest.of(
                "filterBy", f"timestamp: {item.value!r} is not an ISO 8601 date-time"
            ) from error
    return texts, tuple(times)


def check_sort(sort_by: str | None) -> str:
    if sort_by is None:
        return "timestamp"
    if sort_by not in SORT_FIELDS:
        fields = ", ".join(sorted(SORT_FIELDS))
        raise InvalidRequest.of("sortBy", f"cannot sort by {sort_by!r}; fields: {fields}")
    return sort_by
