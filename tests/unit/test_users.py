"""People who sign in with a password, in pure code: the email and password rules, generated
passwords and the lockout schedule (domain/users.py); Argon2id password hashes
(auth/passwords.py); users' access and refresh tokens (auth/tokens.py); whether a user's token
still stands (services/token_standing.py); the checks of a password or refresh_token grant
(services/token_requests.py); and the SDK's renewal of a user's token with a refresh token
(sdk/auth.py). No server, no store, no sleeping: clocks are injected."""

from __future__ import annotations

import itertools
import secrets
import string
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import jwt
import pytest
from argon2 import PasswordHasher

from lockstep.auth.passwords import (
    hash_password,
    needs_rehash,
    unmatchable_hash,
    verify_password,
)
from lockstep.auth.tokens import ISSUER, Principal, TokenAuthority
from lockstep.domain.errors import InvalidRequest, Unauthenticated
from lockstep.domain.identity import SubjectType
from lockstep.domain.users import (
    FREE_FAILURES,
    GENERATED_PASSWORD_LENGTH,
    MAX_LOCKOUT_SECONDS,
    PASSWORD_RULE,
    email_violation,
    generate_password,
    lockout,
    password_violation,
)
from lockstep.schemas.bounds import MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH
from lockstep.schemas.tokens import TokenRequest
from lockstep.sdk.auth import Tokens
from lockstep.services.token_requests import (
    MAX_REFRESH_TOKEN_LENGTH,
    Credentials,
    PasswordCredentials,
    RefreshCredentials,
    SignInCode,
    checked,
)
from lockstep.services.token_standing import FRESH_SECONDS, TokenStanding
from lockstep.services.token_standing import USER as USER_KIND

USERNAME = "alice@example.com"
PASSWORD = "Correct-Horse-7"
POLICY = f"must be {PASSWORD_RULE}"


