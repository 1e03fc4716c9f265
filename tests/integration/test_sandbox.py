"""The local runtime's sandbox, through the API with real pods in bubblewrap: a pod sees the
mounts its spec asks for at their paths (and writes where they are writable), runs as the
identity it asks for with only the privileges it keeps, and is refused by name what this
machine cannot give. Each test's pods print what they see; the test reads their logs."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import S3Mount, SandboxMode, Settings
from lockstep.runtimes.local.sandbox.policy import MEMORY_ROOT
from tests.conftest import make_settings
from tests.support.access import make_privileged
from tests.support.api import Api, poll
from tests.support.git_server import (
    PASSWORD,
    USER,
    GitServer,
    Repository,
    make_repository,
    serving,
)
from tests.support.pods import pod_log, printed, run_to_end
from tests.support.requests import distributed, python, shared
from tests.support.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

IMAGENET = "0c7a1d5e-7b7e-4a4f-9a52-6a8f3f0b2d11"
SECRETS = "/api/v1/org-unit/projects/1/secrets"
CONFIG_MAPS = "/api/v1/org-unit/projects/1/configmaps"


@pytest.fixture
def settings(tmp_path: Path, sqlite_url: str) -> Settings:
    """One store is enough here: what is tested is the machine's side. A resync each second,
    for the workload that waits for a claim."""
    configured = make_settings(tmp_path / "data", sqlite_url)
    imagenet = tmp_path / "imagenet"
    imagenet.mkdir()
    (imagenet / "labels.txt").write_text("cat\ndog\n")
    volumes = {IMAGENET: imagenet}
    return configured.model_copy(update={"resync_seconds": 1.0, "data_volumes": volumes})


@pytest.fixture(autouse=True)
def privileged_project(request: pytest.FixtureRequest) -> None:
    """What the sandbox gives is tested here, so the pods of the `api` server may ask for
    anything (who may ask what is tested in test_pod_security.py)."""
    if "api" in request.fixturenames:
        make_privileged(request.getfixturevalue("api"))


def attempt(code: str) -> str:
    """Python that prints whether `code` (a statement) raised, and with which error."""
    return (
        "def attempt(fn):\n"
        "    try:\n"
        "        fn()\n"
        "        return 'ok'\n"
        "    except OSError as error:\n"
        "        return error.strerror\n"
    ) + code


# --- security ------------------------------------------------------------------------------


def test_the_pod_runs_as_the_uid_gid_and_groups_it_asks_for(api: Api) -> None:
    security = {
        "uidGidSource": "custom",
        "runAsUid": 1234,
        "runAsGid": 2345,
        "supplementalGroups": "3456,4567",
    }
    code = "import json, os\nprint(json.dumps([os.getuid(), os.getgid(), sorted(os.getgroups())]))"
    done = run_to_end(api, "who", code, security=security)
    assert done["phase"] == "Completed", done["phaseMessage"]
    uid, gid, groups = printed(api, done)
    assert (uid, gid) == (1234, 2345)
    assert {3456, 4567} <= set(groups) and 0 not in groups


def test_a_read_only_root_refuses_writes_but_tmp_is_the_pods_own(api: Api) -> None:
    code = attempt(
        "import json\n"
        "print(json.dumps([attempt(lambda: open('/var/lockstep-probe', 'w')),\n"
        "                  attempt(lambda: open('/tmp/mine', 'w'))]))"
    )
    done = run_to_end(api, "readonly", code, security={"readOnlyRootFilesystem": True})
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == ["Read-only file system", "ok"]
    assert not Path("/var/lockstep-probe").exists()


def test_run_as_non_root_refuses_uid_0(api: Api) -> None:
    """Asked outright, the request is refused; as lockstep's own user (root here), the pod."""
    security = {"runAsNonRoot": True, "uidGidSource": "custom", "runAsUid": 0}
    body = distributed(api.cluster_id(), name="rooted", workers=1, security=security)
    refused = api.post("/api/v1/workloads/distributed", json=body)
    assert refused.status_code == 400 and "runAsNonRoot" in refused.json()["message"]
    assert os.geteuid() == 0, "lockstep's own user must be root for the second case"
    done = run_to_end(api, "rooted", "print(1)", security={"runAsNonRoot": True})
    assert done["phase"] == "Failed"
    assert "runAsNonRoot" in done["phaseMessage"] and "uid 0" in done["phaseMessage"]


