"""The single sign-on repository: OpenID Connect providers (their client secrets sealed) and
the sign-ins through them under way, from the redirect to the provider to the one-time code
that ends them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import Connection, delete, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from lockstep.domain.errors import Conflict
from lockstep.domain.single_sign_on import IdentityProvider, MandatoryClaim, Mappers
from lockstep.store.secrets import Sealing, SealingMissing
from lockstep.store.tables import identity_providers, sso_sign_ins


@dataclass(frozen=True, slots=True)
class PendingSignIn:
    """A sign-in sent to its provider: what the provider's answer is checked with, and where
    the finished sign-in goes."""

    alias: str
    code_verifier: str
    nonce: str
    return_uri: str
    return_state: str
    expires_at: datetime


@dataclass(frozen=True, slots=True)
class FinishedSignIn:
    """A sign-in the provider vouched for, waiting for its one-time code to be exchanged."""

    user_id: str
    return_uri: str
    expires_at: datetime


class SingleSignOnRepository:
    def __init__(self, connection: Connection, sealer: Sealing | None) -> None:
        self._db = connection
        self._sealer_or_none = sealer

    @property
    def _sealer(self) -> Sealing:
        if self._sealer_or_none is None:
            raise SealingMissing("this store was opened without a sealer: no client secret")
        return self._sealer_or_none

    # Providers.

    def add_provider(self, provider: IdentityProvider) -> None:
        nested = self._db.begin_nested()
        try:
            self._db.execute(insert(identity_providers), self._row(provider))
        except IntegrityError as error:
            nested.rollback()
            raise Conflict(f"an identity provider {provider.alias!r} already exists") from error
        nested.commit()

    def replace_provider(self, provider: IdentityProvider) -> bool:
        row = self._row(provider)
        del row["created_at"]
        done = self._db.execute(
            update(identity_providers)
            .where(identity_providers.c.alias == provider.alias)
            .values(row)
        )
        return done.rowcount > 0

    def provider(self, alias: str) -> IdentityProvider | None:
        row = self._db.execute(
            select(identity_providers).where(identity_providers.c.alias == alias)
        ).first()
        return None if row is None else self._provider(row)

    def providers(self) -> list[IdentityProvider]:
        rows = self._db.execute(select(identity_providers).order_by(identity_providers.c.alias))
        return [self._provider(row) for row in rows]

    def count_providers(self) -> int:
        return int(
            self._db.execute(select(func.count()).select_from(identity_providers)).scalar_one()
        )

    def delete_provider(self, alias: str) -> bool:
        self._db.execute(delete(sso_sign_ins).where(sso_sign_ins.c.alias == alias))
        done = self._db.execute(
            delete(identity_providers).where(identity_providers.c.alias == alias)
        )
        return done.rowcount > 0

    def _row(self, provider: IdentityProvider) -> dict[str, Any]:
        mandatory = provider.mandatory_claim
        mappers = provider.mappers
        return {
            "alias": provider.alias,
            "discovery_url": provider.discovery_url,
            "client_id": provider.client_id,
            "client_secret": self._sealer.seal(provider.client_secret.encode()),
            "scopes": orjson.dumps(list(provider.scopes)).decode(),
            "mandatory_claim": None if mandatory is None else _json(mandatory),
            "mappers": orjson.dumps(
                {
                    "email": mappers.email,
                    "groups": mappers.groups,
                    "uid": mappers.uid,
                    "gid": mappers.gid,
                    "supplementaryGroups": mappers.supplementary_groups,
                }
            ).decode(),
            "created_at": provider.created_at,
            "updated_at": provider.updated_at,
        }

    def _provider(self, row: Any) -> IdentityProvider:
        mandatory = None if row.mandatory_claim is None else orjson.loads(row.mandatory_claim)
        mappers = orjson.loads(row.mappers)
        return IdentityProvider(
            alias=row.alias,
            discovery_url=row.discovery_url,
            client_id=row.client_id,
            client_secret=self._sealer.open(row.client_secret).decode(),
            scopes=tuple(orjson.loads(row.scopes)),
            mandatory_claim=None
            if mandatory is None
            else MandatoryClaim(mandatory["claim"], tuple(mandatory["values"])),
            mappers=Mappers(
                email=mappers["email"],
                groups=mappers["groups"],
                uid=mappers["uid"],
                gid=mappers["gid"],
                supplementary_groups=mappers["supplementaryGroups"],
            ),
            created_at=row.created_at,
            updated_at=row.updated_at,
        )

    # Sign-ins under way.

    def begin(self, state_hash: str, pending: PendingSignIn) -> None:
        self._db.execute(
            insert(sso_sign_ins),
            {
                "state_hash": state_hash,
                "alias": pending.alias,
                "code_verifier": self._sealer.seal(pending.code_verifier.encode()),
                "nonce": pending.nonce,
                "return_uri": pending.return_uri,
                "return_state": pending.return_state,
                "expires_at": pending.expires_at,
            },
        )

    def forget_expired(self, now: datetime) -> None:
        self._db.execute(delete(sso_sign_ins).where(sso_sign_ins.c.expires_at <= now))

    def count_under_way(self) -> int:
        return int(self._db.execute(select(func.count()).select_from(sso_sign_ins)).scalar_one())

    def pending(self, state_hash: str, now: datetime) -> PendingSignIn | None:
        """The sign-in sent to its provider under this state, not yet answered or expired."""
        row = self._db.execute(
            select(sso_sign_ins).where(
                sso_sign_ins.c.state_hash == state_hash,
                sso_sign_ins.c.code_hash.is_(None),
                sso_sign_ins.c.expires_at > now,
            )
        ).first()
        if row is None:
            return None
        return PendingSignIn(
            alias=row.alias,
            code_verifier=self._sealer.open(row.code_verifier).decode(),
            nonce=row.nonce,
            return_uri=row.return_uri,
            return_state=row.return_state,
            expires_at=row.expires_at,
        )

    def finish(
        self, state_hash: str, *, user_id: str, code_hash: str, expires_at: datetime
    ) -> bool:
        """The provider vouched for `user_id`: the sign-in waits for its one-time code."""
        done = self._db.execute(
            update(sso_sign_ins)
            .where(sso_sign_ins.c.state_hash == state_hash, sso_sign_ins.c.code_hash.is_(None))
            .values(user_id=user_id, code_hash=code_hash, expires_at=expires_at)
        )
        return done.rowcount > 0

    def abandon(self, state_hash: str) -> None:
        self._db.execute(delete(sso_sign_ins).where(sso_sign_ins.c.state_hash == state_hash))

    def redeem(self, code_hash: str, now: datetime) -> FinishedSignIn | None:
        """The finished sign-in of this one-time code, deleted so that the code serves once."""
        row = self._db.execute(
            delete(sso_sign_ins)
            .where(sso_sign_ins.c.code_hash == code_hash)
            .returning(sso_sign_ins.c.user_id, sso_sign_ins.c.return_uri, sso_sign_ins.c.expires_at)
        ).first()
        if row is None or row.user_id is None or row.expires_at <= now:
            return None
        return FinishedSignIn(row.user_id, row.return_uri, row.expires_at)


def _json(claim: MandatoryClaim) -> str:
    return orjson.dumps({"claim": claim.claim, "values": list(claim.values)}).decode()
