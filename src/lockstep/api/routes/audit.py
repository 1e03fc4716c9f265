"""`GET /api/v1/audit/log` (a page of the audit log) and `GET /api/v1/audit/log/file` (the
log as a CSV or JSON file): the records of `[start, end]`, chosen by `filterBy`, for a System
administrator (services/audit.py). A file is streamed as it is read from the store, a batch at
a time, and holds at most `MAX_FILE_RECORDS` records."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import Annotated, Any

import orjson
from fastapi import APIRouter, Query
from starlette.responses import Response, StreamingResponse

from lockstep.api.deps import CallerDep, ServicesDep
from lockstep.api.responses import json_response
from lockstep.domain.audit import (
    DEFAULT_PAGE,
    MAX_FILE_RECORDS,
    MAX_PAGE,
    AuditQuery,
    AuditRecord,
    check_sort,
    parse_audit_filters,
    parse_time_range,
    spreadsheet_safe,
)
from lockstep.domain.clock import iso
from lockstep.domain.listing import SortOrder, check_paging

router = APIRouter(prefix="/api/v1/audit", tags=["audit"])

FilterBy = Annotated[list[str] | None, Query(alias="filterBy")]
Samples = Annotated[int | None, Query(alias="numberOfSamples", ge=0, le=MAX_PAGE)]


class FileType(StrEnum):
    CSV = "CSV"
    JSON = "JSON"


@router.get("/log")
async def get_audit_logs(
    caller: CallerDep,
    services: ServicesDep,
    start: str,
    end: str,
    offset: int | None = None,
    number_of_samples: Samples = None,
    sort_order: Annotated[SortOrder, Query(alias="sortOrder")] = SortOrder.ASC,
    sort_by: Annotated[str | None, Query(alias="sortBy")] = None,
    filter_by: FilterBy = None,
) -> Response:
    """The page's records are both `audit_logs`, as the document's properties name them, and
    `logs`, as the document's `required` does: a client reading either finds them."""
    first, _ = check_paging(offset, None)
    query = _query(
        start,
        end,
        filter_by,
        sort_by=check_sort(sort_by),
        sort_order=sort_order,
        offset=first,
        limit=DEFAULT_PAGE if number_of_samples is None else number_of_samples,
    )
    records, total = await services.calls.store(services.audit.page, caller, query)
    shown = [audit_log(record) for record in records]
    body: dict[str, Any] = {"total": total, "audit_logs": shown, "logs": shown}
    if first + len(records) < total:
        body["next"] = first + len(records)
    return json_response(body)


@router.get("/log/file")
async def download_audit_logs(
    caller: CallerDep,
    services: ServicesDep,
    start: str,
    end: str,
    file_type: FileType = FileType.CSV,
    number_of_samples: Samples = None,
    filter_by: FilterBy = None,
) -> Response:
    """Without `numberOfSamples`, every record of the range up to `MAX_FILE_RECORDS`."""
    query = _query(start, end, filter_by)
    await services.calls.store(services.audit.check_reader, caller)
    most = MAX_FILE_RECORDS if number_of_samples is None else number_of_samples
    records = services.audit.in_order(query, most=most)
    stamp = services.clock().strftime("%Y%m%dT%H%M%SZ")
    extension = file_type.value.lower()
    chunks = csv_file(records) if file_type is FileType.CSV else json_file(records)
    return StreamingResponse(
        chunks,
        media_type="application/octet-stream",
        headers={"Content-Disposition": f'attachment; filename="audit-log-{stamp}.{extension}"'},
    )


def _query(start: str, end: str, filter_by: list[str] | None, **page: Any) -> AuditQuery:
    since, until = parse_time_range(start, end)
    texts, times = parse_audit_filters(filter_by or [])
    return AuditQuery(start=since, end=until, filters=texts, time_filters=times, **page)


def audit_log(record: AuditRecord) -> dict[str, Any]:
    """The contract's `AuditLog`; a field lockstep has no value for is left out."""
    shown: dict[str, Any] = {
        "id": record.id,
        "timestamp": iso(record.timestamp),
        "tenant_id": record.tenant_id,
        "subject": record.subject,
        "subject_type": record.subject_type.value,
        "source_ip": record.source_ip,
        "action": record.action.value,
        "http_method": record.http_method,
        "url": record.url,
        "entity_type": record.entity_type,
        "entity_name": record.entity_name,
        "entity_id": record.entity_id,
        "result": record.result.value,
        "http_status_code": record.http_status_code,
        "cluster_name": record.cluster_name,
        "cluster_id": record.cluster_id,
        "request_id": record.request_id,
        "metadata": dict(record.metadata),
    }
    return {key: value for key, value in shown.items() if value is not None}


CSV_COLUMNS = (
    "id",
    "timestamp",
    "tenant_id",
    "subject",
    "subject_type",
    "source_ip",
    "action",
    "http_method",
    "url",
    "entity_type",
    "entity_name",
    "entity_id",
    "result",
    "http_status_code",
    "cluster_name",
    "cluster_id",
    "request_id",
    "metadata",
)
ROWS_PER_CHUNK = 200


def _cell(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        value = orjson.dumps(value).decode()
    return spreadsheet_safe(str(value))


def csv_file(records: Iterable[AuditRecord]) -> Iterator[bytes]:
    """A header line, then a line per record, sent `ROWS_PER_CHUNK` lines at a time."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for rows, record in enumerate(records, start=1):
        shown = audit_log(record)
        writer.writerow([_cell(shown.get(column)) for column in CSV_COLUMNS])
        if rows % ROWS_PER_CHUNK == 0:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue().encode()


def json_file(records: Iterable[AuditRecord]) -> Iterator[bytes]:
    """A JSON array of `AuditLog` objects, sent a record at a time."""
    separator = b"["
    for record in records:
        yield separator + orjson.dumps(audit_log(record))
        separator = b","
    yield b"[]" if separator == b"[" else b"]"
