"""The README's quick start, run as written against a fresh `lockstep serve` started in an
empty directory with a relative data dir and generated administrator credentials."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.support.server import LiveServer

README = Path(__file__).resolve().parents[2] / "README.md"


def quick_start_script() -> str:
    text = README.read_text()
    match = re.search(r"in another shell:\n\n```sh\n(.*?)```", text, re.DOTALL)
    assert match, "the README has no quick start block"
    return match.group(1)


def test_readme_quick_start_runs_as_written(tmp_path: Path) -> None:
    server = LiveServer(Path("lockstep-data"), cwd=tmp_path, bootstrap_credentials=False)
    server.start()
    try:
        credentials = tmp_path / "lockstep-data" / "admin-credentials.json"
        assert credentials.stat().st_mode & 0o777 == 0o600
        assert "client secret:" in server.log()
        script = quick_start_script().replace("URL=http://127.0.0.1:8080", f"URL={server.url}")
        script = script.replace("# delete it", _wait_for_completion() + "# delete it")
        finished = subprocess.run(
            ["bash", "-euo", "pipefail", "-c", script],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert finished.returncode == 0, finished.stderr
        assert '"actualPhase"' in finished.stdout
        assert "COMPLETED" in finished.stdout
        assert '{"code":202,"message":"Request has been accepted."}' in finished.stdout
    finally:
        server.stop()
        server.kill_pods()


def _wait_for_completion() -> str:
    """Shell that polls the quick start's workload until it completes (deadline 60 s)."""
    read_phase = "python3 -c 'import json, sys; print(json.load(sys.stdin)[\"phase\"])'"
    return (
        "for _ in $(seq 1 600); do\n"
        f'  phase=$(curl -s $URL/api/v1/workloads/$ID -H "$AUTH" | {read_phase})\n'
        '  [ "$phase" = Completed ] && echo COMPLETED && break\n'
        "  sleep 0.1\n"
        "done\n"
    )
