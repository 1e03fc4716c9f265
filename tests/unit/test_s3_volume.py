"""The pure parts of the s3 volume: the bucket and its prefix, the endpoint, where a key lands
under the volume (and which keys are refused), and the access keys read from the project's
secrets, which no message or repr ever shows."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.runtimes.local.volumes.s3 import (
    DEFAULT_URL,
    S3Credentials,
    S3Source,
    credentials_of,
    endpoint_of,
    relative_path,
    source_of,
    split_bucket,
)
from lockstep.schemas.storage import S3

KEY_ID = "AKIAEXAMPLEKEYID"
SECRET = "wJalrXUtnFEMI-example-secret"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("data", ("data", "")),
        ("data/", ("data", "")),
        ("data/sets/v2", ("data", "sets/v2/")),
        ("data/sets/v2/", ("data", "sets/v2/")),
        ("data//sets/", ("data", "sets/")),
    ],
)
def test_the_bucket_field_may_carry_a_prefix(value: str, expected: tuple[str, str]) -> None:
    assert split_bucket(value) == expected


def test_a_bucket_field_without_a_bucket_name_is_refused() -> None:
    with pytest.raises(VolumeError, match="does not start with a bucket name"):
        split_bucket("/sets/v2")


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://s3.amazonaws.com", ("s3.amazonaws.com", True)),
        ("http://127.0.0.1:9000/", ("127.0.0.1:9000", False)),
        ("minio.example:9000", ("minio.example:9000", True)),
        ("http://[::1]:9000", ("[::1]:9000", False)),
    ],
)
def test_the_endpoint_is_a_host_and_port_and_whether_tls(
    url: str, expected: tuple[str, bool]
) -> None:
    assert endpoint_of(url) == expected


@pytest.mark.parametrize(
    "url",
    ["ftp://files.example", "http://host.example/bucket", "http://host.example?x=1", "http://:9"],
)
def test_an_endpoint_that_is_not_a_scheme_host_and_port_is_refused(url: str) -> None:
    with pytest.raises(VolumeError, match="must"):
        endpoint_of(url)


def test_an_endpoint_port_out_of_range_is_refused() -> None:
    with pytest.raises(VolumeError, match="invalid port"):
        endpoint_of("http://host.example:99999")


def test_an_endpoint_carrying_credentials_is_refused_without_echoing_them() -> None:
    with pytest.raises(VolumeError) as raised:
        endpoint_of(f"https://{KEY_ID}:{SECRET}@s3.example")
    assert "accessKeySecret" in str(raised.value)
    assert SECRET not in str(raised.value)


@pytest.mark.parametrize(
    ("key", "prefix", "expected"),
    [
        ("ds/train.csv", "ds/", "train.csv"),
        ("ds/a/b/c.bin", "ds/", "a/b/c.bin"),
        ("top.txt", "", "top.txt"),
        ("ds/..hidden/x", "ds/", "..hidden/x"),
        ("ds/a b/ü.txt", "ds/", "a b/ü.txt"),
    ],
)
def test_a_key_lands_at_its_path_relative_to_the_prefix(
    key: str, prefix: str, expected: str
) -> None:
    assert relative_path(key, prefix) == PurePosixPath(expected)


@pytest.mark.parametrize(
    "key",
    [
        "ds/../escape.txt",
        "ds/a/../../escape.txt",
        "ds/..",
        "ds//absolute",
        "ds/./x",
        "ds/a//b",
        "ds/",
        "ds/nul\x00byte",
    ],
)
def test_a_key_that_could_leave_the_directory_or_collide_is_refused(key: str) -> None:
    with pytest.raises(VolumeError, match="cannot be a file under the volume"):
        relative_path(key, "ds/")


def test_a_key_outside_the_prefix_is_refused() -> None:
    with pytest.raises(VolumeError, match="not under the prefix"):
        relative_path("other/x", "ds/")


def secrets(**values: str) -> ProjectSecrets:
    return ProjectSecrets(secrets={"s3-keys": values, "unrelated": {"AccessKeyId": "no"}})


def test_no_secret_named_means_anonymous() -> None:
    assert credentials_of(S3(bucket="data"), secrets(AccessKeyId=KEY_ID, SecretKey=SECRET)) is None
    source = source_of(S3(bucket="data"), ProjectSecrets())
    assert source.anonymous
    assert (source.access_key_id, source.secret_access_key) == (None, None)


def test_the_keys_default_to_access_key_id_and_secret_key() -> None:
    entry = S3(bucket="data", access_key_secret="s3-keys")

    found = credentials_of(entry, secrets(AccessKeyId=KEY_ID, SecretKey=SECRET))

    assert found == S3Credentials(access_key_id=KEY_ID, secret_access_key=SECRET)


def test_the_entry_may_name_other_keys() -> None:
    entry = S3(
        bucket="data",
        access_key_secret="s3-keys",
        secret_key_of_access_key_id="id",
        secret_key_of_secret_key="key",
    )

    found = credentials_of(entry, secrets(id=KEY_ID, key=SECRET, AccessKeyId="other"))

    assert found == S3Credentials(access_key_id=KEY_ID, secret_access_key=SECRET)


def test_a_missing_secret_is_named() -> None:
    entry = S3(bucket="data", access_key_secret="absent")

    with pytest.raises(VolumeError, match="the secret 'absent' named by accessKeySecret"):
        credentials_of(entry, secrets(AccessKeyId=KEY_ID, SecretKey=SECRET))


def test_a_missing_key_is_named_and_no_value_shown() -> None:
    entry = S3(bucket="data", access_key_secret="s3-keys")

    with pytest.raises(VolumeError) as raised:
        credentials_of(entry, secrets(AccessKeyId=KEY_ID, SecretKeyTypo=SECRET))

    message = str(raised.value)
    assert "'s3-keys' has no key 'SecretKey'" in message
    assert KEY_ID not in message
    assert SECRET not in message


def test_both_missing_keys_are_named() -> None:
    entry = S3(bucket="data", access_key_secret="s3-keys")

    with pytest.raises(VolumeError, match="has no keys 'AccessKeyId' and 'SecretKey'"):
        credentials_of(entry, secrets(other="x"))


@pytest.mark.parametrize("bad", ["", f"{SECRET}\n", f"{SECRET}\r\nX-Injected: 1"])
def test_an_empty_or_multi_line_value_is_refused_without_showing_it(bad: str) -> None:
    entry = S3(bucket="data", access_key_secret="s3-keys")

    with pytest.raises(
        VolumeError, match="the value of key 'SecretKey' of secret 's3-keys'"
    ) as raised:
        credentials_of(entry, secrets(AccessKeyId=KEY_ID, SecretKey=bad))

    assert SECRET not in str(raised.value)


def test_the_source_of_an_entry() -> None:
    entry = S3(bucket="data/sets/v2", access_key_secret="s3-keys", path="/data")

    source = source_of(entry, secrets(AccessKeyId=KEY_ID, SecretKey=SECRET))

    assert source == S3Source(
        url=DEFAULT_URL,
        bucket="data",
        prefix="sets/v2/",
        access_key_id=KEY_ID,
        secret_access_key=SECRET,
    )
    assert not source.anonymous


def test_an_entry_without_a_bucket_is_refused() -> None:
    with pytest.raises(VolumeError, match="needs a bucket"):
        source_of(S3(path="/data", url="http://s3.example"), ProjectSecrets())


def test_no_repr_shows_the_secret_key() -> None:
    source = S3Source(url=DEFAULT_URL, bucket="b", access_key_id=KEY_ID, secret_access_key=SECRET)
    credentials = S3Credentials(access_key_id=KEY_ID, secret_access_key=SECRET)

    assert SECRET not in repr(source)
    assert SECRET not in repr(credentials)
    assert KEY_ID in repr(source)
