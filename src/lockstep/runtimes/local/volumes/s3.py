"""The s3 volume, synchronised: a bucket prefix copied into a directory before a pod starts
and, for a writable mount, what the pod wrote copied back after it ends.

Called by the local runtime when it prepares a pod's `storage.s3` entries on a machine where
no FUSE mount of the bucket is available: `source_of` (or `credentials_of`) turns an entry and
the project's secrets into an `S3Source`, `download` fills the directory that is then bound at
the entry's `path`, and `upload` copies the pod's changes back once the pod has ended.

- The entry's `url` is the endpoint (`https://s3.amazonaws.com` when it names none): a scheme,
  a host and a port, spoken to in path style by the MinIO client, so any S3-compatible server
  works. `bucket` may carry a key prefix after a `/` (`my-bucket/datasets/v2`): the API
  documents only a bucket name, and a prefix is an extension (as k8s-csi-s3's `bucket/prefix`).
- Credentials come from the secret `accessKeySecret` names, under the keys
  `secretKeyOfAccessKeyId` (default `AccessKeyId`) and `secretKeyOfSecretKey` (default
  `SecretKey`). No secret named: the requests go unsigned (anonymous access, which the server
  may refuse). A secret or key that does not exist is an error naming them, never a value.
- `download` writes every object under the prefix to the same relative path under the
  directory, sets its modification time to the object's, and refuses (the whole volume, not
  just the object) a key that could not be a file there: one with an empty, `.` or `..`
  component. Keys ending in `/` are directory markers and become directories.
- `upload` walks the directory (regular files only: a symbolic link, to whatever it points,
  is never followed nor uploaded) and puts back a file when the bucket has no object at its
  key, or when the file is newer than the object (so the pod wrote it: `download` left it at
  the object's time) and its content differs (the object's ETag, when it is a plain MD5,
  tells; otherwise its size, else the file is taken as changed). The newer copy wins: an
  object that someone else replaced after the download is not overwritten by an untouched
  file. An uploaded file is then given its new object's time, so a second `upload` finds it
  in sync. Deletions do not propagate: a file the pod removed stays in the bucket, since deleting
  shared data because a local copy is gone is irreversible. Empty directories are not kept.
- Every failure raises `VolumeError` naming the bucket, the endpoint and S3's error code
  (or the network's reason); the secret key never appears in it.
"""

from __future__ import annotations

import errno
import hashlib
import mimetypes
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, BinaryIO
from urllib.parse import urlsplit

from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.schemas.storage import S3

if TYPE_CHECKING:
    from minio import Minio
    from minio.datatypes import Object

DEFAULT_URL = "https://s3.amazonaws.com"
"""The endpoint of an entry that names none (as the API documents: Amazon's S3)."""
DEFAULT_ACCESS_KEY_ID_KEY = "AccessKeyId"
"""The key of the access key id in the secret when the entry names none (as the API documents)."""
DEFAULT_SECRET_KEY_KEY = "SecretKey"  # noqa: S105 (the name of a secret's key)
"""The key of the secret access key in the secret when the entry names none."""

CONNECT_TIMEOUT_SECONDS = 10.0
READ_TIMEOUT_SECONDS = 300.0
RETRIES = 3
"""Per request: connection failures and 5xx answers are retried this often, with backoff."""
_CHUNK = 1024 * 1024
_MD5 = frozenset("0123456789abcdef")


@dataclass(frozen=True, slots=True)
class S3Credentials:
    """What an s3 entry's secret holds: an access key id and a secret access key."""

    access_key_id: str
    secret_access_key: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class S3Source:
    """A bucket prefix to synchronise: the endpoint, the bucket, the key prefix (empty, or
    ending in `/`) and the credentials (None for both: anonymous access)."""

    url: str
    bucket: str
    prefix: str = ""
    access_key_id: str | None = None
    secret_access_key: str | None = field(default=None, repr=False)

    @property
    def anonymous(self) -> bool:
        return self.access_key_id is None


# --- the entry and the project's secrets --------------------------------------------------------


