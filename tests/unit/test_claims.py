"""The claims store (runtimes/local/volumes/claims.py) on a temporary directory: creating a claim,
listing claims with their usage (as `du` counts it) and whether they are over their size, the
claims the local runtime makes for workloads listed alike and its ephemeral ones never,
deleting, and the names that are refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from lockstep.domain.claims import NAME_RULE, Claim, check_claim, readable
from lockstep.domain.errors import Conflict, InvalidRequest, Violation
from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.local.sandbox.asked import VolumeAsk, VolumeKind
from lockstep.runtimes.local.volumes.claims import Claims, disk_usage
from lockstep.runtimes.local.volumes.prepare import Places, prepare

NOW = datetime(2025, 3, 4, 5, 6, 7, 123000, tzinfo=UTC)
MiB = 1024 * 1024


@pytest.fixture
def claims(tmp_path: Path) -> Claims:
    return Claims(tmp_path / "claims", clock=lambda: NOW)


def fill(path: Path, size: int) -> None:
    """A file of `size` bytes that takes its room on disk (not sparse)."""
    path.write_bytes(os.urandom(size))


def made_by_the_runtime(
    claims: Claims, name: str, *, size_bytes: int | None, ephemeral: bool
) -> Path:
    """A claim the local runtime made for a workload's pod (`existingPvc: false`)."""
    base = claims.claims_dir.parent
    places = Places(
        pod_dir=base / "pod",
        workload_dir=base / "workload-1",
        claims_dir=claims.claims_dir,
        memory_dir=base / "memory",
        project_id="1",
        data_volumes={},
    )
    ask = VolumeAsk(
        VolumeKind.PVC, 0, "/data", source=name, create=True, ephemeral=ephemeral,
        size_bytes=size_bytes,
    )  # fmt: skip
    prepare([ask], places, values=ProjectSecrets(), owner=None)
    return places.claim(ask)


def test_a_new_claim_is_an_empty_directory_with_its_record_beside_it(claims: Claims) -> None:
    created = claims.create("1", "data", size_bytes=10 * 2**30)
    assert created == Claim("data", "1", 10 * 2**30, used_bytes=0, created_at=NOW)
    assert not created.over_size
    directory = claims.claims_dir / "1" / "data"
    assert directory.is_dir() and list(directory.iterdir()) == []
    record = json.loads((claims.claims_dir / "1" / "data.claim.json").read_text())
    assert record == {
        "size": 10 * 2**30,
        "ephemeral": False,
        "createdAt": "2025-03-04T05:06:07.123Z",
    }
    assert claims.get("1", "data") == created
    assert claims.list("1") == [created]
    assert claims.list("2") == []


def test_a_claim_without_a_size_is_never_over_it(claims: Claims) -> None:
    claims.create("1", "open", size_bytes=None)
    fill(claims.claims_dir / "1" / "open" / "big", MiB)
    found = claims.get("1", "open")
    assert found is not None and found.size_bytes is None
    assert found.used_bytes >= MiB and not found.over_size


def test_usage_is_measured_when_listed_and_over_size_is_said(claims: Claims) -> None:
    claims.create("1", "small", size_bytes=64 * 1024)
    claims.create("1", "large", size_bytes=10 * MiB)
    assert [(c.name, c.used_bytes, c.over_size) for c in claims.list("1")] == [
        ("large", 0, False),
        ("small", 0, False),
    ]
    for name in ("small", "large"):
        nested = claims.claims_dir / "1" / name / "nested"
        nested.mkdir()
        fill(nested / "weights.bin", MiB)
    large, small = claims.list("1")
    assert small.used_bytes == large.used_bytes >= MiB
    assert (small.over_size, large.over_size) == (True, False)


def test_usage_is_what_du_counts_under_the_directory(tmp_path: Path) -> None:
    root = tmp_path / "claim"
    (root / "a" / "b").mkdir(parents=True)
    fill(root / "a" / "one", 100_000)
    fill(root / "a" / "b" / "two", 3 * MiB)
    os.link(root / "a" / "one", root / "again")  # a second link: counted once
    outside = tmp_path / "outside"
    fill(outside, 5 * MiB)
    (root / "link").symlink_to(outside)  # not followed
    (root / "sparse").write_bytes(b"")
    os.truncate(root / "sparse", 100 * MiB)  # takes (almost) no blocks
    used = disk_usage(root)
    assert 3 * MiB + 100_000 <= used < 4 * MiB
    if shutil.which("du"):
        du = subprocess.run(
            ["du", "-s", "--block-size=1", str(root)], capture_output=True, text=True, check=True
        )
        assert used == int(du.stdout.split()[0]) - root.stat().st_blocks * 512


