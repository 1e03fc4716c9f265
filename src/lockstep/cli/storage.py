"""The storage flags of `submit`, in the Run:ai CLI's form — comma-separated `key=value` fields
and bare words — turned into the request's `spec.storage`:

    --host-path    path=/raw,mount=/data[,mount-propagation=HostToContainer][,readwrite]
    --existing-pvc claimname=NAME,path=/data[,readonly]
    --new-pvc      claimname=NAME,size=10G,path=/data[,storageclass=CLASS]
                   [,accessmode-rwo|accessmode-rom|accessmode-rwm][,readonly][,ephemeral]
    --git-sync     source=URL,path=/code[,branch=B][,rev=R][,secret=NAME]

A host path is read-only unless `readwrite` is given, as in the Run:ai CLI.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lockstep.cli.requests import BadFlag

ACCESS_MODES = {
    "accessmode-rwo": "readWriteOnce",
    "accessmode-rom": "readOnlyMany",
    "accessmode-rwm": "readWriteMany",
}


def fields(
    text: str, flag: str, *, keys: set[str], words: set[str]
) -> tuple[dict[str, str], set[str]]:
    """The `key=value` fields and the bare words of one flag's value; an unknown one is an
    error naming the flag."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, equals, value = part.partition("=")
        if equals and key in keys and value:
            values[key] = value
        elif not equals and part in words:
            flags.add(part)
        else:
            known = ", ".join(sorted({*(f"{k}=…" for k in keys), *words}))
            raise BadFlag(f"{flag}: {part!r} is not one of {known}")
    return values, flags


def _require(values: dict[str, str], flag: str, *names: str) -> None:
    missing = [name for name in names if name not in values]
    if missing:
        raise BadFlag(f"{flag} needs {', '.join(f'{name}=' for name in missing)}")


def storage(
    *,
    host_paths: Sequence[str] = (),
    existing_pvcs: Sequence[str] = (),
    new_pvcs: Sequence[str] = (),
    git_syncs: Sequence[str] = (),
) -> dict[str, list[dict[str, Any]]]:
    result: dict[str, list[dict[str, Any]]] = {}
    for i, text in enumerate(host_paths):
        values, words = fields(
            text, "--host-path", keys={"path", "mount", "mount-propagation"}, words={"readwrite"}
        )
        _require(values, "--host-path", "path", "mount")
        volume: dict[str, Any] = {
            "name": f"host-path-{i}",
            "path": values["path"],
            "mountPath": values["mount"],
            "readOnly": "readwrite" not in words,
        }
        if "mount-propagation" in values:
            volume["mountPropagation"] = values["mount-propagation"]
        result.setdefault("hostPath", []).append(volume)
    for text in existing_pvcs:
        values, words = fields(
            text, "--existing-pvc", keys={"claimname", "path"}, words={"readonly"}
        )
        _require(values, "--existing-pvc", "claimname", "path")
        result.setdefault("pvc", []).append(
            {
                "name": values["claimname"],
                "claimName": values["claimname"],
                "path": values["path"],
                "existingPvc": True,
                "readOnly": "readonly" in words,
            }
        )
    for text in new_pvcs:
        values, words = fields(
            text,
            "--new-pvc",
            keys={"claimname", "size", "path", "storageclass"},
            words={"readonly", "ephemeral", *ACCESS_MODES},
        )
        _require(values, "--new-pvc", "claimname", "size", "path")
        claim: dict[str, Any] = {"size": values["size"]}
        if "storageclass" in values:
            claim["storageClass"] = values["storageclass"]
        modes = {ACCESS_MODES[w]: True for w in words if w in ACCESS_MODES}
        claim["accessModes"] = modes or {"readWriteOnce": True}
        result.setdefault("pvc", []).append(
            {
                "name": values["claimname"],
                "claimName": values["claimname"],
                "path": values["path"],
                "existingPvc": False,
                "readOnly": "readonly" in words,
                "ephemeral": "ephemeral" in words,
                "claimInfo": claim,
            }
        )
    for i, text in enumerate(git_syncs):
        values, _ = fields(
            text, "--git-sync", keys={"source", "path", "branch", "rev", "secret"}, words=set()
        )
        _require(values, "--git-sync", "source", "path")
        git: dict[str, Any] = {
            "name": f"git-{i}",
            "repository": values["source"],
            "path": values["path"],
        }
        if "branch" in values:
            git["branch"] = values["branch"]
        if "rev" in values:
            git["revision"] = values["rev"]
        if "secret" in values:
            git["secretRef"] = {"name": values["secret"]}
        result.setdefault("git", []).append(git)
    return result