class FakeClock:
    """A clock that moves only when told."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


# Emails.


def _email_of_length(length: int) -> str:
    domain = "@example.com"
    return "a" * (length - len(domain)) + domain


@pytest.mark.parametrize(
    "email",
    [
        "alice@example.com",
        "a.b+tag@sub.example.org",
        "x_y%z-w@host-1.io",
        "ALICE@EXAMPLE.COM",
        _email_of_length(MAX_EMAIL_LENGTH),
    ],
)
def test_valid_email_has_no_violation(email: str) -> None:
    assert email_violation(email) is None


@pytest.mark.parametrize(
    "email",
    [
        "aliceexample.com",
        "alice@example",
        "alice@example.c",
        "alice @example.com",
        "alice@exa mple.com",
        " alice@example.com",
        "alice@example.com ",
        "alice@example.com\n",
        "@example.com",
        "alice@@example.com",
        "",
    ],
)
def test_malformed_email_is_refused_naming_the_pattern(email: str) -> None:
    violation = email_violation(email)
    assert violation is not None
    assert "must be a valid email address" in violation


def test_email_over_254_characters_is_refused_naming_the_bound() -> None:
    email = _email_of_length(MAX_EMAIL_LENGTH + 1)
    assert len(email) == 255
    assert email_violation(email) == f"must be at most {MAX_EMAIL_LENGTH} characters"


# Passwords.


@pytest.mark.parametrize(
    ("password", "username", "violation"),
    [
        pytest.param("Ab1!xyz", USERNAME, POLICY, id="7 characters: too short"),
        pytest.param("Ab1!xyzw", USERNAME, None, id="8 characters"),
        pytest.param("Ab1!" + "x" * (MAX_PASSWORD_LENGTH - 4), USERNAME, None, id="256 characters"),
        pytest.param(
            "Ab1!" + "x" * (MAX_PASSWORD_LENGTH - 3),
            USERNAME,
            POLICY,
            id="257 characters: too long",
        ),
        pytest.param("AB1!XYZW", USERNAME, POLICY, id="no lowercase letter"),
        pytest.param("ab1!xyzw", USERNAME, POLICY, id="no uppercase letter"),
        pytest.param("Abc!xyzw", USERNAME, POLICY, id="no digit"),
        pytest.param("Abc1xyzw", USERNAME, POLICY, id="no other character"),
        pytest.param("Abc1 xyz", USERNAME, None, id="a space is another character"),
        pytest.param("xalice1!X", USERNAME, POLICY, id="contains the local part"),
        pytest.param("xALICE1!x", USERNAME, POLICY, id="contains the local part in capitals"),
        pytest.param("Alice1!x", "ALICE@example.com", POLICY, id="local part given in capitals"),
        pytest.param("Bob-Pass1", "bob@example.org", POLICY, id="3-character local part"),
        pytest.param("xAl1!abc", "al@example.com", None, id="2-character local part: ignored"),
        pytest.param("Example1!", USERNAME, None, id="the domain does not count"),
        pytest.param("Alic3!xyz", USERNAME, None, id="part of the local part"),
        pytest.param("Xlocal1!y", "local", POLICY, id="a name without @ is all local part"),
        pytest.param(PASSWORD, USERNAME, None, id="a good password"),
        pytest.param(PASSWORD, "", None, id="no username"),
    ],
)
def test_password_policy(password: str, username: str, violation: str | None) -> None:
    assert password_violation(password, username) == violation


def test_password_rule_names_every_requirement() -> None:
    for part in ("8", "256", "lowercase", "uppercase", "digit", "other", "name"):
        assert part in PASSWORD_RULE


GENERATED = [generate_password(USERNAME) for _ in range(200)]


@pytest.mark.parametrize("username", ["", USERNAME, "bob@example.org", "Ada@corp.example"])
def test_generated_passwords_keep_the_policy(username: str) -> None:
    for password in (generate_password(username) for _ in range(200)):
        assert len(password) == GENERATED_PASSWORD_LENGTH == 20
        assert password_violation(password, username) is None


def test_generated_passwords_differ() -> None:
    assert len(set(GENERATED)) == len(GENERATED)


def test_generated_passwords_use_printable_ascii_without_spaces() -> None:
    allowed = set(string.ascii_letters + string.digits + string.punctuation)
    for password in GENERATED:
        assert set(password) <= allowed


# Lockout.


@pytest.mark.parametrize(
    ("failures", "seconds"),
    [
        (-1, 0),
        (0, 0),
        (1, 0),
        (FREE_FAILURES - 1, 0),
        (FREE_FAILURES, 1),
        (FREE_FAILURES + 1, 2),
        (FREE_FAILURES + 2, 4),
        (FREE_FAILURES + 3, 8),
        (FREE_FAILURES + 9, 512),
        (FREE_FAILURES + 10, MAX_LOCKOUT_SECONDS),
        (FREE_FAILURES + 100, MAX_LOCKOUT_SECONDS),
        (10**18, MAX_LOCKOUT_SECONDS),
        (2**200, MAX_LOCKOUT_SECONDS),
    ],
)
def test_lockout_schedule(failures: int, seconds: int) -> None:
    assert lockout(failures) == timedelta(seconds=seconds)


def test_lockout_doubles_until_the_cap() -> None:
    waits = [lockout(failures).total_seconds() for failures in range(FREE_FAILURES, 40)]
    for before, after in itertools.pairwise(waits):
        assert after == min(2 * before, MAX_LOCKOUT_SECONDS)
    assert max(waits) == MAX_LOCKOUT_SECONDS


# Password hashes.


@pytest.fixture(scope="module")
def stored() -> str:
    """One hash for the module: Argon2id is deliberately slow."""
    return hash_password(PASSWORD)


def test_hash_is_argon2id_without_the_password(stored: str) -> None:
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")
    assert PASSWORD not in stored


def test_right_password_verifies(stored: str) -> None:
    assert verify_password(PASSWORD, stored)


@pytest.mark.parametrize(
    "wrong", ["", PASSWORD.lower(), PASSWORD + " ", " " + PASSWORD, PASSWORD[:-1], PASSWORD * 2]
)
def test_wrong_password_does_not_verify(stored: str, wrong: str) -> None:
    assert not verify_password(wrong, stored)


@pytest.mark.parametrize(
    "garbage",
    [
        "",
        "garbage",
        "\x00",
        "$argon2id$",
        "$argon2id$v=19$m=19456,t=2,p=1$abc$def",
        "$argon2id$v=19$m=1,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2g",
        "scrypt$16384$8$1$c2FsdA==$aGFzaA==",
    ],
)
def test_garbage_stored_hash_does_not_verify(garbage: str) -> None:
    assert verify_password(PASSWORD, garbage) is False


def test_non_ascii_stored_hash_does_not_verify() -> None:
    assert verify_password(PASSWORD, "$argon2id$v=19$m=19456,t=2,p=1$é$x") is False


def test_two_hashes_of_one_password_differ(stored: str) -> None:
    again = hash_password(PASSWORD)
    assert again != stored
    assert verify_password(PASSWORD, again)


def test_todays_hash_needs_no_rehash(stored: str) -> None:
    assert not needs_rehash(stored)


def test_hash_with_other_parameters_needs_rehash() -> None:
    weaker = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1).hash(PASSWORD)
    assert needs_rehash(weaker)
    assert verify_password(PASSWORD, weaker)


def test_unmatchable_hash_is_cached() -> None:
    first = unmatchable_hash()
    assert unmatchable_hash() is first
    assert not needs_rehash(first)


@pytest.mark.parametrize("password", ["", "password", PASSWORD, "None", "0"])
def test_unmatchable_hash_matches_no_simple_password(password: str) -> None:
    assert not verify_password(password, unmatchable_hash())


# Tokens.

USER = Principal(SubjectType.USER, USERNAME, USERNAME, user_id="0b7c1e9a-user", generation=3)
APP = Principal(SubjectType.APP, "app-id-1", "trainer")


@pytest.fixture
def key() -> bytes:
    return secrets.token_bytes(32)


@pytest.fixture
def authority(key: bytes) -> TokenAuthority:
    return TokenAuthority(key, ttl_seconds=3600, user_ttl_seconds=600, refresh_ttl_seconds=86400)


def claims_of(token: str) -> dict[str, Any]:
    decoded: dict[str, Any] = jwt.decode(token, options={"verify_signature": False})
    return decoded


def test_key_shorter_than_32_bytes_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 32 bytes"):
        TokenAuthority(secrets.token_bytes(31), ttl_seconds=60)


def test_user_access_token_carries_user_id_and_generation(authority: TokenAuthority) -> None:
    issued = authority.issue(USER)
    claims = claims_of(issued.token)
    assert (claims["uid"], claims["gen"]) == (USER.user_id, USER.generation)
    assert claims["typ"] == "user"
    assert claims["iss"] == ISSUER
    assert "use" not in claims
    principal = authority.verify(issued.token)
    assert principal == USER
    assert principal.subject_type is SubjectType.USER


def test_user_access_token_lives_user_ttl_seconds(authority: TokenAuthority) -> None:
    issued = authority.issue(USER, now=1_700_000_000)
    claims = claims_of(issued.token)
    assert issued.expires_in == authority.user_ttl_seconds == 600
    assert claims["iat"] == 1_700_000_000
    assert claims["exp"] - claims["iat"] == 600


def test_application_access_token_lives_ttl_seconds(authority: TokenAuthority) -> None:
    issued = authority.issue(APP, now=1_700_000_000)
    claims = claims_of(issued.token)
    assert issued.expires_in == authority.ttl_seconds == 3600
    assert claims["exp"] - claims["iat"] == 3600
    assert "uid" not in claims
    assert "gen" not in claims


def test_application_access_token_verifies_without_user(authority: TokenAuthority) -> None:
    principal = authority.verify(authority.issue(APP).token)
    assert principal == APP
    assert principal.user_id is None


def test_refresh_token_lives_refresh_ttl_seconds(authority: TokenAuthority) -> None:
    issued = authority.issue_refresh(USER, now=1_700_000_000)
    claims = claims_of(issued.token)
    assert issued.expires_in == authority.refresh_ttl_seconds == 86400
    assert claims["exp"] - claims["iat"] == 86400
    assert claims["use"] == "refresh"
    assert (claims["uid"], claims["gen"]) == (USER.user_id, USER.generation)


def test_refresh_token_is_refused_as_access_token(authority: TokenAuthority) -> None:
    refresh = authority.issue_refresh(USER).token
    with pytest.raises(Unauthenticated, match="good only for the refresh_token grant"):
        authority.verify(refresh)


def test_refresh_token_is_accepted_for_the_refresh_grant(authority: TokenAuthority) -> None:
    assert authority.verify_refresh(authority.issue_refresh(USER).token) == USER


@pytest.mark.parametrize("principal", [USER, APP], ids=["user", "application"])
def test_access_token_is_refused_for_the_refresh_grant(
    authority: TokenAuthority, principal: Principal
) -> None:
    with pytest.raises(Unauthenticated, match="it is an access token"):
        authority.verify_refresh(authority.issue(principal).token)


def test_application_is_given_no_refresh_token(authority: TokenAuthority) -> None:
    with pytest.raises(ValueError, match="only users"):
        authority.issue_refresh(APP)


def _forged(key: bytes, **extra: object) -> str:
    claims: dict[str, object] = {
        "iss": ISSUER,
        "typ": "user",
        "sub": USERNAME,
        "name": USERNAME,
        "iat": 1_700_000_000,
        "exp": 4_000_000_000,
        **extra,
    }
    return jwt.encode(claims, key, algorithm="HS256")


def test_user_token_without_user_id_is_refused(key: bytes, authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated, match="does not name a user"):
        authority.verify(_forged(key, gen=0))


def test_user_token_without_generation_is_refused(key: bytes, authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated, match="does not name a user"):
        authority.verify(_forged(key, uid="someone"))


def test_user_refresh_token_without_user_id_is_refused(
    key: bytes, authority: TokenAuthority
) -> None:
    with pytest.raises(Unauthenticated, match="refresh token does not name a user"):
        authority.verify_refresh(_forged(key, use="refresh", gen=0))


def test_forged_user_token_with_user_id_verifies(key: bytes, authority: TokenAuthority) -> None:
    principal = authority.verify(_forged(key, uid="u-1", gen=7))
    assert (principal.user_id, principal.generation) == ("u-1", 7)


def test_token_signed_with_another_key_is_refused(authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated, match="signature is not valid"):
        authority.verify(_forged(secrets.token_bytes(32), uid="u-1", gen=0))


def test_expired_refresh_token_is_refused(authority: TokenAuthority) -> None:
    refresh = authority.issue_refresh(USER, now=1_000_000).token
    with pytest.raises(Unauthenticated, match="expired"):
        authority.verify_refresh(refresh)


def test_expired_access_token_is_refused(authority: TokenAuthority) -> None:
    with pytest.raises(Unauthenticated, match="expired"):
        authority.verify(authority.issue(USER, now=1_000_000).token)


UNSAFE_NAMES = [
    pad + unsafe + tail
    for pad in ("", "x", "xy")
    for unsafe in (">", "?", "~", "\x7f", ">?~\x7f", "é", "名前", "\U0001f600")
    for tail in ("", "z")
]


@pytest.mark.parametrize("name", UNSAFE_NAMES)
def test_token_payloads_have_no_urlsafe_only_digits(authority: TokenAuthority, name: str) -> None:
    user = Principal(SubjectType.USER, name + "@example.com", name, user_id=name, generation=1)
    app = Principal(SubjectType.APP, name, name)
    tokens = [
        authority.issue(user).token,
        authority.issue_refresh(user).token,
        authority.issue(app).token,
    ]
    for token in tokens:
        payload = token.split(".")[1]
        assert "-" not in payload
        assert "_" not in payload
    assert authority.verify(tokens[0]) == user
    assert authority.verify_refresh(tokens[1]) == user
    assert authority.verify(tokens[2]) == app


def test_every_issued_token_payload_is_standard_base64(authority: TokenAuthority) -> None:
    alphabet = string.printable + "\x7f"
    for _ in range(200):
        name = "".join(secrets.choice(alphabet) for _ in range(secrets.randbelow(40)))
        user = Principal(SubjectType.USER, name, name, user_id=name, generation=2**40)
        for token in (authority.issue(user).token, authority.issue_refresh(user).token):
            payload = token.split(".")[1]
            assert "-" not in payload
            assert "_" not in payload
            assert claims_of(token)["name"] == name


# User standing.

STANDING_USER = Principal(SubjectType.USER, USERNAME, USERNAME, user_id="u-1", generation=4)


class FakeStore:
    """The store's generation of each user and client, counting the reads."""

    def __init__(self, generations: dict[str, int | None]) -> None:
        self.generations = generations
        self.reads: list[str] = []

    def read_generation(self, kind: str, key: str) -> int | None:
        self.reads.append(key)
        return self.generations.get(key)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store() -> FakeStore:
    return FakeStore({"u-1": 4})


