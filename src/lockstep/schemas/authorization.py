"""Access rules on the wire: the body of `POST /api/v1/authorization/access-rules` (the
contract's `AccessRuleCreationFields`). Responses are built in api/views.py."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from lockstep.schemas.base import StringId, WireModel
from lockstep.schemas.bounds import INT32_MAX

SubjectId = Annotated[str, StringConstraints(min_length=1, max_length=255)]


class AccessRuleCreationRequest(WireModel):
    subject_id: SubjectId
    subject_type: Literal["user", "app", "service-account", "group"]
    role_id: Annotated[int, Field(ge=0, le=INT32_MAX)]
    scope_id: Annotated[StringId, StringConstraints(max_length=64)]
    scope_type: Literal["system", "tenant", "cluster", "department", "project"]
    cluster_id: Annotated[str, StringConstraints(max_length=64)] | None = None
