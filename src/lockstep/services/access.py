"""The caller's access rules, loaded inside the caller's transaction."""

from __future__ import annotations

from lockstep.auth.access import Access
from lockstep.auth.tokens import Principal
from lockstep.domain.identity import SubjectType
from lockstep.store.database import UnitOfWork


def access_of(unit: UnitOfWork, caller: Principal) -> Access:
    if caller.subject_type is SubjectType.OPERATOR:
        return Access.of_operator()
    return Access(unit.identity.rules_of(caller.subject_type, caller.subject_id))