@pytest.fixture
def standing(store: FakeStore, clock: FakeClock) -> TokenStanding:
    return TokenStanding(store.read_generation, clock=clock)


def test_standing_is_not_fresh_before_refresh(standing: TokenStanding, store: FakeStore) -> None:
    assert not standing.is_fresh(STANDING_USER)
    assert store.reads == []


def test_standing_is_fresh_right_after_refresh(standing: TokenStanding) -> None:
    standing.refresh(STANDING_USER)
    assert standing.is_fresh(STANDING_USER)


def test_standing_goes_stale_after_fresh_seconds(standing: TokenStanding, clock: FakeClock) -> None:
    standing.refresh(STANDING_USER)
    clock.advance(FRESH_SECONDS / 2)
    assert standing.is_fresh(STANDING_USER)
    clock.advance(FRESH_SECONDS / 2)
    assert not standing.is_fresh(STANDING_USER)


def test_standing_check_passes_for_the_users_generation(standing: TokenStanding) -> None:
    standing.refresh(STANDING_USER)
    standing.check(STANDING_USER)


@pytest.mark.parametrize("generation", [0, 3, 5])
def test_standing_check_refuses_another_generation(
    standing: TokenStanding, generation: int
) -> None:
    token_user = Principal(
        SubjectType.USER, USERNAME, USERNAME, user_id="u-1", generation=generation
    )
    standing.refresh(token_user)
    with pytest.raises(Unauthenticated, match="signed out"):
        standing.check(token_user)


