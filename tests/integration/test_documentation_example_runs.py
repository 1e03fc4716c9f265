"""The documentation's full example request, run by the local runtime with real pods in their
sandboxes. As it is, it fails only where its placeholders cannot be reached here, and its
message names each of them at once. With each placeholder replaced by something real on this
machine (a git server, an S3 server, directories, the project's secrets), the same request runs
to completion, and its pods see every volume, identity and privilege it asks for.

The server is set up as an operator would set it up for the example: the data volume it mounts
registered, a node in its node pool with its node type, the label its pod affinity needs and a
GPU, a local environment for its image, and a user other than root for pods whose identity
comes from the image (the example asks runAsNonRoot with uidGidSource fromTheImage)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lockstep.config import NodeSettings, Settings
from tests.conftest import make_settings
from tests.support.access import make_privileged
from tests.support.api import Api, poll
from tests.support.git_server import PASSWORD, USER, GitServer, git, serving
from tests.support.pods import pod_log
from tests.support.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

EXAMPLE = Path(__file__).resolve().parents[1] / "reference" / "examples" / "create-request.json"
DATA_VOLUME = "123e4567-e89b-12d3-a456-426614174000"
PROJECT = "/api/v1/org-unit/projects/1"
SYSTEM_PYTHON = Path("/usr/bin/python3")
"""What the example's `python` is for its pods, which run as `nobody`: this test's own
interpreter lives under /root, which only root may enter."""

MOUNT_POINTS = (
    "/container/my-claim",
    "/container/my-repository",
    "/container/my-bucket",
    "/local/directory",
    "/mnt/data",
    "/home/myfolder",
    "/home/nobody",
    "/config",
    "/secret",
)
"""The directories the example's pods need on this machine's root (mount points, its working
directory, its home): the runtime makes those missing, the test removes them again."""

SCRIPT = """\
# python -x skips this line
import json, os


def attempt(action):
    try:
        action()
        return "ok"
    except OSError as error:
        return error.strerror


def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return line.split()[1]


def write(path):
    return attempt(lambda: open(path, "w").write(os.environ["HOSTNAME"]))


print(json.dumps({
    "ids": [os.getuid(), os.getgid()],
    "cwd": os.getcwd(),
    "home": os.environ["HOME"],
    "homeWrite": write(os.path.join(os.environ["HOME"], "note")),
    "data": sorted(os.listdir("/mnt/data")),
    "dataWrite": write("/mnt/data/note"),
    "claimWrite": write("/container/my-claim/" + os.environ["HOSTNAME"]),
    "hostPath": sorted(os.listdir("/local/directory")),
    "hostPathWrite": write("/local/directory/note"),
    "repository": open("/container/my-repository/README").read(),
    "bucket": open("/container/my-bucket/weights.bin").read(),
    "bucketWrite": write("/container/my-bucket/" + os.environ["HOSTNAME"] + ".txt"),
    "config": open("/config/greeting").read(),
    "secret": open("/secret/token").read(),
    "capabilities": status("CapEff"),
    "noNewPrivs": status("NoNewPrivs"),
    "seccomp": status("Seccomp"),
}))
"""


@pytest.fixture
def image_environment() -> Iterator[Path]:
    """A local environment for the example's image, `python:3.8`, that any user may enter."""
    prefix = Path(tempfile.mkdtemp(prefix="lockstep-python-", dir="/var/tmp"))
    prefix.chmod(0o755)
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python").symlink_to(SYSTEM_PYTHON)
    yield prefix
    shutil.rmtree(prefix)


