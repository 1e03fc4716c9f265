"""Access and refresh tokens: HS256-signed JWTs carrying the subject, its name and `exp`.

A user's tokens also carry the user's id (`uid`) and token generation (`gen`); a token obtained
with a client id and secret (a service account's, or a user's access key) carries the client id
(`cid`) and the client's generation (`cgen`). A token whose generations are no longer those of
its user and client is refused (services/token_standing.py).
A refresh token (`use: refresh`) is good only for the `refresh_token` grant, never as a bearer
token, and an access token never for that grant.

Clients of the Run:ai API read `exp` by decoding the payload with the standard (not URL-safe)
base64 alphabet, which drops `-` and `_`. Every token lockstep issues therefore has a payload
whose URL-safe encoding contains neither, so such clients decode it correctly.

Why escaping four characters is enough: in pure-ASCII JSON, a base64 digit of value 62 or 63
(`-`, `_`) can only come from the low six bits of a byte in the last position of a 3-byte
group, and only the bytes `>` `?` `~` and DEL have those low bits. `ClientSafeJson` writes them
as `\u003e` and so on, and keeps everything else ASCII, so no payload can produce either digit.
"""

from __future__ import annotations

import json
import os
import secrets
import time
from dataclasses import dataclass, replace
from pathlib import Path

import jwt

from lockstep.domain.errors import Unauthenticated
from lockstep.domain.identity import SubjectType

ISSUER = "lockstep"
_REMEMBERED_TOKENS = 4096
ALGORITHM = "HS256"
_UNSAFE_BYTES = str.maketrans({">": "\\u003e", "?": "\\u003f", "~": "\\u007e", "\x7f": "\\u007f"})


class ClientSafeJson(json.JSONEncoder):
    """ASCII JSON with the four bytes that could encode to `-` or `_` written as escapes."""

    def encode(self, o: object) -> str:
        return super().encode(o).translate(_UNSAFE_BYTES)


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the subject a valid token names."""

    subject_type: SubjectType
    subject_id: str
    name: str
    user_id: str | None = None
    """A user's id (`subject_id` is the email that access rules name)."""
    generation: int = 0
    """A user's token generation when the token was issued."""
    client_id: str | None = None
    """The client the token was obtained with: a service account (the subject itself) or
    a user's access key."""
    client_generation: int = 0
    """The client's token generation when the token was issued."""


OPERATOR = Principal(SubjectType.OPERATOR, "operator", "lockstep-admin")
"""The caller of `lockstep admin`: trusted, since it holds the store itself."""


@dataclass(frozen=True, slots=True)
class IssuedToken:
    token: str
    expires_in: int


REFRESH = "refresh"
"""The `use` claim of a refresh token."""


