"""Clients on the wire: the bodies that create a service account, an application, an access
key or a user application (`{"name"}`, checked by services/clients.py) and the one that
enables or disables a service account (`{"enabled"}`)."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from lockstep.schemas.base import WireModel


class ClientCreationRequest(WireModel):
    name: Annotated[str, StringConstraints(max_length=255)]


class ClientPatchRequest(WireModel):
    enabled: bool
