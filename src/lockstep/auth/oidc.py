"""The OpenID Connect relying party: lockstep's side of a sign-in through a provider.

Authlib's OAuth 2.0 parameters build the authorization request (code flow, PKCE with S256,
state and nonce) and the code's exchange at the provider's token endpoint, which lockstep
sends with httpx, authenticating with the client secret (HTTP Basic); joserfc checks the ID
token (signature against the provider's published keys, issuer, audience, expiry, nonce),
and authlib the discovery document; the claims are the ID token's, completed by the userinfo
endpoint's when the provider has one. The discovery document and keys are cached for a while;
an unknown key id fetches the keys once more (the provider rotated them). Every answer read
from a provider is bounded in size and time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx
import orjson
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.discovery import OpenIDProviderMetadata
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from lockstep.domain.errors import ProviderFailed
from lockstep.domain.single_sign_on import IdentityProvider

MAX_ANSWER_BYTES = 1024 * 1024
"""The largest answer read from a provider (discovery document, keys, tokens, userinfo)."""
TIMEOUT_SECONDS = 10.0
CACHE_SECONDS = 300.0
SIGNING_ALGORITHMS = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)
"""The ID token signatures accepted: a provider's own keys, never a shared secret or none."""
LEEWAY_SECONDS = 60
"""How far the provider's clock may be from lockstep's when its ID token's times are read."""


@dataclass(frozen=True, slots=True)
class Endpoints:
    """What a provider's discovery document says of where to send a person and what to ask."""

    issuer: str
    authorization: str
    token: str
    keys: str
    userinfo: str | None
    algorithms: tuple[str, ...]


