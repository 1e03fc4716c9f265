"""Sealing (auth/sealing.py): what is sealed opens only with the same key and unaltered, and
the key lives in a file readable by its owner only that is created once and never replaced."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from lockstep.auth.sealing import Sealer, load_or_create_sealing_key, new_sealing_key
from lockstep.domain.errors import LockstepError, SealBroken

PLAIN = b'{"password": "hunter2-plain"}'


@pytest.fixture
def sealer() -> Sealer:
    return Sealer(new_sealing_key())


def test_what_is_sealed_opens_and_is_not_in_clear(sealer: Sealer) -> None:
    sealed = sealer.seal(PLAIN)
    assert sealed.isascii()
    assert b"hunter2" not in sealed.encode()
    assert sealer.open(sealed) == PLAIN
    assert sealer.seal(PLAIN) != sealed, "each seal has its own IV"


def test_another_key_does_not_open_it(sealer: Sealer) -> None:
    sealed = sealer.seal(PLAIN)
    with pytest.raises(SealBroken, match="sealed with another key or altered"):
        Sealer(new_sealing_key()).open(sealed)


def _altered(sealed: str, at: int) -> str:
    replacement = "A" if sealed[at] != "A" else "B"
    return sealed[:at] + replacement + sealed[at + 1 :]


@pytest.mark.parametrize("where", ["header", "ciphertext", "signature"])
def test_an_altered_seal_does_not_open(sealer: Sealer, where: str) -> None:
    sealed = sealer.seal(PLAIN)
    at = {"header": 3, "ciphertext": len(sealed) // 2, "signature": len(sealed) - 10}[where]
    with pytest.raises(SealBroken):
        sealer.open(_altered(sealed, at))


@pytest.mark.parametrize("garbage", ["", "not a seal", "é-non-ascii", "gAAAAA"])
def test_garbage_does_not_open_and_the_error_is_lockstep_s(sealer: Sealer, garbage: str) -> None:
    with pytest.raises(LockstepError):
        sealer.open(garbage)


@pytest.mark.parametrize("key", [b"", b"short", b"x" * 44])
def test_a_malformed_key_is_refused(key: bytes) -> None:
    with pytest.raises(SealBroken, match="sealing key is not valid"):
        Sealer(key)


def test_the_key_file_is_private_created_once_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "data" / "secrets-sealing.key"
    first = Sealer.from_file(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    content = path.read_bytes()
    again = Sealer.from_file(path)
    assert path.read_bytes() == content
    assert again.open(first.seal(PLAIN)) == PLAIN
    assert [p.name for p in path.parent.iterdir()] == [path.name], "nothing left aside"


def test_an_existing_key_file_is_never_overwritten(tmp_path: Path) -> None:
    path = tmp_path / "secrets-sealing.key"
    key = new_sealing_key()
    path.write_bytes(key + b"\n")
    assert load_or_create_sealing_key(path) == key
    assert path.read_bytes() == key + b"\n"


def test_a_broken_key_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "secrets-sealing.key"
    path.write_bytes(b"not a key")
    with pytest.raises(SealBroken, match=str(path)):
        Sealer.from_file(path)
    assert path.read_bytes() == b"not a key"


def test_the_repr_hides_the_key() -> None:
    key = new_sealing_key()
    assert key.decode() not in repr(Sealer(key))
