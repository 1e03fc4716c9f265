"""Sealing: authenticated encryption of values kept at rest (the values of secrets).

A `Sealer` encrypts with Fernet (AES-128-CBC and HMAC-SHA256) under a key kept in the data
dir, created on first use readable by its owner only and never overwritten, like the
token-signing key. A store copied without its data dir therefore reveals no secret. A value
sealed under another key, or altered since, raises `SealBroken` when opened.

Built by `lockstep.assembly.open_core` (and whoever else opens the store to read secrets) and
handed to the store, which seals and opens secrets' data with it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from lockstep.auth.tokens import write_private_file
from lockstep.domain.errors import SealBroken


class Sealer:
    """Seals bytes into ASCII text safe to store, and opens what it sealed."""

    def __init__(self, key: bytes) -> None:
        """`key`: 32 bytes, URL-safe base64-encoded (as `new_sealing_key` makes)."""
        try:
            self._fernet = Fernet(key)
        except (ValueError, TypeError) as error:
            raise SealBroken(
                "the sealing key is not valid: it must be 32 bytes, URL-safe base64-encoded"
            ) from error

    @classmethod
    def from_file(cls, path: Path) -> Sealer:
        """The sealer of the key at `path`, created there on first use."""
        try:
            return cls(load_or_create_sealing_key(path))
        except SealBroken as error:
            raise SealBroken(f"{error.message} (the key file is {path})") from error

    def seal(self, plain: bytes) -> str:
        return self._fernet.encrypt(plain).decode("ascii")

    def open(self, sealed: str) -> bytes:
        """The bytes `sealed` holds; `SealBroken` when it was sealed under another key or
        altered."""
        try:
            return self._fernet.decrypt(sealed.encode("ascii"))
        except (InvalidToken, UnicodeEncodeError) as error:
            raise SealBroken(
                "a sealed value could not be opened: it was sealed with another key or altered"
            ) from error

    def __repr__(self) -> str:
        return "Sealer(<key hidden>)"


def new_sealing_key() -> bytes:
    return Fernet.generate_key()


def load_or_create_sealing_key(path: Path) -> bytes:
    """The key kept at `path`, created (readable by its owner only) on first use. When two
    processes create it at once, both use the one that was written first."""
    if not path.exists():
        # Written aside, then linked into place: a reader never sees a half-written key.
        aside = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        write_private_file(aside, new_sealing_key() + b"\n")
        try:
            os.link(aside, path)
        except FileExistsError:
            pass
        finally:
            aside.unlink()
    return path.read_bytes().strip()