def test_standing_check_refuses_a_deleted_user(standing: TokenStanding, store: FakeStore) -> None:
    store.generations["u-1"] = None
    standing.refresh(STANDING_USER)
    with pytest.raises(Unauthenticated, match="no longer exists"):
        standing.check(STANDING_USER)


def test_standing_sees_a_sign_out_at_the_next_refresh(
    standing: TokenStanding, store: FakeStore
) -> None:
    standing.refresh(STANDING_USER)
    store.generations["u-1"] = 5
    standing.check(STANDING_USER)
    standing.refresh(STANDING_USER)
    with pytest.raises(Unauthenticated, match="signed out"):
        standing.check(STANDING_USER)


def test_forget_makes_the_user_stale(standing: TokenStanding) -> None:
    standing.refresh(STANDING_USER)
    standing.forget(USER_KIND, "u-1")
    assert not standing.is_fresh(STANDING_USER)
    standing.forget(USER_KIND, "u-unknown")


def test_a_refresh_reads_once(standing: TokenStanding, store: FakeStore) -> None:
    standing.refresh(STANDING_USER)
    assert store.reads == ["u-1"]
    for _ in range(10):
        assert standing.is_fresh(STANDING_USER)
        standing.check(STANDING_USER)
    assert store.reads == ["u-1"]
    standing.refresh(STANDING_USER)
    assert store.reads == ["u-1", "u-1"]


