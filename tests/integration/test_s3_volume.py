"""The s3 volume against a real S3-compatible server (SeaweedFS, started once for the module):
a bucket prefix downloaded into a directory and the pod's changes uploaded back, with the
access keys of a project secret, anonymously, and the failures a user must be able to read.
Every test has its own bucket."""

from __future__ import annotations

import io
import os
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.local.volumes import VolumeError, s3_mount
from lockstep.runtimes.local.volumes.s3 import S3Source, download, source_of, upload
from lockstep.schemas.storage import S3
from tests.support.s3_server import ACCESS_KEY, SECRET_KEY, S3Server

PUBLIC = "public-data"
SECRETS = ProjectSecrets(secrets={"s3-keys": {"AccessKeyId": ACCESS_KEY, "SecretKey": SECRET_KEY}})
OBJECTS = {
    "datasets/v1/train.csv": b"a,b\n1,2\n",
    "datasets/v1/nested/deep/weights.bin": bytes(range(256)) * 64,
    "datasets/v1/labels/readme.txt": "étiquettes\n".encode(),
    "datasets/v10/not-this.txt": b"a sibling prefix that only shares characters",
    "datasets/readme.md": b"above the prefix",
    "outside.txt": b"elsewhere in the bucket",
}
UNDER_PREFIX = {
    key.removeprefix("datasets/v1/"): value
    for key, value in OBJECTS.items()
    if key.startswith("datasets/v1/")
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Server]:
    with S3Server(tmp_path_factory.mktemp("s3"), public_buckets=(PUBLIC,)) as running:
        client = running.client()
        client.make_bucket(PUBLIC)
        client.put_object(PUBLIC, "shared/hello.txt", io.BytesIO(b"hello"), 5)
        yield running


@pytest.fixture
def bucket(server: S3Server) -> str:
    """A new private bucket holding OBJECTS."""
    name = f"test-{uuid.uuid4().hex[:12]}"
    client = server.client()
    client.make_bucket(name)
    for key, value in OBJECTS.items():
        client.put_object(name, key, io.BytesIO(value), len(value))
    return name


def entry(server: S3Server, bucket: str, **fields: str) -> S3:
    """An s3 storage entry as a workload would carry it, with the project's secret by default."""
    wire = {"name": "data", "bucket": bucket, "path": "/data", "url": server.url}
    wire.setdefault("accessKeySecret", "s3-keys")
    wire.update(fields)
    return S3.model_validate({key: value for key, value in wire.items() if value})


def files_under(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in root.rglob("*")
        if path.is_file()
    }


def read_back(server: S3Server, bucket: str, key: str) -> bytes:
    response = server.client().get_object(bucket, key)
    try:
        return response.read()
    finally:
        response.close()
        response.release_conn()


