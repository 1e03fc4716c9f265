"""The error body every failure uses, and the 202 acknowledgement."""

from __future__ import annotations

from lockstep.schemas.base import ResponseModel


class ErrorBody(ResponseModel):
    code: int
    message: str
    details: str | None = None


class Accepted(ResponseModel):
    code: int = 202
    message: str = "Request has been accepted."
