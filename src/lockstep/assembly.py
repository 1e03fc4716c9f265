"""Builds lockstep from its settings: the store (migrated), the token authority and the
services. `create_app` adds the runtime and the reconciler; `lockstep admin` uses this alone."""

from __future__ import annotations

import json
from dataclasses import dataclass

from lockstep.auth.sealing import Sealer
from lockstep.auth.tokens import TokenAuthority, load_or_create_key, write_private_file
from lockstep.config import Settings
from lockstep.domain.clock import Clock, utc_now
from lockstep.services.identity import BootstrapResult, IdentityService
from lockstep.services.organization import OrganizationService
from lockstep.services.secrets import SecretService
from lockstep.services.users import UserService
from lockstep.store.database import Database


@dataclass(slots=True)
class Core:
    settings: Settings
    database: Database
    tokens: TokenAuthority
    identity: IdentityService
    users: UserService
    organization: OrganizationService
    secrets: SecretService
    clock: Clock

    def close(self) -> None:
        self.database.dispose()


def open_core(settings: Settings, *, clock: Clock = utc_now, group_commit: bool = False) -> Core:
    """Open (and migrate) the store and build the services that need no runtime.
    `group_commit` is for the API server, which waits for durability before acknowledging."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    database = Database(
        settings.resolved_database_url,
        group_commit=group_commit,
        sealer=Sealer.from_file(settings.sealing_key_path),
    )
    database.migrate()
    tokens = TokenAuthority(
        load_or_create_key(settings.signing_key_path),
        ttl_seconds=settings.token_ttl_seconds,
        user_ttl_seconds=settings.user_token_ttl_seconds,
        refresh_ttl_seconds=settings.refresh_token_ttl_seconds,
    )
    return Core(
        settings=settings,
        database=database,
        tokens=tokens,
        identity=IdentityService(database, clock=clock, tokens=tokens),
        users=UserService(database, clock=clock, tokens=tokens),
        organization=OrganizationService(database, clock=clock),
        secrets=SecretService(database, clock=clock),
        clock=clock,
    )


def bootstrap(core: Core) -> BootstrapResult | None:
    """First start of an empty store: create the initial organization and administrator.
    A generated secret is written once to a file only its owner can read."""
    settings = core.settings
    secret = settings.bootstrap_client_secret
    result = core.identity.bootstrap(
        client_id=settings.bootstrap_client_id,
        client_secret=None if secret is None else secret.get_secret_value(),
    )
    if result is not None and result.client_secret is not None:
        content = {"clientId": result.client_id, "clientSecret": result.client_secret}
        write_private_file(
            settings.credentials_path, json.dumps(content, indent=2).encode() + b"\n"
        )
    return result