STATUS = (
    "import json\n"
    "fields = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
    "keys = ('CapEff', 'CapBnd', 'Seccomp', 'NoNewPrivs')\n"
    "print(json.dumps({k: fields[k].strip() for k in keys}))"
)
CONTAINER_DEFAULTS = 0xA80405FB
"""containerd's default capabilities (0xa80425fb) without NET_RAW (bit 13)."""
SYS_PTRACE = 1 << 19


def test_a_pod_keeps_a_containers_capabilities_and_those_its_spec_adds(api: Api) -> None:
    """Read from the pod's /proc/self/status: the default set, the seccomp filter on (mode 2)
    and no_new_privs; `capabilities` adds to the set, Unconfined lifts the filter."""
    plain = run_to_end(api, "plain", STATUS)
    added = run_to_end(
        api,
        "added",
        STATUS,
        security={"capabilities": ["SYS_PTRACE"], "seccompProfileType": "Unconfined"},
    )
    assert (plain["phase"], added["phase"]) == ("Completed", "Completed")
    status = printed(api, plain)
    assert int(status["CapEff"], 16) == int(status["CapBnd"], 16) == CONTAINER_DEFAULTS
    assert (status["Seccomp"], status["NoNewPrivs"]) == ("2", "1")
    widened = printed(api, added)
    assert int(widened["CapEff"], 16) == CONTAINER_DEFAULTS | SYS_PTRACE
    assert widened["Seccomp"] == "0"


def test_a_pod_running_as_another_user_holds_no_capability_but_those_it_adds(api: Api) -> None:
    user = {"uidGidSource": "custom", "runAsUid": 1234}
    plain = run_to_end(api, "user", STATUS, security=user)
    added = run_to_end(api, "chowner", STATUS, security={**user, "capabilities": ["CHOWN"]})
    assert (plain["phase"], added["phase"]) == ("Completed", "Completed")
    assert int(printed(api, plain)["CapEff"], 16) == 0
    assert int(printed(api, added)["CapEff"], 16) == 1  # CHOWN is bit 0


def test_no_new_privileges_seccomp_and_a_private_ipc_namespace(api: Api) -> None:
    code = (
        "import json, os\n"
        "status = dict(line.split(':', 1) for line in open('/proc/self/status'))\n"
        "print(json.dumps([status['NoNewPrivs'].strip(), status['Seccomp'].strip(),\n"
        "                  os.readlink('/proc/self/ns/ipc')]))"
    )
    done = run_to_end(api, "confined", code, security={"seccompProfileType": "RuntimeDefault"})
    assert done["phase"] == "Completed", done["phaseMessage"]
    no_new_privs, seccomp, ipc = printed(api, done)
    assert (no_new_privs, seccomp) == ("1", "2")
    assert ipc != str(Path("/proc/self/ns/ipc").readlink())


# --- storage -------------------------------------------------------------------------------


def test_host_paths_are_read_only_unless_asked_and_writes_reach_the_machine(
    api: Api, tmp_path: Path
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "input.txt").write_text("from the machine\n")
    code = attempt(
        "import json, os, time\n"
        "found = [open('/data/ro/input.txt').read(),\n"
        "         attempt(lambda: open('/data/ro/out', 'w')),\n"
        "         attempt(lambda: open('/data/rw/out-' + os.environ['HOSTNAME'], 'w')\n"
        "                 .write('written'))]\n"
        # The master's end ends the workload: it waits for the worker's write.
        "deadline = time.monotonic() + 60\n"
        "while len(os.listdir('/data/rw')) < 3 and time.monotonic() < deadline:\n"
        "    time.sleep(0.05)\n"
        "print(json.dumps(found))"
    )
    storage = {
        "hostPath": [
            {"path": str(shared), "mountPath": "/data/ro"},
            {"path": str(shared), "mountPath": "/data/rw", "readOnly": False},
        ]
    }
    done = run_to_end(api, "hosted", code, storage=storage)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == ["from the machine\n", "Read-only file system", "ok"]
    assert sorted(p.name for p in shared.glob("out-*")) == [
        "out-hosted-master-0",
        "out-hosted-worker-0",
    ]


@pytest.fixture
def shared_mount(tmp_path: Path) -> Iterator[Path]:
    """A directory that is a shared mount of this machine (as / is under systemd), so that
    what is mounted under it later propagates to whoever follows it."""
    source = tmp_path / "propagating"
    for name in ("follow", "keep"):
        (source / name / "later").mkdir(parents=True)
    subprocess.run(["mount", "--bind", str(source), str(source)], check=True)
    try:
        subprocess.run(["mount", "--make-shared", str(source)], check=True)
        yield source
    finally:
        subprocess.run(["umount", "--recursive", str(source)], check=True)


