"""Signing a person in through an OpenID Connect provider, in three steps:

1. `begin`: the console (or `lockstep login --sso`) sends the browser to
   `/sso/{alias}/sign-in`; lockstep keeps a state, a nonce and a PKCE verifier, and sends the
   browser on to the provider.
2. `finish`: the provider sends the browser back to `/sso/{alias}/callback` with a code;
   lockstep exchanges it (with its client secret and the verifier), checks the ID token, maps
   the claims to an email and groups, makes or updates the user, and sends the browser to
   where the sign-in began with a one-time code of its own (60 s, one use).
3. `exchange`: the console or the CLI trades that code at `POST /api/v1/token`
   (`grantType: exchange_token`, `code`, `redirectUri`) for the user's access and refresh
   tokens, as a password sign-in gives.

Everything under way is in the store (hashed states and codes, the verifier sealed), so any
API process serves any step. A browser must come back with the cookie set at step 1, so a
sign-in cannot be finished in another browser than the one that began it.
"""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ParamSpec, Protocol, TypeVar
from urllib.parse import urlencode, urlsplit, urlunsplit

from lockstep.auth.oidc import OidcClient
from lockstep.domain.clock import Clock
from lockstep.domain.errors import (
    InvalidRequest,
    NotFound,
    ProviderFailed,
    TooManyRequests,
    Unauthenticated,
)
from lockstep.domain.single_sign_on import (
    IdentityProvider,
    Person,
    Refused,
    person_of,
    return_uri_violation,
)
from lockstep.domain.users import User
from lockstep.services.users import MAX_USERS, SignedIn, UserService
from lockstep.store.database import Database
from lockstep.store.single_sign_on import PendingSignIn
from lockstep.store.users import UserRepository

P = ParamSpec("P")
T = TypeVar("T")

SIGN_IN_SECONDS = 600
"""How long a person has at their provider before the sign-in is forgotten."""
CODE_SECONDS = 60
"""How long the one-time code of a finished sign-in may be exchanged."""
MAX_UNDER_WAY = 10_000
"""The most sign-ins under way at once (beyond: 429 until some finish or expire)."""
MAX_RETURN_STATE_LENGTH = 1024