def test_standing_is_kept_per_user(standing: TokenStanding, store: FakeStore) -> None:
    other = Principal(SubjectType.USER, "bob@example.com", "bob", user_id="u-2", generation=0)
    store.generations["u-2"] = 0
    standing.refresh(STANDING_USER)
    assert not standing.is_fresh(other)
    standing.refresh(other)
    standing.check(other)
    standing.check(STANDING_USER)
    assert store.reads == ["u-1", "u-2"]


def test_a_token_from_an_access_key_stands_while_its_user_and_key_do(
    standing: TokenStanding, store: FakeStore
) -> None:
    through_key = Principal(
        SubjectType.USER,
        USERNAME,
        USERNAME,
        user_id="u-1",
        generation=4,
        client_id="key-1",
        client_generation=2,
    )
    store.generations["key-1"] = 2
    standing.refresh(through_key)
    standing.check(through_key)
    assert store.reads == ["u-1", "key-1"]
    store.generations["key-1"] = 3
    standing.refresh(through_key)
    with pytest.raises(Unauthenticated, match="secret has been regenerated"):
        standing.check(through_key)
    store.generations["key-1"] = None
    standing.refresh(through_key)
    with pytest.raises(Unauthenticated, match="no longer exists or is disabled"):
        standing.check(through_key)


# Token requests.


def check_body(
    body: dict[str, Any],
) -> Credentials | PasswordCredentials | RefreshCredentials | SignInCode:
    return checked(TokenRequest.from_body(body))


def refused(body: dict[str, Any]) -> InvalidRequest:
    with pytest.raises(InvalidRequest) as caught:
        check_body(body)
    return caught.value


def test_password_grant_gives_password_credentials() -> None:
    body = {"grantType": "password", "username": USERNAME, "password": PASSWORD}
    assert check_body(body) == PasswordCredentials(USERNAME, PASSWORD)


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ({"grantType": "password", "password": PASSWORD}, "username"),
        ({"grantType": "password", "username": USERNAME}, "password"),
        ({"grantType": "password", "username": USERNAME, "password": ""}, "password"),
        ({"grantType": "password"}, "username"),
    ],
)
def test_password_grant_requires_username_and_password(body: dict[str, Any], key: str) -> None:
    error = refused(body)
    assert error.message == f"{key}: required for the password grant"
    assert [(v.field, v.rule) for v in error.violations] == [
        (key, "required for the password grant")
    ]