class TokenAuthority:
    """Issues and verifies access tokens with one signing key."""

    def __init__(
        self,
        key: bytes,
        *,
        ttl_seconds: int,
        user_ttl_seconds: int = 900,
        refresh_ttl_seconds: int = 7 * 86400,
    ) -> None:
        """`ttl_seconds`: an application's access tokens; `user_ttl_seconds`: a user's, kept
        short since they are renewed with the refresh token of `refresh_ttl_seconds`."""
        if len(key) < 32:
            raise ValueError("the signing key must be at least 32 bytes")
        self._key = key
        self.ttl_seconds = ttl_seconds
        self.user_ttl_seconds = user_ttl_seconds
        self.refresh_ttl_seconds = refresh_ttl_seconds
        self._verified: dict[str, tuple[Principal, int]] = {}

    def issue(self, principal: Principal, *, now: float | None = None) -> IssuedToken:
        """An access token for `principal`."""
        user = principal.subject_type is SubjectType.USER
        ttl = self.user_ttl_seconds if user else self.ttl_seconds
        claims = self._claims(principal, ttl, now)
        return IssuedToken(token=self._encode_client_safe(claims), expires_in=ttl)

    def issue_refresh(self, principal: Principal, *, now: float | None = None) -> IssuedToken:
        """A refresh token for a user."""
        if principal.subject_type is not SubjectType.USER:
            raise ValueError("only users are given refresh tokens")
        claims = {**self._claims(principal, self.refresh_ttl_seconds, now), "use": REFRESH}
        token = self._encode_client_safe(claims)
        return IssuedToken(token=token, expires_in=self.refresh_ttl_seconds)

    def _claims(self, principal: Principal, ttl: int, now: float | None) -> dict[str, object]:
        issued_at = int(time.time() if now is None else now)
        claims: dict[str, object] = {
            "iss": ISSUER,
            "sub": principal.subject_id,
            "typ": principal.subject_type.value,
            "name": principal.name,
            "iat": issued_at,
            "exp": issued_at + ttl,
        }
        if principal.user_id is not None:
            claims.update(uid=principal.user_id, gen=principal.generation)
        if principal.client_id is not None:
            claims.update(cid=principal.client_id, cgen=principal.client_generation)
        return claims

    def _encode_client_safe(self, claims: dict[str, object]) -> str:
        token = jwt.encode(
            {**claims, "jti": secrets.token_hex(8)},
            self._key,
            algorithm=ALGORITHM,
            json_encoder=ClientSafeJson,
        )
        payload = token.split(".")[1]
        if "-" in payload or "_" in payload:
            raise RuntimeError("a token payload is not safe for standard base64 decoders")
        return token

    def verify(self, token: str) -> Principal:
        """The principal of a valid token; `Unauthenticated` saying why otherwise.
        Tokens already verified are remembered until they expire: a client sends the same
        token with every request, and the signature cannot have changed."""
        known = self._verified.get(token)
        if known is not None and known[1] > time.time():
            return known[0]
        principal, expires = self._verify(token, refresh=False)
        if len(self._verified) >= _REMEMBERED_TOKENS:
            self._verified.clear()
        self._verified[token] = (principal, expires)
        return principal

    def verify_refresh(self, token: str) -> Principal:
        """The user a valid refresh token names; `Unauthenticated` saying why otherwise."""
        return self._verify(token, refresh=True)[0]

    def _verify(self, token: str, *, refresh: bool) -> tuple[Principal, int]:
        what = "refresh token" if refresh else "access token"
        try:
            claims = jwt.decode(
                token,
                self._key,
                algorithms=[ALGORITHM],
                issuer=ISSUER,
                options={"require": ["exp", "iat", "sub", "iss"]},
            )
        except jwt.ExpiredSignatureError as error:
            raise Unauthenticated(f"the {what} has expired") from error
        except jwt.InvalidSignatureError as error:
            raise Unauthenticated(f"the {what}'s signature is not valid") from error
        except jwt.InvalidTokenError as error:
            raise Unauthenticated(f"the {what} is not valid: {error}") from error
        if (claims.get("use") == REFRESH) is not refresh:
            raise Unauthenticated(
                "a refresh token is good only for the refresh_token grant"
                if not refresh
                else "the refresh token is not valid: it is an access token"
            )
        try:
            subject_type = SubjectType(claims.get("typ", SubjectType.APP.value))
        except ValueError as error:
            raise Unauthenticated("the access token names an unknown kind of subject") from error
        if subject_type is SubjectType.OPERATOR:
            raise Unauthenticated("the access token names an unknown kind of subject")
        principal = Principal(
            subject_type, str(claims["sub"]), str(claims.get("name", claims["sub"]))
        )
        if subject_type is SubjectType.USER:
            user_id, generation = claims.get("uid"), claims.get("gen")
            if not isinstance(user_id, str) or not isinstance(generation, int):
                raise Unauthenticated(f"the {what} does not name a user")
            principal = replace(principal, user_id=user_id, generation=generation)
        client_id, client_generation = claims.get("cid"), claims.get("cgen", 0)
        if client_id is not None:
            if not isinstance(client_id, str) or not isinstance(client_generation, int):
                raise Unauthenticated(f"the {what} names its client wrongly")
            principal = replace(principal, client_id=client_id, client_generation=client_generation)
        return principal, int(claims["exp"])


def load_or_create_key(path: Path) -> bytes:
    """The signing key kept in the data dir, created (readable by its owner only) on first use."""
    if path.exists():
        return path.read_bytes()
    key = secrets.token_bytes(64)
    write_private_file(path, key)
    return key


def write_private_file(path: Path, content: bytes) -> None:
    """Create `path` readable and writable by its owner only; never overwrite an existing file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
