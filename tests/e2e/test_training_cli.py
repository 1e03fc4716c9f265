"""`lockstep login`, `config`, `training … submit|list|describe|logs|suspend|resume|delete`
and `project list`, run as a user runs them (subprocesses) against a live server, with the
documented exit codes: 0 ok, 1 the workload failed when waited on, 2 usage, 3 not found,
4 not authorized."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_pod_logs import printed
from tests.support.api import ADMIN_ID, ADMIN_SECRET, poll
from tests.support.server import LiveServer


class Cli:
    """`lockstep` with its own config file, logged in to `server`."""

    def __init__(self, server: LiveServer, home: Path) -> None:
        self.server = server
        self.config = home / "config.json"

    def env(self, **extra: str) -> dict[str, str]:
        base = {k: v for k, v in os.environ.items() if not k.startswith("LOCKSTEP_")}
        return base | {"LOCKSTEP_CONFIG": str(self.config), "COLUMNS": "200"} | extra

    def __call__(
        self, *args: str, status: int = 0, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "lockstep", *args],
            env=env or self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == status, (done.returncode, done.stdout, done.stderr)
        return done

    def json(self, *args: str) -> Any:
        return json.loads(self(*args).stdout)


@pytest.fixture
def cli(live_server: LiveServer, tmp_path: Path) -> Iterator[Cli]:
    run = Cli(live_server, tmp_path)
    run("login", "--url", live_server.url, "--client-id", ADMIN_ID, "--client-secret", ADMIN_SECRET)
    yield run


def test_login_keeps_a_private_config_with_named_contexts(cli: Cli) -> None:
    mode = stat.S_IMODE(cli.config.stat().st_mode)
    assert mode == 0o600
    saved = json.loads(cli.config.read_text())
    (name,) = saved["contexts"]
    assert saved["current"] == name
    assert cli("config", "current-context").stdout.strip() == name
    cli(
        "login",
        "--url",
        cli.server.url,
        "--client-id",
        ADMIN_ID,
        "--client-secret",
        ADMIN_SECRET,
        "--context",
        "other",
    )
    assert cli("config", "current-context").stdout.strip() == "other"
    cli("config", "use-context", name)
    assert cli("config", "current-context").stdout.strip() == name
    assert "other" in cli("config", "get-contexts").stdout
    cli("config", "use-context", "nowhere", status=3)
    wrong = ("login", "--url", cli.server.url, "--client-id", ADMIN_ID, "--client-secret", "wrong")
    assert "refused" in cli(*wrong, status=4).stderr


def test_submit_wait_list_describe_logs_and_delete(cli: Cli) -> None:
    submitted = cli(
        "training",
        "pytorch",
        "submit",
        "hello",
        "-p",
        "1",
        "-i",
        "python:3.11",
        "--workers",
        "1",
        "-e",
        "GREETING=hi",
        "--wait",
        "--",
        sys.executable,
        "-c",
        "import os; print(os.environ['GREETING'], os.environ['RANK'])",
    )
    assert "workload hello submitted" in submitted.stdout
    assert "hello: " in submitted.stderr  # the progress display
    done = poll(
        lambda: next(
            (w for w in cli.json("training", "list", "--json") if w["phase"] == "Completed"), None
        ),
        timeout=60,
        what="hello completed",
    )
    assert done["name"] == "hello"
    table = cli("training", "list").stdout
    assert "hello" in table and "Completed" in table and "PyTorch" in table
    described = cli("training", "describe", "hello").stdout
    assert "Phase:      Completed" in described and "hello-master-0" in described
    logs = cli("training", "logs", "hello").stdout.splitlines()
    assert sorted(logs) == ["hello-master-0 | hi 0", "hello-worker-0 | hi 1"]
    assert cli("training", "logs", "hello", "--pod", "hello-worker-0").stdout == "hi 1\n"
    assert cli(
        "training", "logs", "hello", "--pod", "hello-worker-0", "--timestamps"
    ).stdout.endswith("Z hi 1\n")
    cli("training", "delete", "hello", "--wait")
    cli("training", "describe", "hello", status=3)


@pytest.mark.parametrize("framework", ["pytorch", "mpi", "tf", "xgboost", "jax"])
def test_each_framework_submits(cli: Cli, framework: str) -> None:
    name = f"each-{framework}"
    cli(
        "training",
        framework,
        "submit",
        name,
        "-p",
        "1",
        "-i",
        "python:3.11",
        "--workers",
        "2",
        "--wait",
        "--",
        sys.executable,
        "-c",
        "pass",
    )
    (item,) = [w for w in cli.json("training", "list", "--json") if w["name"] == name]
    assert (
        item["distributedFramework"]
        == {"pytorch": "PyTorch", "mpi": "MPI", "tf": "TF", "xgboost": "XGBoost", "jax": "JAX"}[
            framework
        ]
    )
    assert item["phase"] in {"Running", "Completed"}


def test_dry_run_prints_the_request_and_submits_nothing(cli: Cli) -> None:
    request = cli.json(
        "training",
        "pytorch",
        "submit",
        "dry",
        "-p",
        "1",
        "-i",
        "img",
        "--workers",
        "3",
        "-g",
        "1",
        "--cpu-memory-limit",
        "2Gi",
        "--node-pools",
        "a100",
        "--node-pools",
        "v100",
        "--toleration",
        "gpu=shared:NoSchedule",
        "--min-replicas",
        "2",
        "--max-replicas",
        "4",
        "--dry-run",
        "--",
        "torchrun",
        "train.py",
        "--lr",
        "0.1",
    )
    assert isinstance(request, dict)
    spec = request["spec"]
    assert spec["command"] == "torchrun" and spec["args"] == "train.py --lr 0.1"
    assert spec["numWorkers"] == 3 and spec["nodePools"] == ["a100", "v100"]
    assert spec["compute"] == {"gpuDevicesRequest": 1, "cpuMemoryLimit": "2Gi"}
    assert spec["tolerations"] == [
        {
            "name": "gpu",
            "key": "gpu",
            "operator": "Equal",
            "value": "shared",
            "effect": "NoSchedule",
        }
    ]
    assert (spec["minReplicas"], spec["maxReplicas"]) == (2, 4)
    assert cli.json("training", "list", "--json") == []


def test_exit_codes(cli: Cli, tmp_path: Path) -> None:
    failed = cli(
        "training",
        "pytorch",
        "submit",
        "doomed",
        "-p",
        "1",
        "-i",
        "x",
        "--workers",
        "1",
        "--backoff-limit",
        "0",
        "--wait",
        "--follow",
        "--",
        sys.executable,
        "-c",
        "print('last words'); raise SystemExit(7)",
        status=1,
    )
    assert "failed" in failed.stderr and "exited with code 7" in failed.stderr
    assert "last words" in failed.stdout + failed.stderr  # its log, or the reason quoting it
    cli("training", "describe", "no-such-workload", status=3)
    assert (
        "KEY=VALUE"
        in cli(
            "training", "pytorch", "submit", "x", "-p", "1", "-e", "novalue", "--", "true", status=2
        ).stderr
    )
    cli("training", "list", "--unknown-flag", status=2)
    bad = cli.env(LOCKSTEP_URL=cli.server.url, LOCKSTEP_TOKEN="not-a-token")
    assert cli("training", "list", env=bad, status=4).stderr.startswith("error: ")
    nowhere = cli.env() | {"LOCKSTEP_CONFIG": str(tmp_path / "none.json")}
    assert "not logged in" in cli("training", "list", env=nowhere, status=2).stderr
    invalid = cli(
        "training", "pytorch", "submit", "bad", "-p", "1", "--workers", "0", "--", "true", status=2
    )
    assert "numWorkers" in invalid.stderr
    assert "Traceback" not in failed.stderr + invalid.stderr


def test_suspend_resume_and_follow_logs(cli: Cli, tmp_path: Path) -> None:
    from tests.e2e.test_pod_logs import STAGES

    script = tmp_path / "stages.py"
    script.write_text(STAGES)
    cli(
        "training",
        "pytorch",
        "submit",
        "staged",
        "-p",
        "1",
        "-i",
        "x",
        "--workers",
        "1",
        "--host-path",
        f"path={tmp_path},mount={tmp_path},readwrite",
        "--",
        sys.executable,
        str(script),
        str(tmp_path),
        "one",
        "two",
    )
    printed(tmp_path, "one")
    with subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lockstep",
            "training",
            "logs",
            "staged",
            "--pod",
            "staged-master-0",
            "-f",
        ],
        env=cli.env(),
        stdout=subprocess.PIPE,
        text=True,
    ) as follower:
        assert follower.stdout is not None
        assert follower.stdout.readline() == "one\n"  # while the pod runs
        (tmp_path / "one").touch()
        assert follower.stdout.readline() == "two\n"
        (tmp_path / "two").touch()
        assert follower.wait(timeout=60) == 0

    cli(
        "training",
        "pytorch",
        "submit",
        "pausing",
        "-p",
        "1",
        "-i",
        "x",
        "--workers",
        "1",
        "--wait",
        "--",
        sys.executable,
        "-c",
        "import time; time.sleep(600)",
    )
    cli("training", "suspend", "pausing")
    poll(
        lambda: "Stopped" in cli("training", "describe", "pausing").stdout or None,
        timeout=60,
        what="stopped",
    )
    cli("training", "resume", "pausing")
    poll(
        lambda: "Phase:      Running" in cli("training", "describe", "pausing").stdout or None,
        timeout=60,
        what="running again",
    )
    cli("training", "delete", "pausing", "--wait")


def test_project_list(cli: Cli) -> None:
    projects = cli.json("project", "list", "--json")
    assert isinstance(projects, list) and projects[0]["id"]
    assert "NAME" in cli("project", "list").stdout
    assert cli("project", "list", "-o", "yaml").stdout.startswith("- ")


def test_submit_wait_follow_on_a_terminal(cli: Cli) -> None:
    """Under a pseudo-terminal, as a person sees it: the live display ends showing the workload
    running with its pods, then every pod's lines stream, prefixed with the pod's name."""
    import pexpect

    code = "import time\nfor i in range(3):\n    print('step', i, flush=True)\n    time.sleep(0.3)"
    terminal = pexpect.spawn(
        sys.executable,
        [
            "-m",
            "lockstep",
            "training",
            "pytorch",
            "submit",
            "shown",
            "-p",
            "1",
            "-i",
            "x",
            "--workers",
            "1",
            "--wait",
            "--follow",
            "--",
            sys.executable,
            "-c",
            code,
        ],
        env=cli.env(TERM="xterm"),
        encoding="utf-8",
        timeout=90,
        dimensions=(40, 160),
    )
    terminal.expect("workload shown submitted")
    terminal.expect(r"shown: (Running|Completed)")
    terminal.expect("shown-master-0")
    for step in range(3):
        terminal.expect(rf"shown-master-0 \| step {step}")
    terminal.expect(pexpect.EOF)
    terminal.close()
    assert terminal.exitstatus == 0
    assert "Traceback" not in (terminal.before or "")


def test_shell_completion_offers_commands_and_workload_names(cli: Cli) -> None:
    """What bash's completion function asks lockstep (the protocol `--show-completion bash`
    installs): subcommands, and the server's workload names for a workload argument."""
    cli("training", "pytorch", "submit", "alpha-one", "-p", "1", "-i", "x", "--", "true")
    cli("training", "pytorch", "submit", "alpha-two", "-p", "1", "-i", "x", "--", "true")
    cli("training", "pytorch", "submit", "beta", "-p", "1", "-i", "x", "--", "true")

    def complete(words: str) -> list[str]:
        env = cli.env(
            _LOCKSTEP_COMPLETE="complete_bash",
            COMP_WORDS=words,
            COMP_CWORD=str(len(words.split()) - 1),
        )
        done = subprocess.run(
            [sys.executable, "-m", "lockstep"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return done.stdout.split()

    assert "describe" in complete("lockstep training de")
    assert complete("lockstep training describe alpha") == ["alpha-one", "alpha-two"]
    script = cli(
        "--show-completion", "bash", env=cli.env(_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1")
    ).stdout
    assert "_LOCKSTEP_COMPLETE=complete_bash" in script


def test_zsh_completes_workload_names_at_a_prompt(cli: Cli) -> None:
    """In a real zsh with the script `--show-completion zsh` prints: a tab completes the common
    start of the matching workload names, a second tab lists them."""
    import pexpect

    for name in ("alpha-one", "alpha-two", "beta"):
        cli("training", "pytorch", "submit", name, "-p", "1", "-i", "x", "--", "true")
    path = f"{Path(sys.executable).parent}:{os.environ['PATH']}"
    shell = pexpect.spawn(
        "zsh",
        ["-f"],
        env=cli.env(PATH=path, TERM="xterm", _TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION="1"),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 160),
    )
    # The prompt is spelt in two halves so that the echoed line does not match it.
    shell.sendline(
        "PS1='READY''> '; autoload -U compinit; compinit -u; "
        'eval "$(lockstep --show-completion zsh)"'
    )
    shell.expect("READY> ")
    shell.send("lockstep training describe al\t")
    shell.expect("describe alpha-")
    shell.send("\t")
    shell.expect(r"alpha-one\s+alpha-two")
    assert "beta" not in f"{shell.before}{shell.after}"
    shell.sendcontrol("c")
    shell.sendline("exit")
    shell.expect(pexpect.EOF)


def test_render_prints_the_manifests_or_the_launches(cli: Cli, tmp_path: Path) -> None:
    """`lockstep render`: Kubernetes manifests as YAML documents, the local launches as JSON;
    nothing is submitted."""
    import yaml

    request = tmp_path / "request.json"
    spec = {"distributedFramework": "XGBoost", "numWorkers": 2, "image": "img", "command": "true"}
    request.write_text(json.dumps({"name": "shown", "spec": spec}))
    manifests = list(
        yaml.safe_load_all(cli("render", str(request), "-p", "1", "--runtime", "kubernetes").stdout)
    )
    job = next(m for m in manifests if m["kind"] == "XGBoostJob")
    assert job["spec"]["xgbReplicaSpecs"]["Worker"]["replicas"] == 2
    local = cli.json("render", str(request), "-p", "1", "-o", "json")
    assert local["runtime"] == "local"
    assert [pod["podName"] for pod in local["pods"]] == [
        "shown-master-0",
        "shown-worker-0",
        "shown-worker-1",
    ]
    assert cli.json("training", "list", "--json") == []
    cli("render", str(tmp_path / "missing.json"), status=2)


def test_cluster_nodes(cli: Cli) -> None:
    (node,) = cli.json("cluster", "nodes", "--json")
    assert node["nodePool"] == "default" and node["status"] == "Ready"
    shown = cli("cluster", "nodes").stdout
    assert node["name"] in shown and "default" in shown


def test_storage_flags_reach_the_stored_spec(cli: Cli, tmp_path: Path) -> None:
    cli(
        "training", "pytorch", "submit", "stored", "-p", "1", "-i", "x",
        "--host-path", f"path={tmp_path},mount=/data",
        "--new-pvc", "claimname=scratch,size=1Gi,path=/scratch,ephemeral",
        "--git-sync", "source=https://example.com/r.git,path=/code,branch=main",
        "--", "true",
    )  # fmt: skip
    described = cli.json("training", "describe", "stored", "-o", "json")
    storage = described["spec"]["spec"]["storage"]
    assert storage["hostPath"][0]["mountPath"] == "/data"
    assert storage["pvc"][0]["claimInfo"]["size"] == "1Gi" and storage["pvc"][0]["ephemeral"]
    assert storage["git"][0]["repository"] == "https://example.com/r.git"
    bad = cli(
        "training",
        "pytorch",
        "submit",
        "x",
        "-p",
        "1",
        "--host-path",
        "path=/a",
        "--",
        "true",
        status=2,
    )
    assert "--host-path needs mount=" in bad.stderr


def test_wait_for_completion_exits_with_the_outcome(cli: Cli) -> None:
    def submit(name: str, code: str, status: int) -> subprocess.CompletedProcess[str]:
        return cli(
            "training",
            "pytorch",
            "submit",
            name,
            "-p",
            "1",
            "-i",
            "x",
            "--workers",
            "1",
            "--backoff-limit",
            "0",
            "--wait-for-completion",
            "--",
            sys.executable,
            "-c",
            code,
            status=status,
        )

    done = submit("finishes", "import time; time.sleep(1)", 0)
    assert "finishes: Completed" in done.stderr  # the progress display, to the end
    (item,) = [w for w in cli.json("training", "list", "--json") if w["name"] == "finishes"]
    assert item["phase"] == "Completed"  # returned once it had completed, not when it ran
    failed = submit("breaks", "raise SystemExit(7)", 1)
    assert "workload breaks failed" in failed.stderr and "exited with code 7" in failed.stderr
    assert "Traceback" not in failed.stderr


def test_tensorflow_submits_as_tf(cli: Cli) -> None:
    request = cli.json(
        "training", "tensorflow", "submit", "tfalias", "-p", "1", "-i", "x", "--dry-run"
    )
    assert request["spec"]["distributedFramework"] == "TF"


def test_a_server_without_a_scheme_is_http(cli: Cli, tmp_path: Path) -> None:
    address = cli.server.url.removeprefix("http://")
    fresh = cli.env() | {"LOCKSTEP_CONFIG": str(tmp_path / "fresh.json")}
    login = ("login", address, "--client-id", ADMIN_ID, "--client-secret", ADMIN_SECRET)
    assert f"logged in to {cli.server.url} as context {address}" in cli(*login, env=fresh).stdout
    assert cli("training", "list", env=fresh).returncode == 0
    saved = json.loads((tmp_path / "fresh.json").read_text())
    assert saved["contexts"][address]["url"] == cli.server.url
    token = cli.server.api().token
    assert token is not None
    by_environment = cli.env(LOCKSTEP_URL=address, LOCKSTEP_TOKEN=token)
    by_environment["LOCKSTEP_CONFIG"] = str(tmp_path / "none.json")
    assert cli("project", "list", env=by_environment).returncode == 0
    assert "once" in cli(*login, "--url", "http://elsewhere:1", env=fresh, status=2).stderr
