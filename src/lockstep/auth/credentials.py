"""Application secrets: generated with enough entropy, stored only as salted scrypt hashes."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets

_N, _R, _P = 2**14, 8, 1
_SCHEME = "scrypt"


def generate_secret() -> str:
    """A new client secret (256 bits, URL-safe)."""
    return secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    """`scrypt$N$r$p$salt$hash`, safe to store."""
    salt = secrets.token_bytes(16)
    digest = hashlib.scrypt(secret.encode(), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    encoded = [base64.b64encode(x).decode() for x in (salt, digest)]
    return "$".join([_SCHEME, str(_N), str(_R), str(_P), *encoded])


def verify_secret(secret: str, stored: str) -> bool:
    """Whether `secret` matches a hash made by `hash_secret`, in constant time."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != _SCHEME:
            return False
        expected = base64.b64decode(digest)
        actual = hashlib.scrypt(
            secret.encode(),
            salt=base64.b64decode(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(expected),
        )
    except (ValueError, TypeError, OverflowError, MemoryError):
        return False
    return hmac.compare_digest(actual, expected)