def test_a_name_taken_is_a_conflict_and_keeps_the_first(claims: Claims) -> None:
    claims.create("1", "data", size_bytes=1024)
    fill(claims.claims_dir / "1" / "data" / "kept", 10)
    with pytest.raises(Conflict, match="project 1 already has a claim named 'data'"):
        claims.create("1", "data", size_bytes=None)
    found = claims.get("1", "data")
    assert found is not None and found.size_bytes == 1024
    assert (claims.claims_dir / "1" / "data" / "kept").exists()
    assert claims.create("2", "data", size_bytes=None).project_id == "2"


@pytest.mark.parametrize(
    "name",
    ["", "Data", "my_data", "-data", "data-", "da ta", "x" * 64, "..", ".hidden", "a/b", "../1"],
)
def test_names_that_are_not_dns_labels_are_refused_naming_the_rule(
    claims: Claims, name: str
) -> None:
    with pytest.raises(InvalidRequest) as raised:
        claims.create("1", name, size_bytes=None)
    assert raised.value.violations == [Violation("name", NAME_RULE)]
    assert "must be a DNS-1123 label" in str(raised.value)
    assert not claims.claims_dir.exists() or list(claims.claims_dir.rglob("*")) == []


def test_a_size_below_one_byte_is_refused_with_the_name_checked_too() -> None:
    assert check_claim("ok", 1) == []
    assert check_claim("Bad", 0) == [
        Violation("name", NAME_RULE),
        Violation("size", "must be at least 1 byte"),
    ]


def test_claims_the_runtime_made_for_workloads_are_listed_alike(claims: Claims) -> None:
    made = made_by_the_runtime(claims, "shared", size_bytes=2048, ephemeral=False)
    assert made == claims.claims_dir / "1" / "shared"
    fill(made / "checkpoint", 64 * 1024)
    claims.create("1", "mine", size_bytes=None)
    shared, mine = sorted(claims.list("1"), key=lambda c: c.name != "shared")
    assert (shared.name, shared.size_bytes, shared.over_size) == ("shared", 2048, True)
    record = claims.claims_dir / "1" / "shared.claim.json"
    assert shared.created_at == datetime.fromtimestamp(record.stat().st_mtime, UTC)
    assert mine.name == "mine"
    assert claims.delete("1", "shared")
    assert [c.name for c in claims.list("1")] == ["mine"]


def test_ephemeral_claims_are_the_workloads_own_and_never_listed(claims: Claims) -> None:
    scratch = made_by_the_runtime(claims, "scratch", size_bytes=None, ephemeral=True)
    assert scratch == claims.claims_dir / ".ephemeral" / "workload-1" / "scratch"
    assert scratch.is_dir()
    # Even one whose record says it is ephemeral inside a project's directory.
    (claims.claims_dir / "1" / "odd").mkdir(parents=True)
    (claims.claims_dir / "1" / "odd.claim.json").write_text('{"size": null, "ephemeral": true}')
    # And hidden directories (a claim being deleted).
    (claims.claims_dir / "1" / ".deleting-old-1234").mkdir()
    assert claims.list("1") == []
    assert claims.get("1", "odd") is None and claims.get("1", ".deleting-old-1234") is None
    assert not claims.delete("1", "odd")
    with pytest.raises(ValueError, match="cannot be a project's id"):
        claims.list(".ephemeral")
    assert scratch.is_dir()


def test_delete_removes_the_directory_its_files_and_its_record(claims: Claims) -> None:
    claims.create("1", "data", size_bytes=None)
    (claims.claims_dir / "1" / "data" / "sub").mkdir()
    fill(claims.claims_dir / "1" / "data" / "sub" / "file", 1000)
    claims.create("1", "other", size_bytes=None)
    assert claims.delete("1", "data")
    assert sorted(p.name for p in (claims.claims_dir / "1").iterdir()) == [
        "other",
        "other.claim.json",
    ]
    assert claims.get("1", "data") is None
    assert not claims.delete("1", "data")
    assert claims.create("1", "data", size_bytes=5).size_bytes == 5


def test_names_outside_the_project_are_never_reached(claims: Claims) -> None:
    claims.create("1", "data", size_bytes=None)
    claims.create("2", "theirs", size_bytes=None)
    for name in ("..", "../2/theirs", "/", ".", "data.claim.json", "missing"):
        assert claims.get("1", name) is None
        assert not claims.delete("1", name)
    assert claims.get("2", "theirs") is not None and claims.get("1", "data") is not None


def test_a_record_that_cannot_be_read_leaves_the_size_unknown(claims: Claims) -> None:
    claims.create("1", "data", size_bytes=100)
    (claims.claims_dir / "1" / "data.claim.json").write_text("{not json")
    found = claims.get("1", "data")
    assert found is not None and found.size_bytes is None


@pytest.mark.parametrize(
    ("count", "text"),
    [(0, "0"), (512, "512"), (1024, "1Ki"), (1536, "1.5Ki"), (12 * 2**30, "12Gi"), (2**60, "1Ei")],
)
def test_byte_counts_read_for_people(count: int, text: str) -> None:
    assert readable(count) == text
