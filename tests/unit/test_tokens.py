"""Access tokens (auth/tokens.py): issue/verify round trip, expiry, wrong key, malformed and
foreign tokens, the operator subject never accepted from a token, and payloads that the
official Run:ai client can decode with the standard base64 alphabet."""

from __future__ import annotations

import base64
import json
import time
from typing import Any

import jwt
import pytest

from lockstep.auth.tokens import ISSUER, OPERATOR, Principal, TokenAuthority
from lockstep.domain.errors import Unauthenticated
from lockstep.domain.identity import SubjectType

KEY = b"k" * 64
OTHER_KEY = b"o" * 64
TTL = 3600
APP = Principal(SubjectType.APP, "ci-bot", "ci-bot")


@pytest.fixture
def authority() -> TokenAuthority:
    return TokenAuthority(KEY, ttl_seconds=TTL)


def client_side_claims(token: str) -> dict[str, Any]:
    """What the official client `runapy` does (runai/token_refresher.py) to read `exp`."""
    payload = token.split(".")[1]
    claims: dict[str, Any] = json.loads(base64.b64decode(payload + "=="))
    return claims


def signed(claims: dict[str, Any], *, key: bytes = KEY, algorithm: str = "HS256") -> str:
    return jwt.encode(claims, key, algorithm=algorithm)


def valid_claims(**overrides: Any) -> dict[str, Any]:
    now = int(time.time())
    claims: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "ci-bot",
        "typ": "app",
        "name": "CI bot",
        "iat": now,
        "exp": now + 60,
    }
    claims.update(overrides)
    return {key: value for key, value in claims.items() if value is not None}


# --- round trip -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "principal",
    [
        APP,
        Principal(SubjectType.APP, "admin", "Administrator"),
        Principal(
            SubjectType.USER,
            "jane@example.com",
            "jane@example.com",
            user_id="u-42",
            generation=3,
        ),
    ],
)
def test_issue_then_verify_gives_the_principal_back(
    authority: TokenAuthority, principal: Principal
) -> None:
    issued = authority.issue(principal)
    user = principal.subject_type is SubjectType.USER
    assert issued.expires_in == (authority.user_ttl_seconds if user else TTL)
    assert authority.verify(issued.token) == principal


def test_another_authority_with_the_same_key_accepts_the_token() -> None:
    token = TokenAuthority(KEY, ttl_seconds=TTL).issue(APP).token
    assert TokenAuthority(KEY, ttl_seconds=5).verify(token) == APP


def test_each_token_is_distinct(authority: TokenAuthority) -> None:
    now = time.time()
    assert authority.issue(APP, now=now).token != authority.issue(APP, now=now).token


def test_claims_carry_issuer_subject_and_lifetime(authority: TokenAuthority) -> None:
    token = authority.issue(APP, now=1_700_000_000.9).token
    claims = jwt.decode(token, KEY, algorithms=["HS256"], options={"verify_exp": False})
    assert claims["iss"] == "lockstep"
    assert claims["sub"] == "ci-bot"
    assert claims["typ"] == "app"
    assert claims["iat"] == 1_700_000_000
    assert claims["exp"] == 1_700_000_000 + TTL
    assert jwt.get_unverified_header(token)["alg"] == "HS256"


def test_short_keys_are_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        TokenAuthority(b"k" * 31, ttl_seconds=TTL)


# --- the official client's decoding -----------------------------------------------------------

NAMES = [
    "admin",
    "ci-bot",
    "ci_bot_2",
    "team.a@example.com",
    "a",
    "x" * 100,
    "Ünïcödé naïve",
    "with spaces and digits 0123456789",
    "UPPER-lower_Mixed.123",
]


