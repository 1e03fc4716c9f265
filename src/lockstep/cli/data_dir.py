"""Which data dir a command means when neither `--data-dir` nor `LOCKSTEP_DATA_DIR` names one.

`lockstep serve` and the commands that open the store themselves (`admin`, `secret`,
`configmap`) decide alike, so that they find the same store:

1. `--data-dir`, else `LOCKSTEP_DATA_DIR`;
2. else `./lockstep-data` when the current directory has one (where `scripts/serve` keeps its
   store);
3. else lockstep's default, `$XDG_DATA_HOME/lockstep` or `~/.local/share/lockstep`.

When `./lockstep-data` exists and the default holds a store too, which one is meant cannot be
told: the command refuses, naming both, rather than open one of them silently.
"""

from __future__ import annotations

import os
from pathlib import Path

from lockstep.config import default_data_dir

LOCAL_DATA_DIR = Path("lockstep-data")
"""The data dir `scripts/serve` gives `lockstep serve`, relative to the checkout."""


class AmbiguousDataDir(Exception):
    """Two data dirs could be meant and nothing says which."""

    def __init__(self, local: Path, default: Path) -> None:
        super().__init__(
            f"two data dirs could be meant: {local} (in this directory, as scripts/serve "
            f"makes it) and {default} (the default); name one with --data-dir or "
            "LOCKSTEP_DATA_DIR"
        )


def chosen_data_dir(flag: Path | None) -> Path | None:
    """The data dir the command means; None where the settings decide (`LOCKSTEP_DATA_DIR`
    is set, or the default is the only candidate). `AmbiguousDataDir` when two could be."""
    if flag is not None:
        return flag
    if os.environ.get("LOCKSTEP_DATA_DIR"):
        return None
    local = LOCAL_DATA_DIR.resolve()
    if not local.is_dir():
        return None
    default = default_data_dir().expanduser().resolve()
    if default != local and _holds_something(default):
        raise AmbiguousDataDir(local, default)
    return local


def _holds_something(directory: Path) -> bool:
    try:
        return any(directory.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return False
    except PermissionError:
        return True  # there, and perhaps a store: not for this command to pass over