def test_mount_propagation_none_keeps_later_mounts_out_and_host_to_container_lets_them_in(
    api: Api, tmp_path: Path, shared_mount: Path
) -> None:
    talk = tmp_path / "talk"  # what the test and the pods tell each other
    talk.mkdir()
    gate = talk / "gate"
    code = (
        "import json, os, time\n"
        f"open({str(talk)!r} + '/started-' + os.environ['HOSTNAME'], 'w').close()\n"
        f"while not os.path.exists({str(gate)!r}):\n"
        "    time.sleep(0.02)\n"
        "print(json.dumps([os.listdir('/following/later'), os.listdir('/private/later')]))"
    )
    follow, keep = shared_mount / "follow", shared_mount / "keep"
    storage = {
        "hostPath": [
            {"path": str(follow), "mountPath": "/following", "mountPropagation": "HostToContainer"},
            {"path": str(keep), "mountPath": "/private"},  # None, the default
            *shared(talk)["hostPath"],
        ]
    }
    body = distributed(api.cluster_id(), name="propagation", workers=1, args=python(code))
    body["spec"]["storage"] = storage
    created = api.create(body)
    poll(
        lambda: len(list(talk.glob("started-*"))) == 2 or None,
        timeout=60,
        what="both pods to start",
    )
    for source in (follow, keep):
        subprocess.run(["mount", "-t", "tmpfs", "later", str(source / "later")], check=True)
        (source / "later" / "mounted-after-the-start").touch()
    gate.touch()
    done = api.wait_for(created["workloadId"], ["Completed", "Failed"], timeout=60)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == [["mounted-after-the-start"], []]


def test_deleting_a_workload_never_reaches_into_what_is_still_mounted_in_it(
    api: Api, settings: Settings, tmp_path: Path
) -> None:
    """A mount left in a pod's directory (a killed set-up could not unmount its NFS or s3
    volume) is detached before the directory is removed: what the server holds stays."""
    server = tmp_path / "server-data"
    server.mkdir()
    (server / "precious.bin").write_bytes(b"years of work")
    code = python("import time; time.sleep(600)")
    created = api.create(distributed(api.cluster_id(), name="mounted", workers=1, args=code))
    api.wait_for(created["workloadId"], ["Running"], timeout=60)
    left = settings.runtime_dir / created["workloadId"] / "mounted-worker-0" / "volumes" / "nfs-0"
    left.mkdir(parents=True)
    subprocess.run(["mount", "--bind", str(server), str(left)], check=True)
    try:
        deleted = api.delete(f"/api/v1/workloads/distributed/{created['workloadId']}")
        assert deleted.status_code == 202
        api.wait_gone(created["workloadId"])
        poll(lambda: not left.exists() or None, timeout=30, what="the pod's directory to go")
    finally:
        if left.is_mount():
            subprocess.run(["umount", str(left)], check=True)
    assert (server / "precious.bin").read_bytes() == b"years of work"


def test_every_volume_that_cannot_be_made_ready_is_named(api: Api) -> None:
    storage = {
        "hostPath": [{"path": "/nowhere/a", "mountPath": "/a"}],
        "configMapVolume": [{"configMap": "absent", "mountPath": "relative/cfg"}],
    }
    done = run_to_end(api, "broken", "print(1)", storage=storage)
    assert done["phase"] == "Failed"
    assert "hostPath: /nowhere/a does not exist on this machine" in done["phaseMessage"]
    assert "the project has no config map named 'absent'" in done["phaseMessage"]