def credentials_of(s3: S3, secrets: ProjectSecrets) -> S3Credentials | None:
    """The access keys an s3 entry names, read from the project's secrets; None when it names
    no secret (anonymous access). Raises VolumeError naming the secret and the keys that do
    not exist or are empty, never a value."""
    name = s3.access_key_secret
    if not name:
        return None
    id_key = s3.secret_key_of_access_key_id or DEFAULT_ACCESS_KEY_ID_KEY
    secret_key = s3.secret_key_of_secret_key or DEFAULT_SECRET_KEY_KEY
    bucket = s3.bucket or "?"
    if name not in secrets.secrets:
        raise VolumeError(
            f"cannot read s3 bucket {bucket!r}: the secret {name!r} named by accessKeySecret "
            "does not exist in the project"
        )
    values = {key: secrets.secret(name, key) for key in (id_key, secret_key)}
    missing = [key for key, value in values.items() if value is None]
    if missing:
        keys = " and ".join(repr(key) for key in missing)
        raise VolumeError(
            f"cannot read s3 bucket {bucket!r}: the secret {name!r} has no "
            f"{'keys' if len(missing) > 1 else 'key'} {keys} (the access key id is read from "
            f"key {id_key!r}, the secret key from key {secret_key!r})"
        )
    for key, value in values.items():
        if not value or not value.isprintable():
            raise VolumeError(
                f"cannot read s3 bucket {bucket!r}: the value of key {key!r} of secret "
                f"{name!r} is {'empty' if not value else 'not one line of printable text'}"
            )
    return S3Credentials(
        access_key_id=values[id_key] or "", secret_access_key=values[secret_key] or ""
    )


def source_of(s3: S3, secrets: ProjectSecrets) -> S3Source:
    """The `S3Source` of an s3 entry: its endpoint (the default when it names none), its bucket
    and prefix, and its credentials read from the project's secrets."""
    if not s3.bucket:
        raise VolumeError("an s3 storage entry needs a bucket")
    bucket, prefix = split_bucket(s3.bucket)
    credentials = credentials_of(s3, secrets)
    return S3Source(
        url=s3.url or DEFAULT_URL,
        bucket=bucket,
        prefix=prefix,
        access_key_id=credentials.access_key_id if credentials else None,
        secret_access_key=credentials.secret_access_key if credentials else None,
    )


def split_bucket(value: str) -> tuple[str, str]:
    """The bucket name and the key prefix of an entry's `bucket`: `data/sets/v2` is bucket
    `data` with prefix `sets/v2/`; `data` (or `data/`) has the empty prefix."""
    bucket, _, prefix = value.strip().partition("/")
    if not bucket:
        raise VolumeError(f"the s3 bucket {value!r} does not start with a bucket name")
    prefix = prefix.strip("/")
    return bucket, f"{prefix}/" if prefix else ""


def endpoint_of(url: str) -> tuple[str, bool]:
    """The `host[:port]` of an endpoint URL and whether it speaks TLS. A URL without a scheme
    is taken as https; one with a path, a query or credentials is refused."""
    parts = urlsplit(url if "://" in url else f"https://{url}")
    if parts.scheme not in {"http", "https"}:
        raise VolumeError(f"the s3 url {url!r} must use http or https")
    if parts.username is not None or parts.password is not None:
        raise VolumeError(
            "the s3 url must not carry credentials: name a secret with accessKeySecret instead"
        )
    if not parts.hostname or parts.path not in {"", "/"} or parts.query or parts.fragment:
        raise VolumeError(
            f"the s3 url {url!r} must be a scheme, a host and a port only "
            "(such as https://s3.amazonaws.com or http://minio.example:9000)"
        )
    try:
        _ = parts.port  # raises on a port that is not a number in range
    except ValueError as error:
        raise VolumeError(f"the s3 url {url!r} has an invalid port") from error
    return parts.netloc, parts.scheme == "https"


def relative_path(key: str, prefix: str) -> PurePosixPath:
    """Where the object `key` (which starts with `prefix`) lies under the volume's directory.
    Refuses a key that could not be a file there: one with an empty, `.` or `..` component
    (which could name a file outside the directory, or two keys the same file) or a NUL."""
    if not key.startswith(prefix):
        raise VolumeError(f"the s3 object key {key!r} is not under the prefix {prefix!r}")
    relative = key[len(prefix) :]
    parts = relative.split("/")
    if "\x00" in relative or any(part in {"", ".", ".."} for part in parts):
        raise VolumeError(
            f"the s3 object key {key!r} cannot be a file under the volume: a key with an empty, "
            "'.' or '..' component is refused"
        )
    return PurePosixPath(*parts)


# --- synchronising ------------------------------------------------------------------------------


