"""Single sign-on's pure rules: what a provider's claims make of a person (mappers, dotted
claims, groups, the mandatory claim), where a finished sign-in may return, and which
providers' addresses, aliases and scopes are accepted."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from lockstep.domain.single_sign_on import (
    DEFAULT_SCOPES,
    MAX_GROUPS,
    IdentityProvider,
    MandatoryClaim,
    Mappers,
    Person,
    Refused,
    alias_violation,
    discovery_url_violation,
    person_of,
    return_uri_violation,
    scopes_of,
)

NOW = datetime(2026, 12, 6, tzinfo=UTC)


def provider(mappers: Mappers | None = None, mandatory: MandatoryClaim | None = None) -> Any:
    return IdentityProvider(
        alias="oidc",
        discovery_url="https://idp.example.com/.well-known/openid-configuration",
        client_id="lockstep",
        client_secret="s",
        scopes=DEFAULT_SCOPES,
        mandatory_claim=mandatory,
        mappers=mappers or Mappers(),
        created_at=NOW,
        updated_at=NOW,
    )


@pytest.mark.parametrize(
    ("claims", "mappers", "person"),
    [
        ({"email": "Ada@Example.com"}, Mappers(), Person("ada@example.com", ())),
        (
            {"email": "a@example.com", "groups": ["x", "y", "x"]},
            Mappers(),
            Person("a@example.com", ("x", "y")),
        ),
        ({"email": "a@example.com", "groups": "x"}, Mappers(), Person("a@example.com", ("x",))),
        (
            {"metadata": {"name": "a@example.com"}, "roles": ["r"]},
            Mappers(email="metadata.name", groups="roles"),
            Person("a@example.com", ("r",)),
        ),
    ],
)
def test_claims_name_a_person_through_the_mappers(
    claims: dict[str, Any], mappers: Mappers, person: Person
) -> None:
    assert person_of(claims, provider(mappers)) == person


@pytest.mark.parametrize(
    ("claims", "reason"),
    [
        ({}, "no email in the claim 'email'"),
        ({"email": "not an address"}, "valid email"),
        ({"email": "a@example.com", "groups": [1]}, "a string or a list of strings"),
        ({"email": "a@example.com", "groups": [""]}, "empty"),
        ({"email": "a@example.com", "groups": ["g"] * (MAX_GROUPS + 1)}, "more than"),
    ],
)
def test_claims_that_name_no_one_are_refused_saying_why(
    claims: dict[str, Any], reason: str
) -> None:
    with pytest.raises(Refused, match=reason):
        person_of(claims, provider())


def test_the_mandatory_claim_must_hold_one_of_its_values() -> None:
    demanding = provider(mandatory=MandatoryClaim("department", ("research", "ml")))
    claims: dict[str, Any] = {"email": "a@example.com"}
    with pytest.raises(Refused, match="'department' must hold one of research, ml"):
        person_of(claims, demanding)
    with pytest.raises(Refused, match="department"):
        person_of(claims | {"department": "finance"}, demanding)
    assert person_of(claims | {"department": ["finance", "ml"]}, demanding).email


@pytest.mark.parametrize(
    "uri",
    ["/console/", "http://127.0.0.1:8765/callback", "http://localhost:1/cb", "http://[::1]:9/"],
)
def test_a_sign_in_returns_to_the_console_or_a_loopback_address(uri: str) -> None:
    assert return_uri_violation(uri) is None


@pytest.mark.parametrize(
    "uri",
    [
        "https://evil.example/",
        "http://127.0.0.1/no-port",
        "https://127.0.0.1:8765/",
        "http://user@127.0.0.1:1/",
        "/console/other",
        "//evil.example/console/",
        "http://10.0.0.1:80/",
        "http://127.0.0.1:99999/",
    ],
)
def test_a_sign_in_never_returns_anywhere_else(uri: str) -> None:
    assert return_uri_violation(uri) is not None


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("https://idp.example.com/.well-known/openid-configuration", True),
        ("https://authhost/openid-configuration", True),
        ("http://127.0.0.1:5556/.well-known/openid-configuration", True),
        ("http://idp.example.com/.well-known/openid-configuration", False),
        ("ftp://idp.example.com/", False),
        ("https://user:pw@idp.example.com/", False),
        ("https:///no-host", False),
    ],
)
def test_a_provider_is_reached_over_https_or_on_loopback(url: str, accepted: bool) -> None:
    assert (discovery_url_violation(url) is None) is accepted


def test_scopes_always_ask_for_openid_and_split_on_spaces() -> None:
    assert scopes_of(None) == DEFAULT_SCOPES
    assert scopes_of(["email groups"]) == ("openid", "email", "groups")
    assert scopes_of(["openid", "email", "openid"]) == ("openid", "email")
    assert isinstance(scopes_of(["email!"]), str)


@pytest.mark.parametrize(("alias", "accepted"), [("oidc", True), ("a_b-1", True), ("A", False)])
def test_an_alias_is_lowercase_letters_digits_and_dashes(alias: str, accepted: bool) -> None:
    assert (alias_violation(alias) is None) is accepted