def test_a_claim_outlives_its_workload_and_an_ephemeral_one_does_not(
    api: Api, settings: Settings
) -> None:
    write = (
        "import os\n"
        "if os.environ['HOSTNAME'].endswith('master-0'):\n"
        "    open('/data/hello', 'w').write('kept')\n"
        "print('\"written\"')"
    )
    claim = {"claimName": "shared", "path": "/data", "existingPvc": False}
    claim["claimInfo"] = {"size": "1Gi"}
    first = run_to_end(api, "writer", write, storage={"pvc": [claim]})
    assert first["phase"] == "Completed", first["phaseMessage"]
    read = "import json; print(json.dumps(open('/data/hello').read()))"
    existing = {"claimName": "shared", "path": "/data", "existingPvc": True, "readOnly": True}
    second = run_to_end(api, "reader", read, storage={"pvc": [existing]})
    assert second["phase"] == "Completed", second["phaseMessage"]
    assert printed(api, second) == "kept"
    assert (settings.claims_dir / "1" / "shared" / "hello").read_text() == "kept"

    later = {"claimName": "later", "path": "/data", "existingPvc": True}
    body = distributed(api.cluster_id(), name="patient", workers=1, args=python(read))
    body["spec"]["storage"] = {"pvc": [later]}
    waiting = api.create(body)

    def pending_for_the_claim() -> dict[str, Any] | None:
        workload = api.workload(waiting["workloadId"])
        return workload if "'later'" in workload["phaseMessage"] else None

    pending = poll(pending_for_the_claim, what="the workload waiting for its claim", timeout=30)
    assert pending["phase"] == "Pending"
    assert "does not exist" in pending["phaseMessage"]
    claim_dir = settings.claims_dir / "1" / "later"
    claim_dir.mkdir(parents=True)  # as `lockstep volume create later` makes it
    (claim_dir / "hello").write_text("made later")
    done = api.wait_for(waiting["workloadId"], ["Completed", "Failed"], timeout=60)
    assert done["phase"] == "Completed", done["phaseMessage"]

    ephemeral = {"claimName": "scratch", "path": "/scratch", "ephemeral": True}
    third = run_to_end(api, "ephemeral", "print(1)", storage={"pvc": [ephemeral]})
    assert third["phase"] == "Completed", third["phaseMessage"]
    scratch = settings.claims_dir / ".ephemeral" / third["id"] / "scratch"
    assert scratch.is_dir()
    assert api.delete(f"/api/v1/workloads/distributed/{third['id']}").status_code == 202
    api.wait_gone(third["id"])
    assert not scratch.exists()


def test_config_map_and_secret_files_with_their_modes(api: Api) -> None:
    assert api.post(CONFIG_MAPS, json={"name": "cfg", "data": {"mode": "fast", "level": "3"}})
    assert api.post(SECRETS, json={"name": "creds", "data": {"token": "hunter2"}})
    code = (
        "import json, os, stat\n"
        "def seen(path): return [open(path).read(), oct(stat.S_IMODE(os.stat(path).st_mode))]\n"
        "mounts = open('/proc/self/mountinfo').read().splitlines()\n"
        "fs = [line.split(' - ')[1].split()[0] for line in mounts if ' /etc/creds ' in line]\n"
        "print(json.dumps([seen('/etc/cfg/mode'), seen('/etc/cfg/level'), seen('/etc/level'),\n"
        "                  seen('/etc/creds/token'), fs]))"
    )
    storage = {
        "configMapVolume": [
            {"configMap": "cfg", "mountPath": "/etc/cfg", "defaultMode": "0440"},
            {"configMap": "cfg", "mountPath": "/etc/level", "subPath": "level"},
        ],
        "secretVolume": [{"secret": "creds", "mountPath": "/etc/creds", "defaultMode": "0400"}],
    }
    done = run_to_end(api, "files", code, storage=storage)
    assert done["phase"] == "Completed", done["phaseMessage"]
    cfg_mode, cfg_level, level, token, fs = printed(api, done)
    assert cfg_mode == ["fast", "0o440"] and cfg_level == ["3", "0o440"]
    assert level == ["3", "0o644"]
    assert token == ["hunter2", "0o400"]
    assert fs == ["tmpfs"]  # secret files live in memory only
    memory = MEMORY_ROOT / done["id"]
    poll(
        lambda: not any(p.is_file() for p in memory.rglob("*")) or None,
        what="the secret files gone from memory once the pods ended",
        timeout=10,
    )


