"""Single sign-on, pure: an OpenID Connect identity provider as an administrator configures it
(`/api/v1/idps`), what a person's claims from it make of them (an email and groups, or a
refusal), and where a finished sign-in may send its one-time code (the console, or the
loopback address of `lockstep login --sso`). services/single_sign_on.py runs the flow."""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from urllib.parse import urlsplit

from lockstep.domain.users import email_violation
from lockstep.schemas.bounds import (
    MAX_ALIAS_LENGTH,
    MAX_SCOPES,
    MAX_URL_LENGTH,
)

OIDC = "oidc"
"""The one type of identity provider lockstep signs people in with (SAML and OpenShift are
types of the contract that lockstep refuses)."""
ALIAS_PATTERN = re.compile(r"^[a-z0-9_-]+$")
SCOPE_PATTERN = re.compile(r"^([a-zA-Z0-9-._:]+)(\s[a-zA-Z0-9-._:]+)*$")
DEFAULT_SCOPES = ("openid", "email", "profile")
MAX_GROUPS = 256
"""The most groups a person keeps from one sign-in (more are refused, not cut)."""
MAX_GROUP_LENGTH = 255
MAX_PROVIDERS = 16
CONSOLE_PATH = "/console/"
"""Where the console receives a finished sign-in (a path of this server)."""


@dataclass(frozen=True, slots=True)
class Mappers:
    """Which claim of the provider holds each of a person's attributes. lockstep reads
    `email` (the user, as access rules name them) and `groups` (as access rules name groups);
    the others are kept and shown for the clusters that use them."""

    email: str = "email"
    groups: str = "groups"
    uid: str | None = None
    gid: str | None = None
    supplementary_groups: str | None = None


@dataclass(frozen=True, slots=True)
class MandatoryClaim:
    """A claim a person must carry, with one of these values, to be let in."""

    claim: str
    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class IdentityProvider:
    alias: str
    discovery_url: str
    """The provider's `/.well-known/openid-configuration`."""
    client_id: str
    client_secret: str
    scopes: tuple[str, ...]
    mandatory_claim: MandatoryClaim | None
    mappers: Mappers
    created_at: datetime
    updated_at: datetime


@dataclass(frozen=True, slots=True)
class Person:
    """Who a provider's claims name."""

    email: str
    groups: tuple[str, ...]


class Refused(Exception):
    """Why a person's claims do not let them in."""


def person_of(claims: Mapping[str, object], provider: IdentityProvider) -> Person:
    """The person the claims name, through the provider's mappers and its mandatory claim;
    `Refused` saying why not."""
    mappers = provider.mappers
    email = claim_value(claims, mappers.email)
    if not isinstance(email, str) or not email:
        raise Refused(f"the provider gave no email in the claim {mappers.email!r}")
    violation = email_violation(email)
    if violation is not None:
        raise Refused(f"the email in the claim {mappers.email!r} {violation}")
    groups = _strings(claim_value(claims, mappers.groups), mappers.groups)
    if len(groups) > MAX_GROUPS:
        raise Refused(f"the claim {mappers.groups!r} names more than {MAX_GROUPS} groups")
    if any(not group or len(group) > MAX_GROUP_LENGTH for group in groups):
        raise Refused(
            f"a group in the claim {mappers.groups!r} is empty or longer than "
            f"{MAX_GROUP_LENGTH} characters"
        )
    mandatory = provider.mandatory_claim
    if mandatory is not None:
        held = _strings(claim_value(claims, mandatory.claim), mandatory.claim)
        if not set(held) & set(mandatory.values):
            raise Refused(
                f"the claim {mandatory.claim!r} must hold one of {', '.join(mandatory.values)}"
            )
    return Person(email.lower(), tuple(dict.fromkeys(groups)))


def claim_value(claims: Mapping[str, object], name: str) -> object:
    """The claim `name`, or the nested one a dotted name reaches (`metadata.name`)."""
    if name in claims:
        return claims[name]
    found: object = claims
    for part in name.split("."):
        if not isinstance(found, Mapping) or part not in found:
            return None
        found = found[part]
    return found


def _strings(value: object, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    raise Refused(f"the claim {name!r} must be a string or a list of strings")


def return_uri_violation(uri: str) -> str | None:
    """Why a finished sign-in may not be sent to `uri`, or None: only the console's own path
    on this server, or a loopback address over http (where `lockstep login --sso` listens), so
    that no one-time code is ever handed to another site."""
    if len(uri) > MAX_URL_LENGTH:
        return f"must be at most {MAX_URL_LENGTH} characters"
    if uri == CONSOLE_PATH:
        return None
    rule = (
        f"must be {CONSOLE_PATH} (the console) or an http URL on a loopback address "
        "(127.0.0.1, [::1] or localhost) with a port"
    )
    try:
        parts = urlsplit(uri)
        port = parts.port
    except ValueError:
        return rule
    host = parts.hostname or ""
    if parts.scheme != "http" or port is None or parts.username or parts.password:
        return rule
    return None if _is_loopback(host) else rule


def alias_violation(alias: str) -> str | None:
    if len(alias) > MAX_ALIAS_LENGTH or ALIAS_PATTERN.fullmatch(alias) is None:
        return f"must be 1 to {MAX_ALIAS_LENGTH} characters of a-z, 0-9, '_' and '-'"
    return None


def discovery_url_violation(url: str) -> str | None:
    """Why `url` cannot be a provider's discovery document, or None: https, or http on a
    loopback address (a provider on this machine)."""
    rule = "must be an https URL (or http on a loopback address) of the provider's discovery"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 (a bad port raises)
    except ValueError:
        return rule + " document"
    host = parts.hostname or ""
    if not host or parts.username or parts.password or len(url) > MAX_URL_LENGTH:
        return rule + f" document, at most {MAX_URL_LENGTH} characters"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http" and _is_loopback(host):
        return None
    return rule + " document"


def scopes_of(given: list[str] | None) -> tuple[str, ...] | str:
    """The scopes to ask for (each given string may hold several, space-separated; `openid`
    always among them), or why they cannot be."""
    if not given:
        return DEFAULT_SCOPES
    scopes: list[str] = []
    for value in given:
        if SCOPE_PATTERN.fullmatch(value) is None:
            return f"{value!r} must match {SCOPE_PATTERN.pattern}"
        scopes.extend(value.split())
    if "openid" not in scopes:
        scopes.insert(0, "openid")
    unique = tuple(dict.fromkeys(scopes))
    if len(unique) > MAX_SCOPES:
        return f"at most {MAX_SCOPES} scopes"
    return unique


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
