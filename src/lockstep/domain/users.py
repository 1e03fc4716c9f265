"""People who sign in with a password: local users, the rules a password keeps, the one-time
passwords lockstep generates, and how long a user waits after failed sign-ins. Pure; the users
service (services/users.py) applies them."""

from __future__ import annotations

import re
import secrets
import string
from dataclasses import dataclass
from datetime import datetime, timedelta

from lockstep.schemas.bounds import MAX_EMAIL_LENGTH, MAX_PASSWORD_LENGTH

EMAIL_PATTERN = re.compile(r"^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\.[a-zA-Z]{2,}$")
"""The contract's pattern of a user's email (`UserCreationRequest1.email`)."""
MIN_PASSWORD_LENGTH = 8
PASSWORD_RULE = (
    f"from {MIN_PASSWORD_LENGTH} to {MAX_PASSWORD_LENGTH} characters, with at least one "
    "lowercase letter, one uppercase letter, one digit and one other character, and not "
    "containing the user's name"
)
GENERATED_PASSWORD_LENGTH = 20

FREE_FAILURES = 5
"""Failed sign-ins in a row that cost nothing; each one past them makes the user wait."""
MAX_LOCKOUT_SECONDS = 900
"""The longest wait after failed sign-ins: it doubles with each failure up to this."""


@dataclass(frozen=True, slots=True)
class User:
    """A person who signs in with an email and a password (`is_local`), or through an
    identity provider. `token_generation` is carried by every token issued to the user; it
    grows when the user is signed out everywhere (logout, a new password), which refuses
    every earlier token."""

    id: str
    username: str
    password_hash: str
    created_by: str
    created_at: datetime
    updated_at: datetime
    last_login: datetime | None
    is_local: bool
    groups: tuple[str, ...]
    token_generation: int
    failed_sign_ins: int
    locked_until: datetime | None


def email_violation(email: str) -> str | None:
    """Why `email` cannot name a user, or None."""
    if len(email) > MAX_EMAIL_LENGTH:
        return f"must be at most {MAX_EMAIL_LENGTH} characters"
    if EMAIL_PATTERN.fullmatch(email) is None:
        return f"must be a valid email address (the pattern {EMAIL_PATTERN.pattern})"
    return None


def password_violation(password: str, username: str) -> str | None:
    """Why `password` does not keep the policy, or None."""
    name = username.split("@", 1)[0].lower()
    if not MIN_PASSWORD_LENGTH <= len(password) <= MAX_PASSWORD_LENGTH:
        return f"must be {PASSWORD_RULE}"
    kinds = (
        any(c.islower() for c in password),
        any(c.isupper() for c in password),
        any(c.isdigit() for c in password),
        any(not c.isalnum() for c in password),
    )
    if not all(kinds) or (len(name) >= 3 and name in password.lower()):
        return f"must be {PASSWORD_RULE}"
    return None


def generate_password(username: str) -> str:
    """A one-time password for `username` that keeps the policy: random, 20 characters
    (about 119 bits)."""
    alphabet = string.ascii_letters + string.digits + "!#%+-.:=?@_~"
    while True:
        password = "".join(secrets.choice(alphabet) for _ in range(GENERATED_PASSWORD_LENGTH))
        if password_violation(password, username) is None:
            return password


def lockout(failures: int) -> timedelta:
    """How long a user waits before the next sign-in after `failures` failed ones in a row:
    nothing for the first `FREE_FAILURES`, then 1 s doubling up to `MAX_LOCKOUT_SECONDS`."""
    if failures < FREE_FAILURES:
        return timedelta(0)
    return timedelta(seconds=min(2 ** min(failures - FREE_FAILURES, 20), MAX_LOCKOUT_SECONDS))
