"""A pod's remote volumes (git, s3, NFS), made ready by the pod's own first process:

    python -m lockstep.runtimes.local.volumes.setup <set-up file> -- <the sandboxed command>

It reads what to prepare from the set-up file the runtime wrote in memory (0600, deleted as
soon as it is read: the credentials it holds then live only in this process), prepares the
volumes, runs the command, and once the command has ended writes the s3 volumes back and
unmounts NFS. A volume that cannot be prepared ends the pod with exit status 1 and the reason
(credentials redacted) as the last line of its log, after the problems the runtime found with
the pod's other volumes (so that every volume that cannot be made ready is named together).
It starts in the pod's process group, so a slow clone holds up neither lockstep nor the other
pods and is stopped with the pod; once the command runs, it leaves the pod's session (its memory
is not the pod's) and the pod's marker is what finds it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lockstep.domain.secrets import ProjectSecrets
from lockstep.runtimes.local.sandbox.asked import VolumeAsk
from lockstep.runtimes.local.sandbox.definition import Identity
from lockstep.runtimes.local.volumes import VolumeError
from lockstep.runtimes.local.volumes.prepare import Places, finish, prepare

SETUP_FILE = "setup.json"
VOLUME_FAILED = 1
NOT_READY = "could not make its volumes ready: "
"""How the pod's message begins when its volumes are not all ready."""


def setup_command(
    places: Places,
    volumes: Sequence[VolumeAsk],
    values: ProjectSecrets,
    argv: Sequence[str],
    *,
    owner: Identity | None,
    problems: Sequence[str] = (),
    termination_message: Path,
    pass_fds: Sequence[int] = (),
) -> list[str]:
    """`argv` behind the set-up of `volumes`, whose description (with the project's secrets
    they name) goes to a file in the pod's memory directory. `problems`: what is wrong with
    the pod's other volumes; with any, the set-up reports them with its own and `argv` never
    runs. Why the set-up failed goes to `termination_message` too, as the pod's own reason.
    `pass_fds`: descriptors the set-up hands on to `argv` (the seccomp filter bwrap reads)."""
    places.memory_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = places.memory_dir / SETUP_FILE
    content = {
        "places": {
            "podDir": str(places.pod_dir),
            "workloadDir": str(places.workload_dir),
            "claimsDir": str(places.claims_dir),
            "memoryDir": str(places.memory_dir),
            "projectId": places.project_id,
            "s3fs": places.s3fs,
        },
        "owner": None if owner is None else [owner.uid, owner.gid, list(owner.groups)],
        "volumes": [volume.to_json() for volume in volumes],
        "problems": list(problems),
        "terminationMessage": str(termination_message),
        "passFds": list(pass_fds),
        "secrets": {name: dict(values.secrets[name]) for name in _secrets_named(volumes, values)},
    }
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        json.dump(content, handle)
    return [sys.executable, "-m", "lockstep.runtimes.local.volumes.setup", str(path), "--", *argv]


def _secrets_named(volumes: Sequence[VolumeAsk], values: ProjectSecrets) -> list[str]:
    names: set[str] = set()
    for volume in volumes:
        if volume.git is not None:
            if volume.git.secret_ref is not None:
                names.add(volume.git.secret_ref.name)
            if volume.git.password_secret:
                names.add(volume.git.password_secret)
        if volume.s3 is not None and volume.s3.access_key_secret:
            names.add(volume.s3.access_key_secret)
    return sorted(name for name in names if name in values.secrets)


def main(arguments: list[str]) -> int:
    path, separator, *command = arguments
    if separator != "--" or not command:
        print("usage: setup <set-up file> -- <command>", file=sys.stderr)
        return 2
    content: dict[str, Any] = json.loads(Path(path).read_text())
    Path(path).unlink()
    places = Places(
        pod_dir=Path(content["places"]["podDir"]),
        workload_dir=Path(content["places"]["workloadDir"]),
        claims_dir=Path(content["places"]["claimsDir"]),
        memory_dir=Path(content["places"]["memoryDir"]),
        project_id=content["places"]["projectId"],
        data_volumes={},
        s3fs=content["places"].get("s3fs"),
    )
    owner = None
    if content["owner"] is not None:
        uid, gid, groups = content["owner"]
        owner = Identity(uid, gid, tuple(groups))
    volumes = [VolumeAsk.from_json(v) for v in content["volumes"]]
    values = ProjectSecrets(secrets=content["secrets"])
    problems = list(content.get("problems") or ())
    try:
        prepare(volumes, places, values=values, owner=owner)
    except VolumeError as error:
        problems.append(str(error))
    if problems:
        reason = f"{NOT_READY}{'; '.join(problems)}"
        print(f"lockstep: {reason}", file=sys.stderr, flush=True)
        Path(content["terminationMessage"]).write_text(reason)
        finish(volumes, places, values=values, write_back=False)  # what was mounted, unmounted
        return VOLUME_FAILED
    # Stopping the pod signals its whole group: the command ends, this process stays to write
    # the volumes back (a handler, unlike SIG_IGN, is not inherited by the command).
    signal.signal(signal.SIGTERM, lambda *_: None)
    with subprocess.Popen(command, pass_fds=content["passFds"]) as child:
        # The command stays in the pod's session; lockstep's own process leaves it, so that its
        # memory is not counted as the pod's (the watchdog sums a session; see confinement.py).
        # Its marker still finds it when the pod is stopped.
        os.setsid()
        status = child.wait()
    for problem in finish(volumes, places, values=values):
        print(f"lockstep: {problem}", file=sys.stderr, flush=True)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
