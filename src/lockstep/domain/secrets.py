"""Secrets and config maps: named sets of key → value strings kept per project, which a
workload's environment variables refer to (`secret: {name, key}`, `configMap: {name, key}`).

Both are a `Secret` of a `SecretKind`, kept and served alike; a secret's values are sealed at
rest and never shown. `ProjectSecrets` is what the runtime resolves those references against;
a `Secret` is what callers may see (a secret's keys, never its values; a config map's data).
`check_secret` is the naming rule, the same as Kubernetes': a name is a DNS-1123 label, a key
is `[-._a-zA-Z0-9]+` of at most 253 characters other than `.` and `..`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from lockstep.domain.errors import Violation
from lockstep.schemas.base import is_dns_label

MAX_KEY_LENGTH = 253
MAX_DATA_BYTES = 1024 * 1024
"""What Kubernetes allows in one Secret or ConfigMap."""

_KEY = re.compile(r"[-._a-zA-Z0-9]+")


class SecretKind(StrEnum):
    """The two kinds of secret, as the API and the error messages name them."""

    SECRET = "secret"  # noqa: S105 (a kind of secret, not a password)
    CONFIG_MAP = "config map"


@dataclass(frozen=True, slots=True)
class ProjectSecrets:
    """Every secret and config map of one project, decrypted: name → key → value.

    Given to the runtime to resolve environment variables. Its repr never shows a secret.
    """

    secrets: Mapping[str, Mapping[str, str]] = field(default_factory=dict, repr=False)
    config_maps: Mapping[str, Mapping[str, str]] = field(default_factory=dict)

    def secret(self, name: str, key: str) -> str | None:
        """The value of `key` in secret `name`; None when either is missing."""
        return self.secrets.get(name, {}).get(key)

    def config_map(self, name: str, key: str) -> str | None:
        """The value of `key` in config map `name`; None when either is missing."""
        return self.config_maps.get(name, {}).get(key)


@dataclass(frozen=True, slots=True)
class Secret:
    """A secret or a config map as anyone may see it: its keys, and a config map's data
    (config maps are not secret). A secret's `data` is None: no caller sees its values."""

    kind: SecretKind
    name: str
    project_id: str
    keys: tuple[str, ...]
    data: Mapping[str, str] | None
    created_by: str
    created_at: datetime
    updated_at: datetime


def is_key(key: str) -> bool:
    """Whether `key` can be a key of a Kubernetes Secret or ConfigMap."""
    return (
        len(key) <= MAX_KEY_LENGTH
        and _KEY.fullmatch(key) is not None
        and key not in {".", ".."}
        and not key.startswith("..")
    )


def check_secret(name: str, data: Mapping[str, str]) -> list[Violation]:
    """Every violation of the naming rules by `name` and the keys of `data`; empty if none."""
    return list(_violations(name, data))


def _violations(name: str, data: Mapping[str, str]) -> Iterator[Violation]:
    if not is_dns_label(name):
        yield Violation(
            "name",
            "must be a DNS-1123 label: lower-case letters, digits and '-', "
            "starting and ending with a letter or digit, at most 63 characters",
        )
    for key in data:
        if not is_key(key):
            yield Violation(
                "data",
                f"the key {key!r} must consist of letters, digits, '-', '_' or '.', "
                f"at most {MAX_KEY_LENGTH} characters, and be neither '.' nor start with '..'",
            )
    size = sum(len(key.encode()) + len(value.encode()) for key, value in data.items())
    if size > MAX_DATA_BYTES:
        yield Violation("data", f"the keys and values add up to more than {MAX_DATA_BYTES} bytes")
