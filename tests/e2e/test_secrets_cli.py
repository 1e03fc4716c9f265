"""`lockstep secret` and `lockstep configmap` on a store that a first start made: what they
print (a secret's keys, never its values), their errors, and that what they store is sealed
with the data dir's key and opens to the values given."""

from __future__ import annotations

import json
import stat
import uuid
from pathlib import Path
from typing import Any

from lockstep.assembly import bootstrap, open_core
from lockstep.auth.sealing import Sealer
from lockstep.config import Settings
from lockstep.domain.secrets import ProjectSecrets
from lockstep.store.database import Database
from tests.e2e.test_cli import lockstep


class Commands:
    """`lockstep secret` or `lockstep configmap` on one store."""

    def __init__(self, kind: str, settings: Settings) -> None:
        self.kind = kind
        self.store = ["--data-dir", str(settings.data_dir)]
        self.store += ["--database-url", settings.resolved_database_url]
        self.printed = ""

    def run(self, *args: str, code: int = 0) -> str:
        done = lockstep(self.kind, *args, *self.store, check=False)
        self.printed += done.stdout + done.stderr
        assert done.returncode == code, done.stdout + done.stderr
        return done.stdout if code == 0 else done.stderr

    def __call__(self, *args: str) -> Any:
        return json.loads(self.run(*args) or "null")


def test_secret_and_configmap_commands(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    core = open_core(settings)
    try:
        bootstrap(core)
    finally:
        core.close()
    password, token = f"pw-{uuid.uuid4().hex}", f"tok-{uuid.uuid4().hex}"
    (tmp_path / "password").write_text(password)
    secret, configmap = Commands("secret", settings), Commands("configmap", settings)

    literal = f"token={token}"
    created = secret("create", "db", "--project", "1", "--from-literal", literal,
                     "--from-file", f"password={tmp_path / 'password'}")  # fmt: skip
    assert (created["name"], created["keys"]) == ("db", ["password", "token"])
    assert created["createdBy"] == "lockstep-admin"
    assert [(s["name"], s["keys"]) for s in secret("list", "--project", "1")] == [
        ("db", ["password", "token"])
    ]
    exists = secret.run("create", "db", "--project", "1", "--from-literal", "a=b", code=1)
    assert exists.strip() == "error: project 1 already has a secret named 'db'"
    replaced = secret("create", "db", "--project", "1", "--from-literal", literal, "--replace")
    assert replaced["keys"] == ["token"]
    bad = secret.run("create", "db", "--project", "1", "--from-literal", password, code=2)
    assert "--from-literal takes KEY=VALUE" in bad
    unknown = secret.run("list", "--project", "7", code=1)
    assert unknown.strip() == "error: no project has the id '7'"

    made = configmap("create", "cfg", "--project", "1", "--from-literal", "mode=fast")
    assert made["data"] == {"mode": "fast"}
    assert [c["data"] for c in configmap("list", "--project", "1")] == [{"mode": "fast"}]

    key = settings.sealing_key_path
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    database = Database(settings.resolved_database_url, sealer=Sealer.from_file(key))
    try:
        with database.read() as unit:
            assert unit.secrets.for_project("1") == ProjectSecrets(
                secrets={"db": {"token": token}}, config_maps={"cfg": {"mode": "fast"}}
            )
    finally:
        database.dispose()

    assert secret.run("delete", "db", "--project", "1") == ""
    assert secret("list", "--project", "1") == []
    gone = secret.run("delete", "db", "--project", "1", code=1)
    assert gone.strip() == "error: project 1 has no secret named 'db'"
    configmap.run("delete", "cfg", "--project", "1")
    assert configmap("list", "--project", "1") == []
    assert password not in secret.printed and token not in secret.printed