def download(source: S3Source, into: Path) -> int:
    """Write every object under the source's prefix to the same relative path under `into`
    (created if need be), each file's modification time set to its object's. Returns the
    number of objects written (directory markers are made as directories and not counted).
    Every key is checked before anything is written: a refused key leaves `into` untouched.
    Files already in `into` that no object names are left as they are."""
    written = 0
    with _failures(source, "download from"), _client(source) as client:
        listed = client.list_objects(source.bucket, prefix=source.prefix, recursive=True)
        items = [item for item in listed if item.object_name not in {None, source.prefix}]
        try:
            places = [relative_path(item.object_name.rstrip("/"), source.prefix) for item in items]
        except VolumeError as error:
            raise VolumeError(
                f"cannot download from s3 bucket {source.bucket!r} at {source.url}: {error}"
            ) from error
        into.mkdir(parents=True, exist_ok=True)
        root = into.resolve()
        for item, place in zip(items, places, strict=True):
            path = _inside(root, root.joinpath(*place.parts), item.object_name, source)
            if item.is_dir:
                path.mkdir(parents=True, exist_ok=True)
            else:
                _fetch(client, source, item, path)
                written += 1
    return written


def upload(source: S3Source, from_dir: Path) -> int:
    """Put back under the source's prefix every regular file of `from_dir` that the bucket
    lacks, or that is newer than its object and differs from it (see the module's doc: the
    newer copy wins; deletions do not propagate). Returns the number of files uploaded."""
    if not from_dir.is_dir():
        raise VolumeError(f"cannot upload to s3 bucket {source.bucket!r}: {from_dir} is gone")
    uploaded = 0
    with _failures(source, "upload to"), _client(source) as client:
        objects = {
            item.object_name: item
            for item in client.list_objects(source.bucket, prefix=source.prefix, recursive=True)
            if item.object_name is not None and not item.is_dir
        }
        for relative, file, status in _regular_files(from_dir.resolve()):
            key = source.prefix + _key_of(relative, source)
            remote = objects.get(key)
            if remote is not None and not _changed(file, status, remote):
                continue
            file.seek(0)
            content_type = mimetypes.guess_type(relative.name)[0] or "application/octet-stream"
            client.put_object(source.bucket, key, file, status.st_size, content_type=content_type)
            # As after a download, the file now carries its object's time: in sync.
            modified = client.stat_object(source.bucket, key).last_modified
            if modified is not None:
                os.utime(file.fileno(), ns=(status.st_atime_ns, _nanoseconds(modified)))
            uploaded += 1
    return uploaded


def _fetch(client: Minio, source: S3Source, item: Object, target: Path) -> None:
    """The object `item` written to `target` whole (through a temporary file beside it) with
    the object's modification time."""
    key = item.object_name or ""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        descriptor, temporary = tempfile.mkstemp(dir=target.parent, prefix=".s3-")
    except OSError as error:
        raise _file_error(source, key, target, error) from error
    try:
        with os.fdopen(descriptor, "wb") as file:
            response = client.get_object(source.bucket, key)
            try:
                for chunk in response.stream(_CHUNK):
                    file.write(chunk)
            finally:
                response.close()
                response.release_conn()
        Path(temporary).chmod(0o644)
        Path(temporary).replace(target)
        if item.last_modified is not None:
            modified = _nanoseconds(item.last_modified)
            os.utime(target, ns=(modified, modified))
    except OSError as error:
        raise _file_error(source, key, target, error) from error
    finally:
        with suppress(FileNotFoundError):
            Path(temporary).unlink()


def _changed(file: BinaryIO, status: os.stat_result, remote: Object) -> bool:
    """Whether the open file is newer than the object `remote` and differs from it."""
    if remote.last_modified is not None and status.st_mtime_ns <= _nanoseconds(
        remote.last_modified
    ):
        return False
    if remote.size is not None and remote.size != status.st_size:
        return True
    etag = (remote.etag or "").lower()
    if len(etag) != 32 or not _MD5.issuperset(etag):
        return True  # a multipart or encrypted object's ETag is no MD5 of its content
    digest = hashlib.md5(usedforsecurity=False)
    while chunk := file.read(_CHUNK):
        digest.update(chunk)
    return digest.hexdigest() != etag


