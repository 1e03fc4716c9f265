"""People's passwords, stored only as Argon2id hashes (argon2-cffi).

Passwords are chosen by people, so they are guessable where an application's 256-bit random
secret (auth/credentials.py, scrypt) is not: their hash must make each guess expensive in
memory as well as time. Argon2id is the first choice of OWASP's password storage guidance;
its parameters here are that guidance's first set (19 MiB, 2 passes, 1 lane: about 20 ms of a
core), and each stored hash names its own, so raising them later rehashes a password at its
next sign-in (`needs_rehash`).
"""

from __future__ import annotations

import functools
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_HASHER = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def hash_password(password: str) -> str:
    """`$argon2id$v=19$m=…,t=…,p=…$salt$hash`, safe to store."""
    return _HASHER.hash(password)


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches a hash made by `hash_password`."""
    try:
        return _HASHER.verify(stored, password)
    except (VerifyMismatchError, VerificationError, InvalidHashError, ValueError):
        return False  # ValueError: a stored hash that is not ASCII


def needs_rehash(stored: str) -> bool:
    """Whether `stored` was made with other parameters than today's."""
    return _HASHER.check_needs_rehash(stored)


@functools.cache
def unmatchable_hash() -> str:
    """A hash, with today's parameters, of a password nobody has: checking a sign-in of an
    unknown user against it costs what a wrong password costs, so that the time of the
    answer does not tell whether the user exists."""
    return hash_password(secrets.token_urlsafe(32))
