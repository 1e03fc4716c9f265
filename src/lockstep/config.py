"""lockstep's configuration: `LOCKSTEP_*` environment variables, each mirrored by a CLI flag.

Instantiated by the entry point (or a test), never at import time.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def default_data_dir() -> Path:
    """`$XDG_DATA_HOME/lockstep`, or `~/.local/share/lockstep`."""
    base = os.environ.get("XDG_DATA_HOME")
    return (Path(base) if base else Path.home() / ".local" / "share") / "lockstep"


class LogFormat(StrEnum):
    AUTO = "auto"
    JSON = "json"
    TEXT = "text"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LOCKSTEP_", extra="ignore")

    host: str = "127.0.0.1"
    port: int = Field(default=8080, ge=0, le=65535)
    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = None
    bootstrap_client_id: str | None = None
    bootstrap_client_secret: SecretStr | None = None
    token_ttl_seconds: int = Field(default=3600, ge=60)
    resync_seconds: float = Field(default=30.0, gt=0)
    restart_backoff_seconds: float = Field(default=10.0, ge=0)
    """The wait before a failed gang's first restart; it doubles with each restart."""
    pod_log_max_bytes: int = Field(default=10 * 1024 * 1024, ge=4096)
    """A pod's log is rotated past this size; it keeps the current file and the one before."""
    cgroup_dir: Path | None = None
    """A cgroup v2 directory delegated to lockstep for pod limits; by default
    `<cgroup2 mount>/lockstep` when running as root (see runtimes/local/confinement.py)."""
    public_host: str = "localhost"
    """The host name in the URLs of workloads' exposed ports (pods listen on this machine)."""
    image_environments: dict[str, Path] = Field(default_factory=dict)
    """Image names (or repositories without a tag) and the local Python environment (venv or
    conda prefix) their pods run in, as JSON: `{"pytorch/pytorch": "/opt/envs/torch"}`."""
    log_level: str = "info"
    log_format: LogFormat = LogFormat.AUTO

    @field_validator("data_dir")
    @classmethod
    def _absolute(cls, value: Path) -> Path:
        """Pods run in their own directories, so every path lockstep hands out is absolute."""
        return value.expanduser().resolve()

    @property
    def resolved_database_url(self) -> str:
        """The database URL, defaulting to SQLite in the data dir."""
        return self.database_url or f"sqlite:///{self.data_dir / 'lockstep.db'}"

    @property
    def runtime_dir(self) -> Path:
        return self.data_dir / "runtime" / "local"

    @property
    def signing_key_path(self) -> Path:
        return self.data_dir / "token-signing.key"

    @property
    def sealing_key_path(self) -> Path:
        """The key that encrypts secrets' values in the store (see auth/sealing.py)."""
        return self.data_dir / "secrets-sealing.key"

    @property
    def credentials_path(self) -> Path:
        return self.data_dir / "admin-credentials.json"
