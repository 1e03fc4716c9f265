"""The audit log's repository: records written in batches, read by time range with the
contract's filters, sorting and paging, read in order for a file, and deleted past their
retention (domain/audit.py; services/audit.py calls it)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import (
    Boolean,
    ColumnElement,
    Connection,
    Select,
    and_,
    cast,
    delete,
    func,
    insert,
    not_,
    or_,
    select,
)

from lockstep.domain.audit import (
    AuditAction,
    AuditQuery,
    AuditRecord,
    AuditResult,
    AuditSubjectType,
    TimeFilter,
)
from lockstep.domain.listing import Filter, Operator, SortOrder
from lockstep.store.tables import audit_log

Cursor = tuple[datetime, int]
"""Where a reading in order stopped: the last record's timestamp and sequence number."""


def _record(row: Any) -> AuditRecord:
    return AuditRecord(
        id=row.id,
        timestamp=row.timestamp,
        tenant_id=row.tenant_id,
        subject=row.subject,
        subject_type=AuditSubjectType(row.subject_type),
        source_ip=row.source_ip,
        action=AuditAction(row.action),
        http_method=row.http_method,
        url=row.url,
        entity_type=row.entity_type,
        entity_name=row.entity_name,
        entity_id=row.entity_id,
        result=AuditResult(row.result),
        http_status_code=int(row.http_status_code),
        cluster_name=row.cluster_name,
        cluster_id=row.cluster_id,
        request_id=row.request_id,
        metadata=orjson.loads(row.metadata),
    )


def _values(record: AuditRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "timestamp": record.timestamp,
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
        "metadata": orjson.dumps(dict(record.metadata)).decode(),
    }


def _text_condition(item: Filter) -> ColumnElement[bool]:
    column = audit_log.c[item.field]
    match item.operator:
        case Operator.EQUALS:
            return cast(column == item.value, Boolean)
        case Operator.NOT_EQUALS:
            return or_(column != item.value, column.is_(None))
        case Operator.AT_MOST:
            return cast(column <= item.value, Boolean)
        case Operator.AT_LEAST:
            return cast(column >= item.value, Boolean)
        case Operator.CONTAINS:
            return column.contains(item.value, autoescape=True)
        case Operator.NOT_CONTAINS:
            return or_(not_(column.contains(item.value, autoescape=True)), column.is_(None))
        case Operator.STARTS_WITH:
            return column.startswith(item.value, autoescape=True)
        case Operator.ENDS_WITH:
            return column.endswith(item.value, autoescape=True)


def _time_condition(item: TimeFilter) -> ColumnElement[bool]:
    column = audit_log.c.timestamp
    match item.operator:
        case Operator.EQUALS:
            return cast(column == item.moment, Boolean)
        case Operator.NOT_EQUALS:
            return cast(column != item.moment, Boolean)
        case Operator.AT_MOST:
            return cast(column <= item.moment, Boolean)
        case _:
            return cast(column >= item.moment, Boolean)


def _where(query: AuditQuery) -> ColumnElement[bool]:
    return and_(
        audit_log.c.timestamp >= query.start,
        audit_log.c.timestamp <= query.end,
        *(_text_condition(item) for item in query.filters),
        *(_time_condition(item) for item in query.time_filters),
    )


class AuditRepository:
    def __init__(self, connection: Connection) -> None:
        self._db = connection

    def add_many(self, records: Sequence[AuditRecord]) -> None:
        if records:
            self._db.execute(insert(audit_log), [_values(record) for record in records])

    def count(self, query: AuditQuery) -> int:
        counted = select(func.count()).select_from(audit_log).where(_where(query))
        return int(self._db.execute(counted).scalar_one())

    def page(self, query: AuditQuery) -> list[AuditRecord]:
        """The page `query` asks for, in its order (ties in the order they were written)."""
        column = audit_log.c[query.sort_by]
        if query.sort_order is SortOrder.DESC:
            order = (column.desc().nulls_last(), audit_log.c.seq.desc())
        else:
            order = (column.asc().nulls_first(), audit_log.c.seq.asc())
        chosen: Select[Any] = (
            select(audit_log)
            .where(_where(query))
            .order_by(*order)
            .offset(query.offset)
            .limit(query.limit)
        )
        return [_record(row) for row in self._db.execute(chosen).all()]

    def in_order(
        self, query: AuditQuery, *, after: Cursor | None, limit: int
    ) -> list[tuple[AuditRecord, Cursor]]:
        """Up to `limit` records of `query` by time, from the one after `after` on; each with
        its cursor (reading on from a cursor costs the same however far it is)."""
        chosen = select(audit_log).where(_where(query))
        if after is not None:
            moment, seq = after
            chosen = chosen.where(
                or_(
                    audit_log.c.timestamp > moment,
                    and_(audit_log.c.timestamp == moment, audit_log.c.seq > seq),
                )
            )
        chosen = chosen.order_by(audit_log.c.timestamp, audit_log.c.seq).limit(limit)
        return [
            (_record(row), (row.timestamp, int(row.seq))) for row in self._db.execute(chosen).all()
        ]

    def delete_before(self, cutoff: datetime, *, limit: int) -> int:
        """Delete up to `limit` of the oldest records written before `cutoff`; how many."""
        oldest = (
            select(audit_log.c.seq)
            .where(audit_log.c.timestamp < cutoff)
            .order_by(audit_log.c.timestamp)
            .limit(limit)
        )
        deleted = self._db.execute(delete(audit_log).where(audit_log.c.seq.in_(oldest)))
        return int(deleted.rowcount)
