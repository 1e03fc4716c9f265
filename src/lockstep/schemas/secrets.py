"""Secrets and config maps on the wire (a lockstep extension: the Run:ai document has no such
endpoints): the bodies of POST and PUT. Responses are built in api/views.py, and never carry
a secret's values. The naming rules are checked by the service (domain/secrets.py)."""

from __future__ import annotations

from lockstep.schemas.base import WireModel


class SecretCreationRequest(WireModel):
    """`POST .../secrets` and `POST .../configmaps`."""

    name: str
    data: dict[str, str]


class SecretReplacementRequest(WireModel):
    """`PUT .../secrets/{name}` and `PUT .../configmaps/{name}`: `data` replaces every key;
    `name`, when given, must be the one in the path."""

    name: str | None = None
    data: dict[str, str]
