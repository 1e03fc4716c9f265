"""The checks of a token request: a grant type lockstep supports and the credentials it takes
(an application's id and secret, a user's name and password, a refresh token, or the one-time
code of a sign-in through an identity provider with its redirect URI), each one
string within its bound, under any spelling of their keys (see schemas/tokens.py)."""

from __future__ import annotations

from dataclasses import dataclass

from lockstep.domain.errors import InvalidRequest
from lockstep.schemas.tokens import Given, GrantType, TokenRequest

SUPPORTED_GRANTS = (
    GrantType.APP_TOKEN.value,
    GrantType.CLIENT_CREDENTIALS.value,
    GrantType.PASSWORD.value,
    GrantType.REFRESH_TOKEN.value,
    GrantType.EXCHANGE_TOKEN.value,
)
SUPPORTED = ", ".join(SUPPORTED_GRANTS)
MAX_CREDENTIAL_LENGTH = 1024
"""The longest client id or secret, user name or password accepted (characters)."""
MAX_REFRESH_TOKEN_LENGTH = 4096
"""The longest refresh token accepted (characters); lockstep's are about 400."""

KEY_NAMES = {
    GrantType.APP_TOKEN.value: ("AppId", "AppSecret"),
    GrantType.CLIENT_CREDENTIALS.value: ("clientId", "clientSecret"),
}


@dataclass(frozen=True, slots=True)
class Credentials:
    """An application's id and secret."""

    grant_type: str
    client_id: str
    client_secret: str


@dataclass(frozen=True, slots=True)
class PasswordCredentials:
    """A user's name (email) and password."""

    username: str
    password: str


@dataclass(frozen=True, slots=True)
class RefreshCredentials:
    refresh_token: str


@dataclass(frozen=True, slots=True)
class SignInCode:
    """The one-time code a sign-in through an identity provider ended with, and the redirect
    URI it was given to."""

    code: str
    redirect_uri: str


def checked(
    request: TokenRequest,
) -> Credentials | PasswordCredentials | RefreshCredentials | SignInCode:
    """The request's credentials, or InvalidRequest naming the key and the rule."""
    grant = _one(request.grant_type, "grantType", f"required; lockstep supports {SUPPORTED}")
    if grant not in SUPPORTED_GRANTS:
        known = [kind.value for kind in GrantType]
        rule = (
            f"{grant!r} is not supported; lockstep supports {SUPPORTED}"
            if grant in known
            else f"{grant!r} is not a grant type (one of {', '.join(known)}); "
            f"lockstep supports {SUPPORTED}"
        )
        raise InvalidRequest.of("grantType", rule)
    if grant == GrantType.PASSWORD.value:
        required = "required for the password grant"
        return PasswordCredentials(
            username=_one(request.username, "username", required),
            password=_one(request.password, "password", required),
        )
    if grant == GrantType.REFRESH_TOKEN.value:
        token = _one(
            request.refresh_token,
            "refreshToken",
            "required for the refresh_token grant",
            longest=MAX_REFRESH_TOKEN_LENGTH,
        )
        return RefreshCredentials(token)
    if grant == GrantType.EXCHANGE_TOKEN.value:
        required = "required for the exchange_token grant"
        return SignInCode(
            code=_one(request.code, "code", required),
            redirect_uri=_one(request.redirect_uri, "redirectUri", required),
        )
    id_key, secret_key = KEY_NAMES[grant]
    client_id = _one(request.client_id, id_key, f"required for the {grant} grant")
    client_secret = _one(request.client_secret, secret_key, f"required for the {grant} grant")
    return Credentials(grant, client_id, client_secret)


def _one(given: Given, name: str, missing: str, *, longest: int = MAX_CREDENTIAL_LENGTH) -> str:
    """The one string value of a field given under one or more spellings of its key."""
    for key, value in given.values:
        if not isinstance(value, str):
            raise InvalidRequest.of(key, "must be a string")
        if len(value) > longest:
            raise InvalidRequest.of(key, f"at most {longest} characters")
    values = {str(value) for _, value in given.values if value}
    if not values:
        raise InvalidRequest.of(name, missing)
    if len(values) > 1:
        keys = " and ".join(key for key, _ in given.values)
        raise InvalidRequest.of(name, f"given as {keys} with different values; give it once")
    return values.pop()