def _regular_files(root: Path) -> Iterator[tuple[PurePosixPath, BinaryIO, os.stat_result]]:
    """Every regular file under `root` (its path relative to `root`, the file open for reading
    and its status), in a stable order. Directories are walked and files opened relative to
    their directory's descriptor, without following a symbolic link anywhere: a link swapped in
    during the walk cannot lead out of `root`."""
    for directory, directories, files, directory_fd in os.fwalk(root, follow_symlinks=False):
        directories.sort()
        for name in sorted(files):
            try:
                descriptor = os.open(
                    name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=directory_fd
                )
            except OSError as error:
                if error.errno == errno.ELOOP:
                    continue  # a symbolic link
                raise
            with os.fdopen(descriptor, "rb") as file:
                status = os.fstat(descriptor)
                if stat.S_ISREG(status.st_mode):
                    relative = PurePosixPath(Path(directory, name).relative_to(root).as_posix())
                    yield relative, file, status


def _key_of(relative: PurePosixPath, source: S3Source) -> str:
    key = relative.as_posix()
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as error:
        raise VolumeError(
            f"cannot upload {key!r} to s3 bucket {source.bucket!r}: an S3 key must be UTF-8"
        ) from error
    return key


def _inside(root: Path, path: Path, key: str, source: S3Source) -> Path:
    """`path`, once its existing directories are resolved, if it is still under `root` (a
    symbolic link left in the directory could point elsewhere)."""
    parent = path.parent.resolve()
    if parent != root and not parent.is_relative_to(root):
        raise VolumeError(
            f"cannot download s3://{source.bucket}/{key}: its path under the volume passes "
            "through a symbolic link that leaves it"
        )
    return parent / path.name


def _nanoseconds(moment: datetime) -> int:
    whole = int(moment.timestamp())
    return whole * 1_000_000_000 + moment.microsecond * 1_000


def _file_error(source: S3Source, key: str, target: Path, error: OSError) -> VolumeError:
    return VolumeError(
        f"cannot download s3://{source.bucket}/{key} from {source.url} to {target}: "
        f"{error.strerror or error}"
    )


# --- the client and its failures ----------------------------------------------------------------


@contextmanager
def _client(source: S3Source) -> Iterator[Minio]:
    """A MinIO client for the source, with bounded timeouts and retries, closed afterwards.
    TLS is verified against the system's certificates (or `SSL_CERT_FILE`)."""
    import urllib3
    from minio import Minio

    endpoint, secure = endpoint_of(source.url)
    http = urllib3.PoolManager(
        timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_SECONDS, read=READ_TIMEOUT_SECONDS),
        maxsize=10,
        cert_reqs="CERT_REQUIRED",
        ca_certs=os.environ.get("SSL_CERT_FILE"),
        retries=urllib3.Retry(
            total=RETRIES, backoff_factor=0.2, status_forcelist=[500, 502, 503, 504]
        ),
    )
    try:
        yield Minio(
            endpoint,
            access_key=source.access_key_id,
            secret_key=source.secret_access_key,
            secure=secure,
            http_client=http,
        )
    finally:
        http.clear()


@contextmanager
def _failures(source: S3Source, action: str) -> Iterator[None]:
    """Turns what the client raises into a VolumeError naming the bucket, the endpoint and
    S3's error code, with the secret key (should anything echo it) replaced by `***`."""
    from minio.error import InvalidResponseError, MinioException, S3Error, ServerError
    from urllib3.exceptions import HTTPError, MaxRetryError

    where = f"s3 bucket {source.bucket!r}"
    if source.prefix:
        where += f" (prefix {source.prefix!r})"
    where += f" at {source.url}"
    try:
        yield
    except S3Error as error:
        reason = f"{error.code}" + (f" ({error.message})" if error.message else "")
        raise _redacted(source, f"cannot {action} {where}: {reason}") from error
    except ServerError as error:
        reason = f"the server answered HTTP {error.status_code}"
        raise _redacted(source, f"cannot {action} {where}: {reason}") from error
    except InvalidResponseError as error:
        reason = f"not an S3 answer: {str(error)[:200]}"
        raise _redacted(source, f"cannot {action} {where}: {reason}") from error
    except MaxRetryError as error:
        reason = str(error.reason) if error.reason is not None else str(error)
        raise _redacted(source, f"cannot {action} {where}: {reason}") from error
    except (MinioException, HTTPError, ValueError) as error:
        raise _redacted(source, f"cannot {action} {where}: {error}") from error
    except OSError as error:
        reason = f"{error.strerror or error}" + (f": {error.filename}" if error.filename else "")
        raise _redacted(source, f"cannot {action} {where}: {reason}") from error


def _redacted(source: S3Source, message: str) -> VolumeError:
    if source.secret_access_key:
        message = message.replace(source.secret_access_key, "***")
    return VolumeError(message)
