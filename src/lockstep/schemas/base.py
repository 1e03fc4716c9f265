"""The base model of every wire schema and the small constrained types they share."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, StringConstraints
from pydantic.alias_generators import to_camel


class WireModel(BaseModel):
    """A Run:ai JSON object: camelCase aliases, strict types, unknown fields refused, numbers
    finite (see schemas/bounds.py for the other bounds every request is held to)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        strict=True,
        extra="forbid",
        frozen=True,
        allow_inf_nan=False,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON-ready form: camelCase, only the fields that were set."""
        return self.model_dump(mode="json", by_alias=True, exclude_unset=True)


class ResponseModel(BaseModel):
    """A response body: camelCase aliases, lenient on input (it is built by lockstep itself)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True)


QUANTITY_PATTERN = r"^([+]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
DNS_LABEL_PATTERN = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
_DNS_LABEL = re.compile(DNS_LABEL_PATTERN)


def _number_as_string(value: object) -> object:
    """Older clients send quantities and ids as JSON numbers; the wire form is a string."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return str(value)
    return value


Quantity = Annotated[
    str,
    BeforeValidator(_number_as_string),
    StringConstraints(min_length=1, pattern=QUANTITY_PATTERN),
]
"""A Kubernetes resource quantity such as `20M`, `1.5Gi` or `2`."""

StringId = Annotated[str, BeforeValidator(_number_as_string), StringConstraints(min_length=1)]
"""An id the document types as a string that clients also send as a number (projectId)."""

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
DnsLabel = Annotated[str, StringConstraints(min_length=1, pattern=DNS_LABEL_PATTERN)]


def is_dns_label(value: str) -> bool:
    """Whether `value` can be a Kubernetes object name and a host name (DNS-1123 label)."""
    return len(value) <= 63 and _DNS_LABEL.fullmatch(value) is not None
