"""lockstep's settings: who pods run as when their identity comes from the image
(LOCKSTEP_POD_USER), and how a wrong setting is reported at start-up (one line per setting,
named as its variable, no traceback)."""

from __future__ import annotations

import grp
import os
import pwd

import pytest
from pydantic import ValidationError
from typer.testing import CliRunner

from lockstep.cli.main import app
from lockstep.config import MAX_API_PROCESSES, RuntimeKind, SandboxMode, Settings, user_ids


def test_a_pod_user_is_a_name_a_uid_or_either_with_a_group() -> None:
    nobody = pwd.getpwnam("nobody")
    assert user_ids("nobody")[:2] == (nobody.pw_uid, nobody.pw_gid)
    assert user_ids("nobody:daemon")[:2] == (nobody.pw_uid, grp.getgrnam("daemon").gr_gid)
    assert user_ids("1234") == (1234, 1234, ())
    assert user_ids("1234:56") == (1234, 56, ())


def test_a_named_user_keeps_its_supplementary_groups() -> None:
    root = pwd.getpwnam("root")
    expected = tuple(g for g in os.getgrouplist("root", root.pw_gid) if g != root.pw_gid)
    assert user_ids("root") == (0, root.pw_gid, expected)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("ghost-user", "this machine has no user 'ghost-user'"),
        ("nobody:ghost-group", "this machine has no group 'ghost-group'"),
    ],
)
def test_an_unknown_user_or_group_is_named(value: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Settings(pod_user=value)


def test_a_pod_user_needs_the_sandbox() -> None:
    with pytest.raises(ValidationError, match="LOCKSTEP_POD_USER needs the sandbox"):
        Settings(pod_user="nobody", sandbox=SandboxMode.OFF)
    assert Settings(pod_user="1234:56").pod_identity == (1234, 56, ())
    assert Settings().pod_identity is None


def test_wrong_settings_are_named_by_their_variables_without_a_traceback() -> None:
    environment = {
        "LOCKSTEP_SANDBOX": "sometimes",
        "LOCKSTEP_PORT": "eighty",
        "LOCKSTEP_NODES": '[{"pool": 3}]',
        "LOCKSTEP_POD_USER": "a user",
    }
    result = CliRunner().invoke(app, ["serve"], env=environment)
    assert result.exit_code == 2
    lines = result.output.splitlines()
    assert "lockstep: LOCKSTEP_SANDBOX: Input should be 'auto' or 'off'" in lines
    assert any(
        line.startswith("lockstep: LOCKSTEP_PORT: Input should be a valid integer")
        for line in lines
    )
    assert "lockstep: LOCKSTEP_NODES (0.pool): Input should be a valid string" in lines
    assert any(
        line.startswith("lockstep: LOCKSTEP_POD_USER: String should match") for line in lines
    )
    assert "Traceback" not in result.output


def test_the_prometheus_is_an_http_url_set_by_its_variable_or_a_flag_of_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert Settings().prometheus_url is None
    assert Settings(prometheus_url=" http://prom:9090 ").prometheus_url == "http://prom:9090"
    assert Settings(prometheus_url="").prometheus_url is None
    with pytest.raises(ValidationError, match="must be an http:// or https:// URL"):
        Settings(prometheus_url="prometheus:9090")
    monkeypatch.setenv("LOCKSTEP_PROMETHEUS_URL", "https://prom.example/prometheus")
    monkeypatch.setenv("LOCKSTEP_PROMETHEUS_TIMEOUT_SECONDS", "2.5")
    from_environment = Settings()
    assert from_environment.prometheus_url == "https://prom.example/prometheus"
    assert from_environment.prometheus_timeout_seconds == 2.5
    assert from_environment.prometheus_min_range_seconds == 60
    for flag, value, message in (
        ("--prometheus-url", "ftp://prom", "LOCKSTEP_PROMETHEUS_URL: must be an http://"),
        ("--prometheus-timeout-seconds", "0", "LOCKSTEP_PROMETHEUS_TIMEOUT_SECONDS: Input should"),
        ("--prometheus-min-range-seconds", "0.5", "LOCKSTEP_PROMETHEUS_MIN_RANGE_SECONDS: Input"),
    ):
        refused = CliRunner().invoke(app, ["serve", flag, value])
        assert refused.exit_code == 2, refused.output
        assert f"lockstep: {message}" in refused.output


def test_the_token_guard_is_set_by_its_variables_or_flags_of_serve(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = Settings()
    assert (defaults.token_requests_per_minute, defaults.token_checks_at_once) == (60, 4)
    monkeypatch.setenv("LOCKSTEP_TOKEN_REQUESTS_PER_MINUTE", "600")
    monkeypatch.setenv("LOCKSTEP_TOKEN_CHECKS_AT_ONCE", "8")
    from_environment = Settings()
    assert from_environment.token_requests_per_minute == 600
    assert from_environment.token_checks_at_once == 8
    for flag, message in (
        ("--token-requests-per-minute", "LOCKSTEP_TOKEN_REQUESTS_PER_MINUTE: Input should be"),
        ("--token-checks-at-once", "LOCKSTEP_TOKEN_CHECKS_AT_ONCE: Input should be"),
    ):
        refused = CliRunner().invoke(app, ["serve", flag, "0"])
        assert refused.exit_code == 2, refused.output
        assert f"lockstep: {message}" in refused.output


def test_the_connection_bounds_and_pod_bounds_are_set_by_their_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    defaults = Settings()
    assert (defaults.max_connections, defaults.header_timeout_seconds) == (4096, 10.0)
    assert (defaults.pod_pids_limit, defaults.pod_memory_limit) == (2048, "50%")
    assert (defaults.pod_tmp_size, defaults.pod_disk_limit) == ("512Mi", "10%")
    monkeypatch.setenv("LOCKSTEP_MAX_CONNECTIONS", "64")
    monkeypatch.setenv("LOCKSTEP_POD_MEMORY_LIMIT", "8Gi")
    monkeypatch.setenv("LOCKSTEP_POD_HOST_PORTS", "[5000]")
    chosen = Settings()
    assert (chosen.max_connections, chosen.pod_memory_limit, chosen.pod_host_ports) == (
        64,
        "8Gi",
        [5000],
    )
    for wrong in ("lots", "150%", "-1Gi", "0.5%x"):
        with pytest.raises(ValidationError, match="pod_memory_limit"):
            Settings(pod_memory_limit=wrong)
    for flag, message in (
        ("--max-connections", "LOCKSTEP_MAX_CONNECTIONS: Input should be"),
        ("--header-timeout-seconds", "LOCKSTEP_HEADER_TIMEOUT_SECONDS: Input should be"),
    ):
        refused = CliRunner().invoke(app, ["serve", flag, "0"])
        assert refused.exit_code == 2, refused.output
        assert f"lockstep: {message}" in refused.output


def test_several_api_processes_need_postgresql_and_the_local_runtime() -> None:
    postgresql = "postgresql://lockstep@db/lockstep"
    assert Settings(database_url=postgresql, api_processes=4).api_processes == 4
    assert Settings().api_processes == 1
    with pytest.raises(ValidationError, match="needs PostgreSQL"):
        Settings(api_processes=2)
    with pytest.raises(ValidationError, match="run more replicas of lockstep instead"):
        Settings(database_url=postgresql, api_processes=2, runtime=RuntimeKind.KUBERNETES)
    for wrong in (0, MAX_API_PROCESSES + 1):
        with pytest.raises(ValidationError, match="api_processes"):
            Settings(database_url=postgresql, api_processes=wrong)


def test_serve_says_that_several_api_processes_need_postgresql() -> None:
    result = CliRunner().invoke(app, ["serve", "--api-processes", "2"], env={})
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        "lockstep: LOCKSTEP_API_PROCESSES above 1 needs PostgreSQL (LOCKSTEP_DATABASE_URL): "
        "SQLite is written by one process"
    ]
