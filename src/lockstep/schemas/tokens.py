"""The token request and response of `POST /api/v1/token`.

Clients spell the credentials' keys in several ways (`AppId`/`AppSecret`, `appId`, `appID`,
`clientId`/`clientSecret`, `clientID`, `client_id`), so keys are matched without regard to case
and every spelling found is kept: the identity service checks the values (types, bounds, two
spellings that disagree) and names the key as the client spelled it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from lockstep.schemas.base import ResponseModel


class GrantType(StrEnum):
    """The contract's `TokenRequestGrantTypeEnum`."""

    APP_TOKEN = "app_token"
    CLIENT_CREDENTIALS = "client_credentials"
    REFRESH_TOKEN = "refresh_token"
    EXCHANGE_TOKEN = "exchange_token"
    PASSWORD = "password"
    EXTERNAL_TOKEN_EXCHANGE = "external_token_exchange"


GRANT_KEYS = ("granttype", "grant_type")
ID_KEYS = ("appid", "clientid", "client_id")
SECRET_KEYS = ("appsecret", "clientsecret", "client_secret")
USERNAME_KEYS = ("username",)
PASSWORD_KEYS = ("password",)
REFRESH_KEYS = ("refreshtoken", "refresh_token")
CODE_KEYS = ("code",)
REDIRECT_URI_KEYS = ("redirecturi", "redirect_uri")


@dataclass(frozen=True, slots=True)
class Given:
    """Each value a request gives for one field, with the key it was given under."""

    values: tuple[tuple[str, Any], ...]

    @classmethod
    def of(cls, body: dict[str, Any], folded_keys: tuple[str, ...]) -> Given:
        return cls(tuple((key, value) for key, value in body.items() if key.lower() in folded_keys))


@dataclass(frozen=True, slots=True)
class TokenRequest:
    """The grant type and credentials of a token request, as given."""

    grant_type: Given
    client_id: Given
    client_secret: Given
    username: Given
    password: Given
    refresh_token: Given
    code: Given
    redirect_uri: Given

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> TokenRequest:
        return cls(
            grant_type=Given.of(body, GRANT_KEYS),
            client_id=Given.of(body, ID_KEYS),
            client_secret=Given.of(body, SECRET_KEYS),
            username=Given.of(body, USERNAME_KEYS),
            password=Given.of(body, PASSWORD_KEYS),
            refresh_token=Given.of(body, REFRESH_KEYS),
            code=Given.of(body, CODE_KEYS),
            redirect_uri=Given.of(body, REDIRECT_URI_KEYS),
        )


class TokenResponse(ResponseModel):
    access_token: str
    expires_in: int
    refresh_token: str | None = None
