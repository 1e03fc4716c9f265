"""The token request and response of `POST /api/v1/token`."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from lockstep.schemas.base import ResponseModel


class GrantType(StrEnum):
    APP_TOKEN = "app_token"
    CLIENT_CREDENTIALS = "client_credentials"
    REFRESH_TOKEN = "refresh_token"
    EXCHANGE_TOKEN = "exchange_token"
    PASSWORD = "password"
    EXTERNAL_TOKEN_EXCHANGE = "external_token_exchange"


class TokenRequest(ResponseModel):
    """The credentials of a token request. Key casing varies between clients (`AppId`,
    `appID`, `clientId`, `clientID`), so keys are matched without regard to case."""

    grant_type: str | None = None
    client_id: str | None = None
    client_secret: str | None = None

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> TokenRequest:
        folded = {key.lower(): value for key, value in body.items()}

        def text(*keys: str) -> str | None:
            for key in keys:
                value = folded.get(key)
                if isinstance(value, str):
                    return value
            return None

        return cls(
            grant_type=text("granttype", "grant_type"),
            client_id=text("clientid", "appid", "client_id"),
            client_secret=text("clientsecret", "appsecret", "client_secret"),
        )


class TokenResponse(ResponseModel):
    access_token: str
    expires_in: int