class OidcClient:
    """One per API process; providers are the administrator's (`/api/v1/idps`)."""

    def __init__(
        self,
        *,
        timeout_seconds: float = TIMEOUT_SECONDS,
        cache_seconds: float = CACHE_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._timeout = timeout_seconds
        self._cache_seconds = cache_seconds
        self._monotonic = monotonic
        self._endpoints: dict[str, tuple[float, Endpoints]] = {}
        self._keys: dict[str, tuple[float, KeySet]] = {}

    async def authorization_url(
        self,
        provider: IdentityProvider,
        *,
        redirect_uri: str,
        state: str,
        nonce: str,
        code_verifier: str,
    ) -> str:
        """Where to send the person: the provider's authorization endpoint, asking for a code
        with this state, nonce and PKCE challenge."""
        endpoints = await self.endpoints(provider.discovery_url)
        url: str = prepare_grant_uri(
            endpoints.authorization,
            client_id=provider.client_id,
            response_type="code",
            redirect_uri=redirect_uri,
            scope=" ".join(provider.scopes),
            state=state,
            nonce=nonce,
            code_challenge=create_s256_code_challenge(code_verifier),
            code_challenge_method="S256",
        )
        return url

    async def claims(
        self,
        provider: IdentityProvider,
        *,
        redirect_uri: str,
        code: str,
        code_verifier: str,
        nonce: str,
    ) -> dict[str, object]:
        """The person's claims, once the code is exchanged and its ID token checked."""
        endpoints = await self.endpoints(provider.discovery_url)
        body: str = prepare_token_request(
            "authorization_code", redirect_uri=redirect_uri, code=code, code_verifier=code_verifier
        )
        token = await self._json(
            endpoints.token,
            method="POST",
            content=body.encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
            auth=(provider.client_id, provider.client_secret),
        )
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise ProviderFailed("the provider's token answer holds no ID token")
        claims = await self._checked_id_token(id_token, provider, endpoints, nonce)
        access_token = token.get("access_token")
        if endpoints.userinfo is not None and isinstance(access_token, str):
            more = await self._json(
                endpoints.userinfo, headers={"Authorization": f"Bearer {access_token}"}
            )
            if more.get("sub") != claims.get("sub"):
                raise ProviderFailed("the provider's userinfo names another subject")
            claims = {**more, **claims}
        return claims

    async def endpoints(self, discovery_url: str) -> Endpoints:
        cached = self._endpoints.get(discovery_url)
        if cached is not None and cached[0] > self._monotonic():
            return cached[1]
        document = await self._json(discovery_url)
        metadata = OpenIDProviderMetadata(document)
        try:
            metadata.validate()
        except ValueError as error:
            raise ProviderFailed(f"the provider's discovery document: {error}") from error
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(document.get(key), str):
                raise ProviderFailed(f"the provider's discovery document has no {key}")
        offered = document.get("id_token_signing_alg_values_supported") or ["RS256"]
        algorithms = tuple(a for a in offered if a in SIGNING_ALGORITHMS)
        if not algorithms:
            raise ProviderFailed(
                "the provider signs ID tokens with none of " + ", ".join(SIGNING_ALGORITHMS)
            )
        userinfo = document.get("userinfo_endpoint")
        endpoints = Endpoints(
            issuer=str(document["issuer"]),
            authorization=str(document["authorization_endpoint"]),
            token=str(document["token_endpoint"]),
            keys=str(document["jwks_uri"]),
            userinfo=userinfo if isinstance(userinfo, str) else None,
            algorithms=algorithms,
        )
        self._endpoints[discovery_url] = (self._monotonic() + self._cache_seconds, endpoints)
        return endpoints

    async def _checked_id_token(
        self, id_token: str, provider: IdentityProvider, endpoints: Endpoints, nonce: str
    ) -> dict[str, object]:
        keys = await self._key_set(endpoints.keys, fresh=False)
        try:
            decoded = jwt.decode(id_token, keys, algorithms=endpoints.algorithms)
        except JoseError:
            keys = await self._key_set(endpoints.keys, fresh=True)  # the keys may have rotated
            try:
                decoded = jwt.decode(id_token, keys, algorithms=endpoints.algorithms)
            except JoseError as error:
                raise ProviderFailed(f"the ID token's signature: {error}") from error
        registry = jwt.JWTClaimsRegistry(
            leeway=LEEWAY_SECONDS,
            iss={"essential": True, "value": endpoints.issuer},
            aud={"essential": True, "value": provider.client_id},
            sub={"essential": True},
            exp={"essential": True},
            nonce={"essential": True, "value": nonce},
        )
        try:
            registry.validate(decoded.claims)
        except JoseError as error:
            raise ProviderFailed(f"the ID token's claims: {error}") from error
        return dict(decoded.claims)

    async def _key_set(self, url: str, *, fresh: bool) -> KeySet:
        cached = self._keys.get(url)
        if not fresh and cached is not None and cached[0] > self._monotonic():
            return cached[1]
        document = await self._json(url)
        try:
            keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
        except (JoseError, ValueError, KeyError, TypeError) as error:
            raise ProviderFailed(f"the provider's keys: {error}") from error
        self._keys[url] = (self._monotonic() + self._cache_seconds, keys)
        return keys

    async def _json(
        self,
        url: str,
        *,
        method: str = "GET",
        headers: dict[str, str] | None = None,
        content: bytes | None = None,
        auth: tuple[str, str] | None = None,
    ) -> dict[str, Any]:
        """The JSON object `url` answers, at most MAX_ANSWER_BYTES, within the timeout."""
        try:
            async with (
                httpx.AsyncClient(timeout=self._timeout, auth=auth) as client,
                client.stream(method, url, headers=headers, content=content) as answer,
            ):
                status = answer.status_code
                body = bytearray()
                async for chunk in answer.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_ANSWER_BYTES:
                        raise ProviderFailed(f"{url} answered more than {MAX_ANSWER_BYTES} bytes")
        except httpx.HTTPError as error:
            raise ProviderFailed(f"{url} could not be read: {error}") from error
        try:
            document = orjson.loads(bytes(body))
        except orjson.JSONDecodeError as error:
            raise ProviderFailed(f"{url} answered {status}, not JSON") from error
        if status != 200:
            said = document.get("error") if isinstance(document, dict) else None
            raise ProviderFailed(f"{url} answered {status}" + (f": {said}" if said else ""))
        if not isinstance(document, dict):
            raise ProviderFailed(f"{url} did not answer a JSON object")
        return document