@pytest.mark.parametrize("name", NAMES)
def test_payload_is_readable_with_standard_base64(authority: TokenAuthority, name: str) -> None:
    for offset in range(0, 40_000, 4_000):  # different iat/exp values shift the payload bytes
        now = 1_700_000_000 + offset
        token = authority.issue(Principal(SubjectType.APP, name, name), now=now).token
        payload = token.split(".")[1]
        assert "-" not in payload
        assert "_" not in payload
        claims = client_side_claims(token)
        assert claims["exp"] == now + TTL
        assert claims["sub"] == name
        assert claims["name"] == name


@pytest.mark.parametrize("name", ["x?y", "team>a", "a~", "???"])
def test_any_client_id_gets_a_client_safe_token(authority: TokenAuthority, name: str) -> None:
    token = authority.issue(Principal(SubjectType.APP, name, name), now=1_700_000_000).token
    assert client_side_claims(token)["exp"] == 1_700_000_000 + TTL


# --- rejection ------------------------------------------------------------------------------


def test_expired_token(authority: TokenAuthority) -> None:
    token = authority.issue(APP, now=time.time() - TTL - 60).token
    with pytest.raises(Unauthenticated, match=r"^the access token has expired$"):
        authority.verify(token)


def test_token_signed_with_another_key() -> None:
    token = TokenAuthority(OTHER_KEY, ttl_seconds=TTL).issue(APP).token
    with pytest.raises(Unauthenticated, match=r"^the access token's signature is not valid$"):
        TokenAuthority(KEY, ttl_seconds=TTL).verify(token)


def test_tampered_payload(authority: TokenAuthority) -> None:
    header, _, signature = authority.issue(APP).token.split(".")
    forged = jwt.encode(valid_claims(sub="admin"), OTHER_KEY, algorithm="HS256").split(".")[1]
    with pytest.raises(Unauthenticated, match="signature is not valid"):
        authority.verify(f"{header}.{forged}.{signature}")


@pytest.mark.parametrize("token", ["", "garbage", "a.b.c", "a.b", "....", "Bearer x.y.z"])
def test_malformed_token(authority: TokenAuthority, token: str) -> None:
    with pytest.raises(Unauthenticated, match=r"^the access token is not valid: "):
        authority.verify(token)


@pytest.mark.parametrize(
    "overrides",
    [{"exp": None}, {"iat": None}, {"sub": None}, {"iss": None}, {"iss": "someone-else"}],
    ids=["no-exp", "no-iat", "no-sub", "no-iss", "foreign-issuer"],
)
def test_tokens_missing_required_claims_are_not_valid(
    authority: TokenAuthority, overrides: dict[str, Any]
) -> None:
    with pytest.raises(Unauthenticated, match=r"^the access token is not valid: "):
        authority.verify(signed(valid_claims(**overrides)))


def test_other_algorithms_are_refused(authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated, match="not valid"):
        authority.verify(signed(valid_claims(), algorithm="HS512"))
    unsigned = jwt.encode(valid_claims(), "", algorithm="none")
    with pytest.raises(Unauthenticated, match="not valid"):
        authority.verify(unsigned)


def test_operator_subject_is_never_accepted_from_a_token(authority: TokenAuthority) -> None:
    token = authority.issue(OPERATOR).token
    with pytest.raises(Unauthenticated, match="unknown kind of subject"):
        authority.verify(token)
    with pytest.raises(Unauthenticated, match="unknown kind of subject"):
        authority.verify(signed(valid_claims(typ="operator", sub="operator")))


def test_unknown_subject_type_is_refused(authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated, match="unknown kind of subject"):
        authority.verify(signed(valid_claims(typ="robot")))


def test_missing_type_and_name_default_to_an_app_named_by_its_subject(
    authority: TokenAuthority,
) -> None:
    token = signed(valid_claims(typ=None, name=None))
    assert authority.verify(token) == Principal(SubjectType.APP, "ci-bot", "ci-bot")


def test_unauthenticated_is_not_transient(authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated) as caught:
        authority.verify("garbage")
    assert not caught.value.transient
    assert isinstance(caught.value.__cause__, jwt.InvalidTokenError)
