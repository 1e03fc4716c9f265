"""Application secrets (auth/credentials.py): generated secrets, salted scrypt hashes,
verification of right and wrong secrets, and stored hashes that are not well formed."""

from __future__ import annotations

import base64
from collections.abc import Callable

import pytest

from lockstep.auth.credentials import generate_secret, hash_secret, verify_secret

SECRET = "s3cret-Value_1"


@pytest.fixture(scope="module")
def stored() -> str:
    """One hash for the module: scrypt is deliberately slow."""
    return hash_secret(SECRET)


def parts(stored: str) -> list[str]:
    return stored.split("$")


def test_hash_format(stored: str) -> None:
    scheme, n, r, p, salt, digest = parts(stored)
    assert (scheme, n, r, p) == ("scrypt", "16384", "8", "1")
    assert len(base64.b64decode(salt, validate=True)) == 16
    assert len(base64.b64decode(digest, validate=True)) == 32
    assert SECRET not in stored


def test_right_secret_verifies(stored: str) -> None:
    assert verify_secret(SECRET, stored)


@pytest.mark.parametrize(
    "wrong", ["", "s3cret-value_1", SECRET + " ", " " + SECRET, SECRET[:-1], SECRET * 2]
)
def test_wrong_secret_does_not_verify(stored: str, wrong: str) -> None:
    assert not verify_secret(wrong, stored)


def test_same_secret_hashes_differently_each_time(stored: str) -> None:
    again = hash_secret(SECRET)
    assert again != stored
    assert parts(again)[4] != parts(stored)[4], "a fresh salt each time"
    assert verify_secret(SECRET, again)


def test_non_ascii_secret() -> None:
    secret = "pässwörd-密码"
    assert verify_secret(secret, hash_secret(secret))
    assert not verify_secret("passwort-密码", hash_secret(secret))


def _replace(stored: str, index: int, value: str) -> str:
    fields = parts(stored)
    fields[index] = value
    return "$".join(fields)


def _flip_digest(stored: str) -> str:
    digest = bytearray(base64.b64decode(parts(stored)[5]))
    digest[0] ^= 0xFF
    return _replace(stored, 5, base64.b64encode(bytes(digest)).decode())


@pytest.mark.parametrize(
    "mangle",
    [
        lambda s: "",
        lambda s: "scrypt",
        lambda s: SECRET,
        lambda s: s + "$extra",
        lambda s: "$".join(parts(s)[:5]),
        lambda s: _replace(s, 0, "bcrypt"),
        lambda s: _replace(s, 1, "many"),
        lambda s: _replace(s, 1, "1000"),  # not a power of two
        lambda s: _replace(s, 1, str(2**40)),  # far more memory than scrypt allows
        lambda s: _replace(s, 2, "0"),
        lambda s: _replace(s, 3, "1.5"),
        lambda s: _replace(s, 4, "!!not base64!!"),
        lambda s: _replace(s, 5, ""),
        lambda s: _replace(s, 5, "!!"),
        lambda s: _replace(s, 4, base64.b64encode(b"another salt 16b").decode()),
        _flip_digest,
    ],
    ids=[
        "empty",
        "scheme-only",
        "plain-text",
        "seven-fields",
        "five-fields",
        "other-scheme",
        "n-not-a-number",
        "n-not-power-of-two",
        "n-too-large",
        "r-zero",
        "p-not-an-integer",
        "salt-not-base64",
        "digest-empty",
        "digest-not-base64",
        "other-salt",
        "other-digest",
    ],
)
def test_malformed_or_foreign_stored_hash_never_verifies(
    stored: str, mangle: Callable[[str], str]
) -> None:
    assert verify_secret(SECRET, mangle(stored)) is False


@pytest.mark.parametrize(("index", "value"), [(1, "-16384"), (2, "-8")])
def test_negative_scrypt_parameters_do_not_verify(stored: str, index: int, value: str) -> None:
    assert verify_secret(SECRET, _replace(stored, index, value)) is False


def test_generated_secrets_are_long_url_safe_and_distinct() -> None:
    secrets = {generate_secret() for _ in range(50)}
    assert len(secrets) == 50
    for secret in secrets:
        assert len(secret) >= 43  # 32 random bytes
        assert set(secret) <= set(
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        )
