"""Which data dir a command means without `--data-dir` (cli/data_dir.py): the flag, else
`LOCKSTEP_DATA_DIR`, else `./lockstep-data` when there is one, else the default; two that
could both be meant are refused, naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from lockstep.cli.data_dir import AmbiguousDataDir, chosen_data_dir


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory, with a home of its own and no data dir set."""
    directory = tmp_path / "checkout"
    directory.mkdir()
    monkeypatch.chdir(directory)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv("LOCKSTEP_DATA_DIR", raising=False)
    return directory


def default_store(tmp_path: Path) -> Path:
    default = tmp_path / "home" / ".local" / "share" / "lockstep"
    default.mkdir(parents=True)
    (default / "lockstep.db").touch()
    return default


def test_without_a_local_data_dir_the_settings_decide(checkout: Path) -> None:
    assert chosen_data_dir(None) is None


def test_the_local_data_dir_is_found(checkout: Path) -> None:
    (checkout / "lockstep-data").mkdir()
    assert chosen_data_dir(None) == checkout / "lockstep-data"


def test_an_empty_default_does_not_count(checkout: Path, tmp_path: Path) -> None:
    (tmp_path / "home" / ".local" / "share" / "lockstep").mkdir(parents=True)
    (checkout / "lockstep-data").mkdir()
    assert chosen_data_dir(None) == checkout / "lockstep-data"


def test_two_stores_are_refused_naming_both(checkout: Path, tmp_path: Path) -> None:
    default = default_store(tmp_path)
    (checkout / "lockstep-data").mkdir()
    with pytest.raises(AmbiguousDataDir) as refused:
        chosen_data_dir(None)
    assert str(refused.value) == (
        f"two data dirs could be meant: {checkout / 'lockstep-data'} (in this directory, as "
        f"scripts/serve makes it) and {default} (the default); name one with --data-dir or "
        "LOCKSTEP_DATA_DIR"
    )


def test_the_flag_and_the_variable_decide_over_both(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default_store(tmp_path)
    (checkout / "lockstep-data").mkdir()
    assert chosen_data_dir(Path("elsewhere")) == Path("elsewhere")
    monkeypatch.setenv("LOCKSTEP_DATA_DIR", str(tmp_path / "named"))
    assert chosen_data_dir(None) is None


def test_xdg_data_home_is_the_default_it_names(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    (tmp_path / "xdg" / "lockstep").mkdir(parents=True)
    (tmp_path / "xdg" / "lockstep" / "lockstep.db").touch()
    (checkout / "lockstep-data").mkdir()
    with pytest.raises(AmbiguousDataDir, match=str(tmp_path / "xdg" / "lockstep")):
        chosen_data_dir(None)