@pytest.mark.parametrize("key", ["refreshToken", "refresh_token", "RefreshToken"])
def test_refresh_grant_gives_refresh_credentials(key: str) -> None:
    body = {"grantType": "refresh_token", key: "a.b.c"}
    assert check_body(body) == RefreshCredentials("a.b.c")


def test_refresh_grant_requires_a_refresh_token() -> None:
    error = refused({"grantType": "refresh_token"})
    assert error.message == "refreshToken: required for the refresh_token grant"


def test_refresh_token_of_4096_characters_is_accepted() -> None:
    token = "t" * MAX_REFRESH_TOKEN_LENGTH
    body = {"grantType": "refresh_token", "refreshToken": token}
    assert check_body(body) == RefreshCredentials(token)


@pytest.mark.parametrize("key", ["refreshToken", "refresh_token"])
def test_refresh_token_over_4096_characters_is_refused(key: str) -> None:
    body = {"grantType": "refresh_token", key: "t" * (MAX_REFRESH_TOKEN_LENGTH + 1)}
    assert refused(body).message == f"{key}: at most 4096 characters"


@pytest.mark.parametrize("password", [12345678, None, ["x"], {"p": 1}, True])
def test_non_string_password_is_refused(password: object) -> None:
    body = {"grantType": "password", "username": USERNAME, "password": password}
    assert refused(body).message == "password: must be a string"


def test_non_string_refresh_token_is_refused() -> None:
    body = {"grantType": "refresh_token", "refreshToken": 7}
    assert refused(body).message == "refreshToken: must be a string"


def test_refresh_token_given_twice_with_different_values_is_refused() -> None:
    body = {"grantType": "refresh_token", "refreshToken": "a", "refresh_token": "b"}
    assert "with different values" in refused(body).message


def test_client_credentials_grant_still_gives_credentials() -> None:
    body = {"grantType": "client_credentials", "clientId": "id-1", "clientSecret": "s3cret"}
    assert check_body(body) == Credentials("client_credentials", "id-1", "s3cret")


# The SDK's tokens.


def test_refresh_token_makes_tokens_renewable() -> None:
    tokens = Tokens(refresh_token="r-1", clock=FakeClock())
    assert tokens.renewable
    assert tokens.due()
    assert tokens.token is None


def test_refresh_token_request_body() -> None:
    tokens = Tokens(refresh_token="r-1", clock=FakeClock())
    assert tokens.request_body() == {"grantType": "refresh_token", "refreshToken": "r-1"}


def test_new_refresh_token_is_used_next() -> None:
    clock = FakeClock(0.0)
    tokens = Tokens(refresh_token="r-1", clock=clock)
    answer = {"accessToken": "a-1", "expiresIn": 900, "refreshToken": "r-2"}
    tokens.accept(answer, requested_at=0.0)
    assert tokens.token == "a-1"
    assert tokens.request_body() == {"grantType": "refresh_token", "refreshToken": "r-2"}
    assert not tokens.due()
    clock.advance(900 - 60)
    assert tokens.due()


def test_answer_without_refresh_token_keeps_the_old_one() -> None:
    tokens = Tokens(refresh_token="r-1", clock=FakeClock(0.0))
    tokens.accept({"accessToken": "a-1", "expiresIn": 900}, requested_at=0.0)
    assert tokens.request_body() == {"grantType": "refresh_token", "refreshToken": "r-1"}


def test_forgotten_token_is_due_again() -> None:
    tokens = Tokens(refresh_token="r-1", clock=FakeClock(0.0))
    tokens.accept({"accessToken": "a-1", "expiresIn": 900}, requested_at=0.0)
    tokens.forget()
    assert tokens.token is None
    assert tokens.due()


@pytest.mark.parametrize(
    "make",
    [
        Tokens,
        lambda: Tokens(client_id="id-1"),
        lambda: Tokens(client_secret="s3cret"),
    ],
    ids=["nothing", "id only", "secret only"],
)
def test_tokens_need_a_token_or_credentials(make: Callable[[], Tokens]) -> None:
    with pytest.raises(ValueError, match="give a token"):
        make()
