"""Secrets' and config maps' naming rules (domain/secrets.py), what `ProjectSecrets` shows, and
how `lockstep secret create` gathers its data (cli/secrets.py) without echoing a value."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer

from lockstep.cli.secrets import gather_data
from lockstep.domain.secrets import MAX_DATA_BYTES, ProjectSecrets, check_secret, is_key


@pytest.mark.parametrize(
    "key", ["a", "PASSWORD", "db.password", "tls-cert_2", ".hidden", "a..b", "x" * 253]
)
def test_kubernetes_keys_are_accepted(key: str) -> None:
    assert is_key(key)
    assert check_secret("ok", {key: "v"}) == []


@pytest.mark.parametrize(
    "key", ["", ".", "..", "..data", "a b", "a/b", "a=b", "ключ", "x" * 254, "tab\t"]
)
def test_other_keys_are_refused_naming_the_key(key: str) -> None:
    assert not is_key(key)
    violations = check_secret("ok", {key: "v"})
    assert [v.field for v in violations] == ["data"]
    assert repr(key) in violations[0].rule


@pytest.mark.parametrize("name", ["a", "my-secret", "db2", "x" * 63])
def test_dns_labels_are_names(name: str) -> None:
    assert check_secret(name, {}) == []


@pytest.mark.parametrize("name", ["", "My-Secret", "my_secret", "-a", "a-", "a.b", "x" * 64])
def test_other_names_are_refused(name: str) -> None:
    violations = check_secret(name, {"k": "v"})
    assert [v.field for v in violations] == ["name"]
    assert "DNS-1123 label" in violations[0].rule


def test_data_over_kubernetes_size_limit_is_refused() -> None:
    half = MAX_DATA_BYTES // 2
    assert check_secret("big", {"a": "x" * (half - 10), "b": "y" * (half - 10)}) == []
    violations = check_secret("big", {"a": "x" * half, "b": "y" * half})
    assert [v.field for v in violations] == ["data"]
    assert "x" * 10 not in violations[0].rule


def test_project_values_resolve_and_never_show_secrets() -> None:
    values = ProjectSecrets(
        secrets={"db": {"password": "hunter2-hidden"}}, config_maps={"cfg": {"mode": "fast"}}
    )
    assert values.secret("db", "password") == "hunter2-hidden"
    assert values.secret("db", "user") is None
    assert values.secret("other", "password") is None
    assert values.config_map("cfg", "mode") == "fast"
    assert values.config_map("cfg", "password") is None
    assert "hunter2-hidden" not in repr(values)
    assert "hunter2-hidden" not in str(values)
    assert ProjectSecrets().secrets == {} and ProjectSecrets().config_maps == {}


def test_gathered_data_comes_from_literals_and_files(tmp_path: Path) -> None:
    (tmp_path / "password").write_text("from-file\nsecond line")
    (tmp_path / "token.txt").write_text("tok")
    data = gather_data(
        ["user=alice", "equals=a=b", "empty="],
        [f"password={tmp_path / 'password'}", str(tmp_path / "token.txt")],
    )
    assert data == {
        "user": "alice",
        "equals": "a=b",
        "empty": "",
        "password": "from-file\nsecond line",
        "token.txt": "tok",
    }


@pytest.mark.parametrize(
    ("literals", "message"),
    [
        (["no-equals-s3cr3t"], "--from-literal takes KEY=VALUE"),
        (["=s3cr3t"], "--from-literal takes KEY=VALUE"),
        (["k=s3cr3t", "k=s3cr3t-again"], "the key 'k' is given twice"),
    ],
)
def test_bad_literals_are_usage_errors_that_do_not_echo_values(
    literals: list[str], message: str
) -> None:
    with pytest.raises(typer.BadParameter) as raised:
        gather_data(literals, [])
    assert str(raised.value) == message
    assert "s3cr3t" not in str(raised.value)


def test_unreadable_or_binary_files_are_usage_errors(tmp_path: Path) -> None:
    binary = tmp_path / "key.bin"
    binary.write_bytes(b"\xff\xfe\x00s3cr3t")
    with pytest.raises(typer.BadParameter, match="is not UTF-8 text") as raised:
        gather_data([], [f"k={binary}"])
    assert "s3cr3t" not in str(raised.value)
    with pytest.raises(typer.BadParameter, match="cannot read"):
        gather_data([], [f"k={tmp_path / 'missing'}"])