def test_download_brings_exactly_the_objects_under_the_prefix(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    assert (source.bucket, source.prefix) == (bucket, "datasets/v1/")

    assert download(source, tmp_path / "volume") == len(UNDER_PREFIX)

    assert files_under(tmp_path / "volume") == UNDER_PREFIX
    listed = {
        item.object_name: item
        for item in server.client().list_objects(bucket, prefix="datasets/v1/", recursive=True)
    }
    weights = tmp_path / "volume" / "nested" / "deep" / "weights.bin"
    modified = listed["datasets/v1/nested/deep/weights.bin"].last_modified
    assert modified is not None
    assert weights.stat().st_mtime_ns == int(modified.timestamp() * 1_000_000) * 1_000


def test_download_never_writes_through_a_symbolic_link_left_in_the_directory(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    elsewhere, volume = tmp_path / "elsewhere", tmp_path / "volume"
    elsewhere.mkdir()
    volume.mkdir()
    (volume / "nested").symlink_to(elsewhere)

    with pytest.raises(VolumeError, match="passes through a symbolic link"):
        download(source, volume)

    assert not any(elsewhere.iterdir())


def test_a_bucket_without_prefix_is_downloaded_whole(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, bucket), SECRETS)

    assert download(source, tmp_path) == len(OBJECTS)

    assert files_under(tmp_path) == OBJECTS


def test_upload_puts_back_what_the_pod_changed_and_added(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    volume = tmp_path / "volume"
    download(source, volume)
    untouched = {
        item.object_name: item.etag
        for item in server.client().list_objects(bucket, prefix="datasets/v1/", recursive=True)
    }
    # What a pod does: change a file, add a nested one, delete one, link to host files and
    # leave a named pipe behind.
    (volume / "train.csv").write_bytes(b"a,b\n3,4\n")
    (volume / "checkpoints" / "step-1").mkdir(parents=True)
    (volume / "checkpoints" / "step-1" / "model.pt").write_bytes(b"\x00weights")
    (volume / "labels" / "readme.txt").unlink()
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text("never leaves this machine")
    (volume / "leak.txt").symlink_to(host_file)
    (volume / "leaks").symlink_to(tmp_path)
    os.mkfifo(volume / "pipe")

    assert upload(source, volume) == 2

    assert read_back(server, bucket, "datasets/v1/train.csv") == b"a,b\n3,4\n"
    assert read_back(server, bucket, "datasets/v1/checkpoints/step-1/model.pt") == b"\x00weights"
    after = {
        item.object_name: item.etag for item in server.client().list_objects(bucket, recursive=True)
    }
    assert "datasets/v1/labels/readme.txt" in after, "a deletion does not propagate"
    assert not any("leak" in key for key in after), "a symbolic link is never followed"
    assert "datasets/v1/pipe" not in after, "only regular files are uploaded"
    weights = "datasets/v1/nested/deep/weights.bin"
    assert after[weights] == untouched[weights], "an untouched file is not uploaded again"
    assert read_back(server, bucket, "outside.txt") == OBJECTS["outside.txt"]


def test_a_second_upload_without_changes_uploads_nothing(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    download(source, tmp_path)
    (tmp_path / "new.txt").write_bytes(b"new")
    (tmp_path / "train.csv").touch()  # newer, but the same content

    assert upload(source, tmp_path) == 1
    assert upload(source, tmp_path) == 0


def test_a_large_file_uploaded_in_parts_is_uploaded_once(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    download(source, tmp_path)
    large = os.urandom(1024) * (6 * 1024)  # 6 MiB: a multipart upload, its ETag no MD5
    (tmp_path / "large.bin").write_bytes(large)

    assert upload(source, tmp_path) == 1
    assert upload(source, tmp_path) == 0

    etag = server.client().stat_object(bucket, "datasets/v1/large.bin").etag
    assert etag is not None
    assert "-" in etag, "the file was uploaded in parts"
    assert read_back(server, bucket, "datasets/v1/large.bin") == large


def test_upload_keeps_an_object_replaced_in_the_bucket_since_the_download(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    download(source, tmp_path)
    server.client().put_object(bucket, "datasets/v1/train.csv", io.BytesIO(b"theirs"), 6)

    assert upload(source, tmp_path) == 0

    assert read_back(server, bucket, "datasets/v1/train.csv") == b"theirs"


def test_wrong_keys_fail_with_the_error_code_and_never_the_secret(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    wrong_secret = "wrong-secret-do-not-show-1234"
    wrong = ProjectSecrets(
        secrets={"s3-keys": {"AccessKeyId": ACCESS_KEY, "SecretKey": wrong_secret}}
    )
    source = source_of(entry(server, f"{bucket}/datasets/v1"), wrong)

    with pytest.raises(VolumeError) as raised:
        download(source, tmp_path)

    message = str(raised.value)
    assert "SignatureDoesNotMatch" in message
    assert bucket in message
    assert server.url in message
    assert wrong_secret not in message
    assert wrong_secret not in repr(source)
    assert not any(tmp_path.iterdir())


def test_an_unknown_access_key_fails_naming_the_code(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    unknown = ProjectSecrets(secrets={"s3-keys": {"AccessKeyId": "nobody", "SecretKey": "x" * 20}})

    with pytest.raises(VolumeError, match="InvalidAccessKeyId"):
        download(source_of(entry(server, bucket), unknown), tmp_path)


def test_a_missing_bucket_fails_naming_it(server: S3Server, tmp_path: Path) -> None:
    source = source_of(entry(server, "no-such-bucket-here/some/prefix"), SECRETS)

    with pytest.raises(VolumeError) as raised:
        download(source, tmp_path / "volume")
    message = str(raised.value)
    assert "'no-such-bucket-here'" in message
    assert "NoSuchBucket" in message
    assert SECRET_KEY not in message

    (tmp_path / "volume").mkdir(exist_ok=True)
    (tmp_path / "volume" / "out.txt").write_text("x")
    with pytest.raises(VolumeError, match=r"no-such-bucket-here.*NoSuchBucket"):
        upload(source, tmp_path / "volume")


def test_no_secret_named_means_anonymous_access(server: S3Server, tmp_path: Path) -> None:
    source = source_of(entry(server, f"{PUBLIC}/shared", accessKeySecret=""), ProjectSecrets())
    assert source.anonymous

    assert download(source, tmp_path) == 1
    assert (tmp_path / "hello.txt").read_bytes() == b"hello"

    (tmp_path / "more.txt").write_text("anonymous writes are refused by this server")
    with pytest.raises(VolumeError, match=rf"upload to s3 bucket '{PUBLIC}'.*AccessDenied"):
        upload(source, tmp_path)


def test_anonymous_access_to_a_private_bucket_is_refused(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, bucket, accessKeySecret=""), ProjectSecrets())

    with pytest.raises(VolumeError, match=rf"download from s3 bucket '{bucket}'.*AccessDenied"):
        download(source, tmp_path)


def test_an_unreachable_endpoint_fails_naming_it(tmp_path: Path) -> None:
    with ServerOf({}) as url:
        pass  # a port that was just closed: nothing listens there now
    source = S3Source(url=url, bucket="data")

    with pytest.raises(VolumeError) as raised:
        download(source, tmp_path)

    assert f"s3 bucket 'data' at {url}" in str(raised.value)
    assert "refused" in str(raised.value).lower()


def test_a_key_that_would_leave_the_directory_is_refused_before_anything_is_written(
    tmp_path: Path,
) -> None:
    # Real servers and clients normalise such keys away; a hostile or broken one may not.
    listing = {"ds/ok.txt": b"ok", "ds/../../escape.txt": b"gotcha"}
    volume = tmp_path / "deep" / "volume"
    with ServerOf(listing) as url:
        source = S3Source(url=url, bucket="data", prefix="ds/")
        with pytest.raises(VolumeError, match=r"'ds/\.\./\.\./escape\.txt'"):
            download(source, volume)

    assert not (tmp_path / "escape.txt").exists()
    assert not volume.exists() or not any(volume.iterdir())


def test_the_module_never_leaves_temporary_files(
    server: S3Server, bucket: str, tmp_path: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    download(source, tmp_path)
    assert not [
        name for _, _, names in os.walk(tmp_path) for name in names if name.startswith(".s3-")
    ]


class ServerOf:
    """An anonymous S3 endpoint that lists exactly `objects` (key → content) in bucket `data`
    and serves them, whatever the keys are."""

    def __init__(self, objects: dict[str, bytes]) -> None:
        self.objects = objects

    def __enter__(self) -> str:
        objects = self.objects

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                path, _, query = self.path.partition("?")
                if path in {"/data", "/data/"} and "list-type=2" in query:
                    self._answer(_listing(objects), "application/xml")
                elif path.removeprefix("/data/") in objects:
                    self._answer(objects[path.removeprefix("/data/")], "text/plain")
                else:
                    self.send_error(404)

            def _answer(self, body: bytes, content_type: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __exit__(self, *_: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def _listing(objects: dict[str, bytes]) -> bytes:
    contents = "".join(
        f"<Contents><Key>{key}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified>"
        f"<ETag>&quot;x&quot;</ETag><Size>{len(value)}</Size></Contents>"
        for key, value in objects.items()
    )
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<Name>data</Name><Prefix>ds/</Prefix><KeyCount>{len(objects)}</KeyCount>"
        f"<MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>{contents}</ListBucketResult>"
    ).encode()


# --- mounted with s3fs ----------------------------------------------------------------------


@pytest.fixture
def s3fs() -> str:
    found = s3_mount.available()
    assert found is not None, "s3fs and /dev/fuse are installed by scripts/install, as root"
    return found


@pytest.fixture
def mounted(tmp_path: Path) -> Iterator[Path]:
    target = tmp_path / "mounted"
    yield target
    if target.is_mount():
        s3_mount.unmount(target)


def test_a_mount_shows_the_prefix_live_and_writes_reach_the_bucket_at_once(
    server: S3Server, bucket: str, tmp_path: Path, s3fs: str, mounted: Path
) -> None:
    source = source_of(entry(server, f"{bucket}/datasets/v1"), SECRETS)
    work = tmp_path / "work"
    s3_mount.mount(s3fs, source, mounted, owner=None, work_dir=work)
    assert mounted.is_mount()
    assert files_under(mounted) == UNDER_PREFIX
    assert list(work.iterdir()) == [work / "mounted.s3fs.log"]  # the password file is gone
    (mounted / "written.txt").write_bytes(b"at once")
    assert read_back(server, bucket, "datasets/v1/written.txt") == b"at once"
    server.client().put_object(bucket, "datasets/v1/late.txt", io.BytesIO(b"late"), 4)
    assert (mounted / "late.txt").read_bytes() == b"late"
    s3_mount.unmount(mounted)
    assert not mounted.is_mount()


def test_a_mount_that_cannot_be_made_says_why_in_s3fs_words(
    server: S3Server, bucket: str, tmp_path: Path, s3fs: str, mounted: Path
) -> None:
    wrong = {"AccessKeyId": ACCESS_KEY, "SecretKey": "wrong"}
    source = source_of(entry(server, bucket), ProjectSecrets(secrets={"s3-keys": wrong}))
    with pytest.raises(VolumeError) as raised:
        s3_mount.mount(s3fs, source, mounted, owner=None, work_dir=tmp_path / "work")
    message = str(raised.value)
    assert message.startswith(f"cannot mount s3 bucket {bucket!r} at {server.url}: ")
    assert message.endswith(f"invalid credentials(host={server.url}) - result of checking service.")
    assert "wrong" not in message
    assert not mounted.is_mount()
