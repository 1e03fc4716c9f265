"""Users on the wire: the bodies of `POST /api/v1/users` and `POST /api/v1/me/password`.
Responses are built in api/views.py; no response carries a password's hash, and a password
only once, when lockstep made it."""

from __future__ import annotations

from typing import Annotated

from pydantic import StringConstraints

from lockstep.schemas.base import WireModel
from lockstep.schemas.bounds import MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH

Password = Annotated[str, StringConstraints(max_length=MAX_PASSWORD_LENGTH)]


class UserCreationRequest(WireModel):
    """The contract's `UserCreationRequest1`. lockstep sends no email: `notify` is accepted
    and does nothing, and the one-time password is always in the answer."""

    email: Annotated[str, StringConstraints(max_length=MAX_EMAIL_LENGTH)]
    reset_password: bool | None = None
    notify: bool | None = None


class UserChangePasswordRequest(WireModel):
    """The contract's `UserChangePasswordRequest`."""

    current_password: Password
    new_password: Password