class StoreCalls(Protocol):
    """How a step reaches the store from the event loop (api/calls.py)."""

    async def store(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T: ...


@dataclass(frozen=True, slots=True)
class Begun:
    provider_url: str
    """Where the browser goes next."""
    state: str
    """What the browser must bring back (its cookie)."""


class SingleSignOn:
    def __init__(
        self,
        database: Database,
        *,
        clock: Clock,
        users: UserService,
        oidc: OidcClient,
        calls: StoreCalls,
    ) -> None:
        self._db = database
        self._clock = clock
        self._users = users
        self._oidc = oidc
        self._calls = calls

    async def begin(
        self, alias: str, *, callback_uri: str, return_uri: str, return_state: str
    ) -> Begun:
        violation = return_uri_violation(return_uri)
        if violation is not None:
            raise InvalidRequest.of("redirect_uri", violation)
        if len(return_state) > MAX_RETURN_STATE_LENGTH:
            raise InvalidRequest.of("state", f"at most {MAX_RETURN_STATE_LENGTH} characters")
        state = secrets.token_urlsafe(32)
        pending = PendingSignIn(
            alias=alias,
            code_verifier=secrets.token_urlsafe(64),
            nonce=secrets.token_urlsafe(24),
            return_uri=return_uri,
            return_state=return_state,
            expires_at=self._clock() + timedelta(seconds=SIGN_IN_SECONDS),
        )
        provider = await self._calls.store(self._begin, _digest(state), pending)
        try:
            url = await self._oidc.authorization_url(
                provider,
                redirect_uri=callback_uri,
                state=state,
                nonce=pending.nonce,
                code_verifier=pending.code_verifier,
            )
        except ProviderFailed:
            await self._calls.store(self._abandon, _digest(state))
            raise
        return Begun(url, state)

    async def finish(
        self,
        alias: str,
        *,
        callback_uri: str,
        state: str,
        browser_state: str | None,
        code: str | None,
        error: str | None,
    ) -> str:
        """Where to send the browser: back where the sign-in began, with a one-time code or
        an error (`access_denied`: the provider or lockstep refused the person;
        `temporarily_unavailable`: the provider could not be used)."""
        pending = await self._calls.store(self._pending, alias, _digest(state))
        if not secrets.compare_digest(browser_state or "", state):
            await self._calls.store(self._abandon, _digest(state))
            return _back(
                pending,
                error="access_denied",
                description="the sign-in was begun in another browser (or its cookie is gone)",
            )
        if error is not None or not code:
            await self._calls.store(self._abandon, _digest(state))
            return _back(
                pending,
                error="access_denied",
                description=f"the identity provider answered {error or 'no code'}",
            )
        provider = await self._calls.store(self._provider, alias)
        try:
            claims = await self._oidc.claims(
                provider,
                redirect_uri=callback_uri,
                code=code,
                code_verifier=pending.code_verifier,
                nonce=pending.nonce,
            )
            person = person_of(claims, provider)
        except (ProviderFailed, Refused) as refusal:
            await self._calls.store(self._abandon, _digest(state))
            reason = "temporarily_unavailable" if isinstance(refusal, ProviderFailed) else None
            return _back(pending, error=reason or "access_denied", description=str(refusal))
        one_time = secrets.token_urlsafe(32)
        try:
            await self._calls.store(self._finish, alias, _digest(state), person, _digest(one_time))
        except Refused as refusal:
            await self._calls.store(self._abandon, _digest(state))
            return _back(pending, error="access_denied", description=str(refusal))
        return _back(pending, code=one_time)

    def exchange(self, code: str, redirect_uri: str) -> SignedIn:
        """The tokens of the finished sign-in of this one-time code (once)."""
        with self._db.write() as unit:  # a code is spent by any try, a wrong one included
            finished = unit.single_sign_on.redeem(_digest(code), self._clock())
        if finished is None or finished.return_uri != redirect_uri:
            raise Unauthenticated(
                "the code is unknown, expired or already used, or was given for another redirectUri"
            )
        with self._db.read() as unit:
            user = unit.users.get(finished.user_id)
        if user is None:
            raise Unauthenticated("the code's user no longer exists")
        return self._users.tokens_for(user)

    # Store steps.

    def _begin(self, state_hash: str, pending: PendingSignIn) -> IdentityProvider:
        with self._db.write() as unit:
            provider = unit.single_sign_on.provider(pending.alias)
            if provider is None:
                raise NotFound(f"no identity provider has the alias {pending.alias!r}")
            unit.single_sign_on.forget_expired(self._clock())
            if unit.single_sign_on.count_under_way() >= MAX_UNDER_WAY:
                raise TooManyRequests(
                    f"{MAX_UNDER_WAY} sign-ins are under way; try again in a minute",
                    retry_after_seconds=60,
                )
            unit.single_sign_on.begin(state_hash, pending)
        return provider

    def _pending(self, alias: str, state_hash: str) -> PendingSignIn:
        with self._db.read() as unit:
            pending = unit.single_sign_on.pending(state_hash, self._clock())
        if pending is None or pending.alias != alias:
            raise InvalidRequest.of(
                "state",
                "names no sign-in under way: it expired, was finished, or was never begun "
                "here; sign in again",
            )
        return pending

    def _provider(self, alias: str) -> IdentityProvider:
        with self._db.read() as unit:
            provider = unit.single_sign_on.provider(alias)
        if provider is None:
            raise NotFound(f"no identity provider has the alias {alias!r}")
        return provider

    def _abandon(self, state_hash: str) -> None:
        with self._db.write() as unit:
            unit.single_sign_on.abandon(state_hash)

    def _finish(self, alias: str, state_hash: str, person: Person, code_hash: str) -> None:
        now = self._clock()
        with self._db.write() as unit:
            user = unit.users.named(person.email) or _new_user(unit.users, person, alias, now)
            unit.users.set_groups(user.id, list(person.groups))
            unit.users.signed_in(user.id, now=now)
            unit.single_sign_on.finish(
                state_hash,
                user_id=user.id,
                code_hash=code_hash,
                expires_at=now + timedelta(seconds=CODE_SECONDS),
            )


def _new_user(users: UserRepository, person: Person, alias: str, now: datetime) -> User:
    if users.count() >= MAX_USERS:
        raise Refused(f"lockstep holds at most {MAX_USERS} users")
    return users.add(
        user_id=str(uuid.uuid4()),
        username=person.email,
        password_hash="",
        created_by=f"identity provider {alias}",
        now=now,
        is_local=False,
    )


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _back(
    pending: PendingSignIn,
    *,
    code: str | None = None,
    error: str | None = None,
    description: str | None = None,
) -> str:
    """The return URI with the outcome in its query, as an OAuth redirect carries it."""
    query: dict[str, str] = {}
    if code is not None:
        query["code"] = code
    if error is not None:
        query["error"] = error
        query["error_description"] = description or error
    if pending.return_state:
        query["state"] = pending.return_state
    parts = urlsplit(pending.return_uri)
    joined = "&".join(part for part in (parts.query, urlencode(query)) if part)
    return urlunsplit(parts._replace(query=joined))