@pytest.fixture
def settings(tmp_path: Path, sqlite_url: str, image_environment: Path) -> Settings:
    """One store is enough here: what is tested is the machine's side."""
    data = tmp_path / "example-data"
    data.mkdir()
    (data / "labels.txt").write_text("cat\ndog\n")
    node = NodeSettings(
        name="example",
        pool="my-node-pool-a",
        labels={"run.ai/type": "my-node-type", "text": "yes"},
        gpus=1,
        gpu_memory="16Gi",
    )
    return make_settings(tmp_path / "data", sqlite_url).model_copy(
        update={
            "data_volumes": {DATA_VOLUME: data},
            "nodes": [node],
            "image_environments": {"python": image_environment},
            "pod_user": "nobody",
            "resync_seconds": 1.0,
        }
    )


@pytest.fixture(autouse=True)
def mount_points() -> Iterator[None]:
    """Remove the example's directories on this machine's root that were not there before
    (only when empty: nothing of this machine's is ever removed)."""
    paths = {Path(p) for p in MOUNT_POINTS} | {Path(p).parent for p in MOUNT_POINTS}
    absent = sorted((p for p in paths if not p.exists()), key=lambda p: -len(p.parts))
    yield
    for path in absent:
        with contextlib.suppress(OSError):
            path.rmdir()


@pytest.fixture(autouse=True)
def privileged_project(api: Api) -> None:
    """The example mounts host paths, which only a privileged project may ask (the Pod
    Security levels are tested in test_pod_security.py)."""
    make_privileged(api)


def example(api: Api) -> dict[str, Any]:
    request: dict[str, Any] = json.loads(EXAMPLE.read_text())
    request["clusterId"] = api.cluster_id()
    return request


def settled(api: Api, workload_id: str) -> dict[str, Any]:
    return api.wait_for(workload_id, ["Completed", "Failed"], timeout=120)


def test_as_it_is_the_example_fails_naming_every_placeholder_it_cannot_reach(api: Api) -> None:
    request = example(api)
    for spec in (request["spec"], request["masterSpec"]):
        spec["storage"]["dataVolume"][0]["id"] = "0c7a1d5e-0000-4000-8000-000000000000"
    refused = api.post("/api/v1/workloads/distributed", json=request)
    assert refused.status_code == 400
    assert refused.json()["message"].startswith(
        "spec.storage.dataVolume[0].id: no data volume 0c7a1d5e-0000-4000-8000-000000000000 is "
        "registered on this server"
    )

    done = settled(api, api.create(example(api))["workloadId"])
    assert done["phase"] == "Failed"
    reason = done["phaseMessage"].split(" could not make its volumes ready: ", 1)
    assert reason[0] in {f"pod {done['name']}-{pod}" for pod in ("launcher-0", "worker-0")}
    problems = reason[1].split("; ")
    assert problems[:-1] == [
        "configMapVolume and secretVolume mount at the same path, /text: each volume needs a "
        "mount path of its own",
        "hostPath: /container/directory does not exist on this machine",
        "configMapVolume: the project has no config map named 'text'",
        "secretVolume: the project has no secret named 'text'",
        "git: cannot clone https://github.com/my-git/my-repo: the project has no secret "
        "'my-password-secret' with a key 'User'",
        "s3: cannot read s3 bucket 'my-bucket': the secret 'my-access-key-secret' named by "
        "accessKeySecret does not exist in the project",
    ]
    # This machine has no NFS client, or reaches no server my.nfs.com: either way, said.
    assert problems[-1].startswith("nfs: could not mount my.nfs.com:/container/nfs: ")
    # What lockstep itself provides was ready: the claim it was asked to make exists.
    claim = api.get(f"{PROJECT}/claims/my-claim")
    assert claim.status_code == 200, claim.text
    assert claim.json()["size"] == "1000000000"  # 1G, in bytes


