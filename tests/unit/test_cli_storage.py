"""The storage flags of `submit` (cli/storage.py), parsed as the Run:ai CLI writes them."""

from __future__ import annotations

import pytest

from lockstep.cli.requests import BadFlag
from lockstep.cli.storage import storage
from lockstep.schemas.storage import Storage


def test_each_kind() -> None:
    result = storage(
        host_paths=[
            "path=/raw,mount=/data,mount-propagation=HostToContainer",
            "path=/a,mount=/b,readwrite",
        ],
        existing_pvcs=["claimname=shared,path=/shared,readonly"],
        new_pvcs=[
            "claimname=scratch,size=10G,path=/scratch,storageclass=fast,accessmode-rwm,ephemeral"
        ],
        git_syncs=[
            "source=https://example.com/repo.git,path=/code,branch=main,rev=abc123,secret=git-creds"
        ],
    )
    assert result == {
        "hostPath": [
            {
                "name": "host-path-0",
                "path": "/raw",
                "mountPath": "/data",
                "readOnly": True,
                "mountPropagation": "HostToContainer",
            },
            {"name": "host-path-1", "path": "/a", "mountPath": "/b", "readOnly": False},
        ],
        "pvc": [
            {
                "name": "shared",
                "claimName": "shared",
                "path": "/shared",
                "existingPvc": True,
                "readOnly": True,
            },
            {
                "name": "scratch",
                "claimName": "scratch",
                "path": "/scratch",
                "existingPvc": False,
                "readOnly": False,
                "ephemeral": True,
                "claimInfo": {
                    "size": "10G",
                    "storageClass": "fast",
                    "accessModes": {"readWriteMany": True},
                },
            },
        ],
        "git": [
            {
                "name": "git-0",
                "repository": "https://example.com/repo.git",
                "path": "/code",
                "branch": "main",
                "revision": "abc123",
                "secretRef": {"name": "git-creds"},
            },
        ],
    }
    # what the flags make is what the server's schema accepts
    Storage.model_validate(result, strict=False)


def test_a_new_claim_is_read_write_once_by_default() -> None:
    (pvc,) = storage(new_pvcs=["claimname=c,size=1Gi,path=/c"])["pvc"]
    assert pvc["claimInfo"]["accessModes"] == {"readWriteOnce": True}


@pytest.mark.parametrize(
    ("kind", "text", "message"),
    [
        ("host_paths", "path=/raw", "--host-path needs mount="),
        ("host_paths", "path=/raw,mount=/m,colour=red", "--host-path: 'colour=red' is not one of"),
        ("existing_pvcs", "claimname=x", "--existing-pvc needs path="),
        ("new_pvcs", "claimname=x,path=/p", "--new-pvc needs size="),
        ("git_syncs", "path=/code", "--git-sync needs source="),
    ],
)
def test_bad_values_name_the_flag(kind: str, text: str, message: str) -> None:
    with pytest.raises(BadFlag, match=message):
        storage(**{kind: [text]})