def test_empty_dirs_on_disk_and_in_memory_and_a_large_shm(api: Api) -> None:
    code = (
        "import json, os\n"
        "open('/scratch-disk/file', 'w').write('x')\n"
        "open('/fast/file', 'w').write('y')\n"
        "def size(path): s = os.statvfs(path); return s.f_blocks * s.f_frsize\n"
        "print(json.dumps([size('/fast'), size('/dev/shm')]))"
    )
    storage = {
        "emptyDirVolume": [
            {"path": "/scratch-disk"},
            {"path": "/fast", "medium": "Memory", "sizeLimit": "16Mi"},
        ]
    }
    security = {"uidGidSource": "custom", "runAsUid": 1500, "runAsGid": 1500}
    small = run_to_end(api, "scratch", code, storage=storage, security=security)
    assert small["phase"] == "Completed", small["phaseMessage"]
    fast, shm = printed(api, small)
    assert fast == 16 * 2**20 and shm == 64 * 2**20
    large = run_to_end(api, "shm", code, storage=storage, compute={"largeShmRequest": True})
    assert large["phase"] == "Completed", large["phaseMessage"]
    assert printed(api, large)[1] > 64 * 2**20


@pytest.fixture
def repository(tmp_path: Path) -> Repository:
    (tmp_path / "git").mkdir()
    return make_repository(tmp_path / "git")


@pytest.fixture
def git_server(repository: Repository, tmp_path: Path) -> Iterator[GitServer]:
    (tmp_path / "seen").mkdir()
    with serving(repository.bare.parent, tmp_path / "seen") as server:
        yield server


def test_a_git_volume_shows_the_revision_asked_for(
    api: Api, repository: Repository, git_server: GitServer
) -> None:
    code = "import json; print(json.dumps(open('/code/README').read()))"
    at_revision = {"repository": repository.url, "branch": "main", "revision": repository.first}
    done = run_to_end(api, "cloned", code, storage={"git": [{**at_revision, "path": "/code"}]})
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == "first\n"

    assert api.post(SECRETS, json={"name": "git", "data": {"User": USER, "Password": PASSWORD}})
    over_http = {
        "repository": git_server.url(repository.bare.name),
        "branch": "dev",
        "path": "/code",
        "secretRef": {"name": "git"},
    }
    done = run_to_end(api, "private", code, storage={"git": [over_http]})
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == "third\n"

    assert api.post(SECRETS, json={"name": "wrong", "data": {"User": USER, "Password": "nope!"}})
    refused = run_to_end(
        api, "refused", code, storage={"git": [{**over_http, "secretRef": {"name": "wrong"}}]}
    )
    assert refused["phase"] == "Failed"
    log = "".join(pod_log(api, refused["id"], f"refused-{pod}") for pod in ("master-0", "worker-0"))
    assert "Authentication failed" in log and "nope!" not in log
    assert "Authentication failed" in refused["phaseMessage"]
    assert "nope!" not in refused["phaseMessage"]


@pytest.fixture(scope="module")
def s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with S3Server(tmp_path_factory.mktemp("s3")) as server:
        yield server


@pytest.mark.parametrize("mode", list(S3Mount))
def test_an_s3_volume_shows_the_bucket_and_takes_back_what_the_pod_wrote(
    tmp_path: Path, sqlite_url: str, s3: S3Server, mode: S3Mount
) -> None:
    """Mounted with s3fs (auto, on this machine), the pod also sees what reaches the bucket
    while it runs; synchronised, it sees the bucket as it was when the pod started."""
    import io

    from tests.conftest import in_process

    settings = make_settings(tmp_path / "data", sqlite_url).model_copy(update={"s3_mount": mode})
    bucket = f"datasets-{mode.value}"
    client = s3.client()
    client.make_bucket(bucket)
    for key, text in (("train/a.txt", "alpha"), ("train/sub/b.txt", "beta"), ("other.txt", "x")):
        client.put_object(bucket, key, io.BytesIO(text.encode()), len(text))
    talk = tmp_path / "talk"  # what the test and the pods tell each other
    talk.mkdir()
    gate = talk / "gate"
    code = (
        "import json, os, time\n"
        "if os.environ['HOSTNAME'].endswith('master-0'):\n"
        "    open('/data/result.txt', 'w').write('trained')\n"
        f"open({str(talk)!r} + '/started-' + os.environ['HOSTNAME'], 'w').close()\n"
        f"while not os.path.exists({str(gate)!r}):\n"
        "    time.sleep(0.02)\n"
        "print(json.dumps(sorted(os.path.relpath(os.path.join(d, f), '/data')\n"
        "                        for d, _, files in os.walk('/data') for f in files)))"
    )
    volume = {"bucket": f"{bucket}/train", "path": "/data", "url": s3.url, "accessKeySecret": "s3"}
    with in_process(settings) as test_client:
        api = Api.login(test_client)
        keys = {"AccessKeyId": ACCESS_KEY, "SecretKey": SECRET_KEY}
        assert api.post(SECRETS, json={"name": "s3", "data": keys})
        body = distributed(api.cluster_id(), name="bucket", workers=1, args=python(code))
        body["spec"] |= {"storage": {"s3": [volume], **shared(talk)}, "backoffLimit": 0}
        created = api.create(body)
        poll(
            lambda: len(list(talk.glob("started-*"))) == 2 or None,
            timeout=60,
            what="both pods to start",
        )
        client.put_object(bucket, "train/late.txt", io.BytesIO(b"late"), 4)
        gate.touch()
        done = api.wait_for(created["workloadId"], ["Completed", "Failed"], timeout=90)
        assert done["phase"] == "Completed", done["phaseMessage"]
        live = ["late.txt"] if mode is S3Mount.AUTO else []
        assert printed(api, done) == sorted(["a.txt", "result.txt", "sub/b.txt", *live])
    uploaded = poll(
        lambda: _object(client, bucket, "train/result.txt"),
        what="the pod's file written back to the bucket",
        timeout=30,
    )
    assert uploaded == b"trained"