@pytest.fixture
def git_server(tmp_path: Path) -> Iterator[tuple[GitServer, str]]:
    """A repository holding the example's script, served over HTTP with a password; and the
    revision the example asks for (the first commit: the branch has moved on since)."""
    work, served = tmp_path / "my-repo", tmp_path / "served"
    work.mkdir()
    served.mkdir()
    (tmp_path / "seen").mkdir()
    git("init", "--quiet", "--initial-branch", "main", cwd=work)
    (work / "my-script.py").write_text(SCRIPT)
    for text in ("asked for", "later"):
        (work / "README").write_text(f"{text}\n")
        git("add", "README", "my-script.py", cwd=work)
        git("commit", "--quiet", "-m", text, cwd=work)
        if text == "asked for":
            revision = git("rev-parse", "HEAD", cwd=work)
    git("clone", "--quiet", "--bare", str(work), str(served / "my-repo.git"), cwd=tmp_path)
    with serving(served, tmp_path / "seen") as server:
        yield server, revision


@pytest.fixture
def s3(tmp_path: Path) -> Iterator[S3Server]:
    with S3Server(tmp_path / "s3") as server:
        yield server


def test_with_its_placeholders_made_real_the_example_runs_to_completion(
    api: Api, tmp_path: Path, git_server: tuple[GitServer, str], s3: S3Server
) -> None:
    server, revision = git_server
    client = s3.client()
    client.make_bucket("my-bucket")
    client.put_object("my-bucket", "weights.bin", io.BytesIO(b"0101"), 4)  # mounted or synced
    host_directory = tmp_path / "host-directory"
    host_directory.mkdir()
    (host_directory / "shared.txt").write_text("from the machine\n")
    secrets = {
        "my-password-secret": {"User": USER, "Password": PASSWORD},
        "my-access-key-secret": {"AccessKeyId": ACCESS_KEY, "SecretKey": SECRET_KEY},
        "text": {"token": "hunter2"},
    }
    for name, data in secrets.items():
        assert api.post(f"{PROJECT}/secrets", json={"name": name, "data": data}).status_code == 201
    made = api.post(f"{PROJECT}/configmaps", json={"name": "text", "data": {"greeting": "hi"}})
    assert made.status_code == 201

    request = example(api)
    for spec in (request["spec"], request["masterSpec"]):
        storage = spec["storage"]
        storage["git"][0] |= {"repository": server.url("my-repo.git"), "revision": revision}
        storage["s3"][0]["url"] = s3.url
        storage["hostPath"][0]["path"] = str(host_directory)
        storage["configMapVolume"][0]["mountPath"] = "config"  # not both at `text`
        storage["secretVolume"][0]["mountPath"] = "secret"
        del storage["nfs"]  # no NFS server here
        spec["args"] = "-x /container/my-repository/my-script.py"
    created = api.create(request)
    done = settled(api, created["workloadId"])
    assert done["phase"] == "Completed", done["phaseMessage"]

    launcher = f"{done['name']}-launcher-0"
    seen = json.loads(pod_log(api, done["id"], launcher).splitlines()[-1])
    assert seen == {
        "ids": [65534, 65534],
        "cwd": "/home/myfolder",
        "home": "/home/nobody",
        "homeWrite": "ok",
        "data": ["labels.txt"],
        "dataWrite": "Read-only file system",
        "claimWrite": "ok",
        "hostPath": ["shared.txt"],
        "hostPathWrite": "Read-only file system",
        "repository": "asked for\n",
        "bucket": "0101",
        "bucketWrite": "ok",
        "config": "hi",
        "secret": "hunter2",
        "capabilities": f"{1 << 0 | 1 << 5:016x}",  # CHOWN and KILL only
        "noNewPrivs": "1",
        "seccomp": "2",
    }
    claim = api.get(f"{PROJECT}/claims/my-claim").json()
    assert claim["name"] == "my-claim"

    def written_back() -> bytes | None:
        with contextlib.suppress(Exception):
            return client.get_object("my-bucket", f"{launcher}.txt").read()
        return None

    uploaded = poll(written_back, timeout=30, what="the launcher's file in the bucket")
    assert uploaded == launcher.encode()
    assert os.geteuid() == 0, "the pods run as nobody only when lockstep runs as root"
