"""The identity providers people sign in with (`/api/v1/idps`): create, list, read, replace,
delete and their mappers, for whoever may manage identity providers (a System administrator).
A provider's client secret is sealed in the store and never shown again."""

from __future__ import annotations

from dataclasses import dataclass, replace

from lockstep.auth.access import Action, Resource, Scope
from lockstep.auth.tokens import Principal
from lockstep.domain.clock import Clock
from lockstep.domain.errors import Conflict, NotFound
from lockstep.domain.single_sign_on import (
    MAX_PROVIDERS,
    IdentityProvider,
    MandatoryClaim,
    Mappers,
)
from lockstep.services.access import access_of
from lockstep.store.database import Database, UnitOfWork

_TENANT = Scope()


@dataclass(frozen=True, slots=True)
class ProviderSettings:
    """What an administrator gives of a provider; `client_secret` None keeps the stored one."""

    alias: str
    discovery_url: str
    client_id: str
    client_secret: str | None
    scopes: tuple[str, ...]
    mandatory_claim: MandatoryClaim | None
    mappers: Mappers


class IdentityProviderService:
    def __init__(self, database: Database, *, clock: Clock) -> None:
        self._db = database
        self._clock = clock

    def create(self, caller: Principal, given: ProviderSettings) -> IdentityProvider:
        if given.client_secret is None:
            raise AssertionError("a new provider's secret is always given")
        now = self._clock()
        provider = IdentityProvider(
            alias=given.alias,
            discovery_url=given.discovery_url,
            client_id=given.client_id,
            client_secret=given.client_secret,
            scopes=given.scopes,
            mandatory_claim=given.mandatory_claim,
            mappers=given.mappers,
            created_at=now,
            updated_at=now,
        )
        with self._db.write() as unit:
            _check(unit, caller, Action.CREATE)
            if unit.single_sign_on.count_providers() >= MAX_PROVIDERS:
                raise Conflict(
                    f"lockstep holds at most {MAX_PROVIDERS} identity providers; delete one first"
                )
            unit.single_sign_on.add_provider(provider)
        return provider

    def aliases(self) -> list[str]:
        """The providers anyone may sign in with, by alias (what the sign-in page shows)."""
        with self._db.read() as unit:
            return [p.alias for p in unit.single_sign_on.providers()]

    def providers(self, caller: Principal) -> list[IdentityProvider]:
        with self._db.read() as unit:
            _check(unit, caller, Action.READ)
            return unit.single_sign_on.providers()

    def provider(self, caller: Principal, alias: str) -> IdentityProvider:
        with self._db.read() as unit:
            _check(unit, caller, Action.READ)
            return _found(unit, alias)

    def replace(self, caller: Principal, given: ProviderSettings) -> IdentityProvider:
        with self._db.write() as unit:
            _check(unit, caller, Action.UPDATE)
            stored = _found(unit, given.alias)
            provider = replace(
                stored,
                discovery_url=given.discovery_url,
                client_id=given.client_id,
                client_secret=given.client_secret or stored.client_secret,
                scopes=given.scopes,
                mandatory_claim=given.mandatory_claim,
                mappers=given.mappers,
                updated_at=self._clock(),
            )
            unit.single_sign_on.replace_provider(provider)
        return provider

    def set_mappers(self, caller: Principal, alias: str, mappers: Mappers) -> None:
        with self._db.write() as unit:
            _check(unit, caller, Action.UPDATE)
            stored = _found(unit, alias)
            unit.single_sign_on.replace_provider(
                replace(stored, mappers=mappers, updated_at=self._clock())
            )

    def delete(self, caller: Principal, alias: str) -> None:
        """Delete the provider and the sign-ins through it under way. The people who signed
        in with it stay users, with their access rules; they sign in again once a provider
        names them."""
        with self._db.write() as unit:
            _check(unit, caller, Action.DELETE)
            if not unit.single_sign_on.delete_provider(alias):
                raise NotFound(f"no identity provider has the alias {alias!r}")


def _check(unit: UnitOfWork, caller: Principal, action: Action) -> None:
    access_of(unit, caller).check(action, Resource.IDENTITY_PROVIDERS, _TENANT)


def _found(unit: UnitOfWork, alias: str) -> IdentityProvider:
    provider = unit.single_sign_on.provider(alias)
    if provider is None:
        raise NotFound(f"no identity provider has the alias {alias!r}")
    return provider