def _object(client: Any, bucket: str, key: str) -> bytes | None:
    try:
        response = client.get_object(bucket, key)
    except Exception:
        return None
    try:
        return bytes(response.read())
    finally:
        response.close()
        response.release_conn()


def test_a_registered_data_volume_is_mounted_read_only_and_an_unknown_one_refused(
    api: Api,
) -> None:
    code = attempt(
        "import json\n"
        "print(json.dumps([open('/data/labels.txt').read(),\n"
        "                  attempt(lambda: open('/data/new', 'w'))]))"
    )
    storage = {"dataVolume": [{"id": IMAGENET, "mountPath": "/data"}]}
    done = run_to_end(api, "labels", code, storage=storage)
    assert done["phase"] == "Completed", done["phaseMessage"]
    assert printed(api, done) == ["cat\ndog\n", "Read-only file system"]
    unknown = "11111111-2222-3333-4444-555555555555"
    body = distributed(api.cluster_id(), name="unknown", workers=1)
    body["spec"]["storage"] = {"dataVolume": [{"id": unknown, "mountPath": "/data"}]}
    refused = api.post("/api/v1/workloads/distributed", json=body)
    assert refused.status_code == 400
    assert refused.json()["message"] == (
        f"spec.storage.dataVolume[0].id: no data volume {unknown} is registered on this server "
        "(LOCKSTEP_DATA_VOLUMES)"
    )


# --- without a sandbox ---------------------------------------------------------------------


@pytest.fixture
def unsandboxed(tmp_path: Path, sqlite_url: str) -> Iterator[Api]:
    from tests.conftest import in_process

    settings = make_settings(tmp_path / "plain", sqlite_url).model_copy(
        update={"sandbox": SandboxMode.OFF}
    )
    with in_process(settings) as client:
        yield Api.login(client)


def test_with_the_sandbox_off_each_unapplied_field_is_named(unsandboxed: Api) -> None:
    make_privileged(unsandboxed)
    storage = {"hostPath": [{"path": "/etc", "mountPath": "/host-etc"}]}
    done = run_to_end(
        unsandboxed, "plain", "print(1)", storage=storage, security={"readOnlyRootFilesystem": True}
    )
    assert done["phase"] == "Completed", done["phaseMessage"]

    def warned() -> list[dict[str, Any]] | None:
        events = unsandboxed.get(f"/api/v1/workloads/{done['id']}/events").json()["events"]
        return [e for e in events if e["reason"] == "NotApplied"] or None

    warnings = poll(warned, what="a NotApplied warning", timeout=10)
    assert {w["involvedObject"]["name"] for w in warnings} == {"plain-master-0", "plain-worker-0"}
    message = warnings[0]["message"]
    assert "hostPath mounted at /host-etc" in message and "readOnlyRootFilesystem" in message
    conditions = unsandboxed.workload(done["id"])["conditions"]
    [sandbox] = [c for c in conditions if c["type"] == "Sandbox"]
    assert (sandbox["status"], sandbox["reason"]) == ("False", "NotApplied")
    assert sandbox["message"] == (
        "lockstep runs pods without a sandbox (LOCKSTEP_SANDBOX=off), so this is not applied: "
        "hostPath mounted at /host-etc, readOnlyRootFilesystem"
    )
    listed = unsandboxed.get("/api/v1/workloads").json()["workloads"]
    assert sandbox in listed[0]["conditions"]
