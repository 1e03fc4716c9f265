"""The sandbox of a local pod, without running it (runtimes/local/sandbox/, isolation.py,
sandboxes.py): the bwrap command line for each part of a spec, what a spec asks that only a
sandbox gives, and refusals by name where this machine cannot give it."""

from __future__ import annotations

import dataclasses
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from lockstep.domain.pod_security import PodSecurityLevel
from lockstep.runtimes.base import PodStartError
from lockstep.runtimes.local.pod_launch import Launch
from lockstep.runtimes.local.sandbox.asked import (
    VolumeKind,
    isolation_asked,
    security_of,
    shared_mount_paths,
    volumes_of,
)
from lockstep.runtimes.local.sandbox.bwrap import command, host_mount_points
from lockstep.runtimes.local.sandbox.definition import (
    DEFAULT_SHM_BYTES,
    Identity,
    Mount,
    MountKind,
    RootLayer,
    SandboxSpec,
    veil,
)
from lockstep.runtimes.local.sandbox.host_paths import HostPaths
from lockstep.runtimes.local.sandbox.policy import CONTAINER_CAPABILITIES, SandboxPolicy
from lockstep.runtimes.local.sandbox.probe import Sandboxing, machine_file_systems
from lockstep.schemas.distributed import WorkerSpec
from tests.unit.k8s import workload_of
from tests.unit.specs import request_body


def spec(**fields: object) -> WorkerSpec:
    return WorkerSpec.model_validate({"image": "x", **fields}, strict=False)


def test_the_plain_sandbox() -> None:
    line = command(SandboxSpec(), ["python", "train.py"])
    assert line[:5] == [
        "env",
        "--ignore-signal=TERM",
        "bwrap",
        "--die-with-parent",
        "--unshare-pid",
    ]
    assert line[5:8] == ["--bind", "/", "/"]
    assert line[12:16] == ["--perms", "1777", "--tmpfs", "/tmp"]
    shm = line.index("/dev/shm")
    assert line[shm - 5 : shm] == ["--size", str(DEFAULT_SHM_BYTES), "--perms", "1777", "--tmpfs"]
    assert "--unshare-ipc" in line and "setpriv" not in line
    assert line[-5:] == ["--", "env", "--default-signal=TERM", "python", "train.py"]


def test_identity_capabilities_and_a_read_only_root() -> None:
    sandbox = SandboxSpec(
        read_only_root=True,
        identity=Identity(1000, 2000, (3000, 4000)),
        capabilities=("CHOWN", "NET_BIND_SERVICE"),
        ambient_capabilities=("NET_BIND_SERVICE",),
        private_ipc=False,
        working_dir="/code",
    )
    line = command(sandbox, ["id"])
    assert line[5:8] == ["--ro-bind", "/", "/"]
    assert "--unshare-ipc" not in line
    assert line[line.index("--chdir") + 1] == "/code"
    privileges = line[line.index("--") + 1 :]
    assert privileges == [
        "setpriv",
        "--reuid",
        "1000",
        "--regid",
        "2000",
        "--groups",
        "3000,4000",
        "--bounding-set=-all,+chown,+net_bind_service",
        "--inh-caps=-all,+chown,+net_bind_service",
        "--ambient-caps=-all,+net_bind_service",
        "--",
        "env",
        "--default-signal=TERM",
        "id",
    ]


def test_mounts_are_made_parents_first_with_readable_directories_in_private_memory() -> None:
    sandbox = SandboxSpec(
        mounts=(
            Mount("/tmp/a/b/c", source="/srv/c", read_only=True),
            Mount("/tmp/a", MountKind.TMPFS, size_bytes=1024),
            Mount("/data", source="/srv/data"),
        )
    )
    line = command(sandbox, ["true"])
    tmpfs_a = line.index("/tmp/a")
    assert line[tmpfs_a - 5 : tmpfs_a] == ["--size", "1024", "--perms", "1777", "--tmpfs"]
    made = line.index("/tmp/a/b")
    assert line[made - 3 : made] == ["--perms", "0755", "--dir"] and made > tmpfs_a
    assert line[line.index("/srv/c") - 1] == "--ro-bind"
    assert line[line.index("/srv/data") - 1] == "--bind"
    assert host_mount_points(sandbox) == ["/data"]


@pytest.mark.parametrize(
    ("working_dir", "on_this_machine"),
    [("/home/alice/run", True), ("/data/run", False), ("/tmp/run", False)],
    ids=["on-the-root", "in-a-volume", "in-private-tmp"],
)
def test_a_missing_working_directory_is_made_where_it_lies(
    working_dir: str, on_this_machine: bool
) -> None:
    """bwrap makes it inside the sandbox; on this machine's root the runtime makes it first
    (a read-only root could not take it)."""
    sandbox = SandboxSpec(mounts=(Mount("/data", source="/srv/data"),), working_dir=working_dir)
    line = command(sandbox, ["true"])
    at = line.index("--chdir")
    assert line[at - 2 : at + 2] == ["--dir", working_dir, "--chdir", working_dir]
    assert (working_dir in host_mount_points(sandbox)) is on_this_machine


def test_seccomp_needs_its_descriptor() -> None:
    with pytest.raises(ValueError, match="file descriptor"):
        command(SandboxSpec(seccomp=True), ["true"])
    line = command(SandboxSpec(seccomp=True), ["true"], seccomp_fd=4)
    assert line[line.index("--seccomp") + 1] == "4"


def test_what_the_storage_asks_for() -> None:
    storage = {
        "hostPath": [{"path": "/srv", "mountPath": "/data"}],
        "pvc": [{"claimName": "c", "path": "/claim", "claimInfo": {"size": "2Gi"}}],
        "emptyDirVolume": [{"path": "/fast", "medium": "Memory", "sizeLimit": "1Mi"}],
        "configMapVolume": [{"configMap": "cfg", "mountPath": "/etc/cfg", "defaultMode": "0440"}],
        "secretVolume": [{"secret": "s", "mountPath": "/etc/s", "exclude": True}],
    }
    asks = volumes_of(spec(storage=storage))
    assert [(a.kind, a.target) for a in asks] == [
        (VolumeKind.HOST_PATH, "/data"),
        (VolumeKind.PVC, "/claim"),
        (VolumeKind.CONFIG_MAP, "/etc/cfg"),
        (VolumeKind.EMPTY_DIR, "/fast"),
    ]
    host, claim, config, fast = asks
    assert host.read_only and not claim.read_only and claim.create
    assert claim.size_bytes == 2 * 2**30
    assert config.mode == 0o440 and fast.memory and fast.size_bytes == 2**20
    assert [a.to_json() for a in asks] == [type(a).from_json(a.to_json()).to_json() for a in asks]


def test_two_volumes_at_one_path_are_named() -> None:
    storage = {
        "configMapVolume": [{"configMap": "cfg", "mountPath": "text"}],
        "secretVolume": [{"secret": "s", "mountPath": "/text/"}],
        "emptyDirVolume": [{"path": "/fast"}],
    }
    assert shared_mount_paths(volumes_of(spec(storage=storage))) == [
        "configMapVolume and secretVolume mount at the same path, /text: each volume needs a "
        "mount path of its own"
    ]
    del storage["secretVolume"]
    assert shared_mount_paths(volumes_of(spec(storage=storage))) == []


def test_what_the_security_context_asks_for() -> None:
    asked = security_of(
        spec(
            security={
                "uidGidSource": "custom",
                "runAsUid": 7,
                "supplementalGroups": "8, 9",
                "capabilities": ["KILL"],
                "hostIpc": True,
                "seccompProfileType": "RuntimeDefault",
            },
            compute={"largeShmRequest": True},
        )
    )
    assert asked.identity == Identity(7, 7, (8, 9))
    assert asked.added_capabilities == ("KILL",) and not asked.private_ipc and asked.seccomp
    assert asked.shm_bytes is None
    with pytest.raises(PodStartError, match="supplementalGroups"):
        security_of(spec(security={"runAsUid": 1, "supplementalGroups": "wheel"}))
    with pytest.raises(PodStartError, match="fromIdpToken"):
        security_of(spec(security={"uidGidSource": "fromIdpToken"}))


def test_only_what_a_sandbox_gives_is_named() -> None:
    assert isolation_asked(spec()) == []
    named = isolation_asked(
        spec(
            storage={"hostPath": [{"path": "/srv", "mountPath": "/data"}]},
            security={"readOnlyRootFilesystem": True, "runAsUid": 5},
        )
    )
    assert named == ["hostPath mounted at /data", "runAsUid/runAsGid", "readOnlyRootFilesystem"]


def policy(sandboxing: Sandboxing | None, *, euid: int = 0) -> SandboxPolicy:
    return SandboxPolicy(sandboxing, Path("/claims"), Path("/dev/shm/x"), euid)


def launch_for(**spec_fields: object) -> tuple[Launch, WorkerSpec]:
    worker = spec(**spec_fields)
    launch = Launch("p-master-0", "master", 0, "x", ("true",), {"TMPDIR": "/tmp/t"}, None)
    return launch, worker


def apply(chosen: SandboxPolicy, **spec_fields: object) -> Launch:
    """The launch of a pod of a privileged project (who may ask what is tested apart)."""
    launch, worker = launch_for(**spec_fields)
    workload = dataclasses.replace(
        workload_of(request_body()), pod_security=PodSecurityLevel.PRIVILEGED
    )
    return chosen.apply(launch, worker, workload=workload, runtime_root=Path("/r"), on=None)


def test_without_bwrap_a_pod_that_needs_a_sandbox_is_refused_by_name() -> None:
    missing = policy(Sandboxing(None, "bubblewrap (bwrap) is not installed"))
    with pytest.raises(PodStartError) as refused:
        apply(missing, storage={"hostPath": [{"path": "/srv", "mountPath": "/data"}]})
    assert "hostPath mounted at /data" in str(refused.value)
    assert "bubblewrap (bwrap) is not installed" in str(refused.value)
    assert "LOCKSTEP_SANDBOX=off" in str(refused.value)
    assert apply(missing).sandbox is None  # one that needs none runs as before


def test_with_the_sandbox_off_what_is_not_applied_is_listed() -> None:
    plain = apply(policy(None), security={"readOnlyRootFilesystem": True})
    assert plain.sandbox is None and plain.unapplied == ("readOnlyRootFilesystem",)


def test_another_identity_needs_root_and_run_as_non_root_refuses_uid_0() -> None:
    working = Sandboxing("/usr/bin/bwrap", as_root=False)
    with pytest.raises(PodStartError, match="only when it runs as root"):
        apply(policy(working, euid=1000), security={"runAsUid": 5})
    as_root = Sandboxing("/usr/bin/bwrap", as_root=True)
    with pytest.raises(PodStartError, match="runAsNonRoot"):
        apply(policy(as_root), security={"runAsNonRoot": True})


def test_private_host_paths_are_made_private_in_a_namespace_before_bwrap() -> None:
    sandbox = SandboxSpec(mounts=(Mount("/data", source="/srv/a"),), private_sources=("/srv/a",))
    line = command(sandbox, ["true"], unshare="/usr/bin/unshare")
    assert line[2:6] == ["/usr/bin/unshare", "--mount", "--propagation", "slave"]
    script = line.index("lockstep-sandbox")
    assert line[script + 1 : script + 6] == ["private", "/srv/a", "/srv/a", "--", "bwrap"]
    assert line[line.index("/data") - 2 : line.index("/data") + 1] == ["--bind", "/srv/a", "/data"]
    assert command(SandboxSpec(), ["true"])[2] == "bwrap"


def test_pinned_host_paths_are_bound_from_their_descriptors_or_their_private_places() -> None:
    """Nothing between the check and the mount goes by the hostPath's path."""
    sandbox = SandboxSpec(
        mounts=(
            Mount("/data", source="/srv/a"),
            Mount("/seen", source="/srv/b", read_only=True),
        ),
        private_sources=("/srv/a",),
    )
    pinned = HostPaths(descriptors={"/srv/a": 6, "/srv/b": 7}, staged={"/srv/a": "/x/hp/6"})
    line = command(sandbox, ["true"], host_paths=pinned)
    script = line.index("lockstep-sandbox")
    assert line[script + 1 : script + 4] == ["private", "/proc/self/fd/6", "/x/hp/6"]
    assert line[line.index("/data") - 2 : line.index("/data") + 1] == ["--bind", "/x/hp/6", "/data"]
    assert line[line.index("/seen") - 2 : line.index("/seen") + 1] == ["--ro-bind-fd", "7", "/seen"]
    assert "/srv/a" not in line and "/srv/b" not in line


def test_host_paths_are_private_unless_host_to_container_and_only_root_can_make_them() -> None:
    storage = {
        "hostPath": [
            {"path": "/srv/a", "mountPath": "/a"},
            {"path": "/srv/b", "mountPath": "/b", "mountPropagation": "None"},
            {"path": "/srv/c", "mountPath": "/c", "mountPropagation": "HostToContainer"},
        ]
    }
    as_root = apply(
        policy(Sandboxing("/usr/bin/bwrap", as_root=True, layers=("/",))), storage=storage
    )
    assert as_root.sandbox is not None
    assert as_root.sandbox.private_sources == ("/srv/a", "/srv/b")
    assert as_root.unapplied == ()
    as_user = apply(
        policy(Sandboxing("/usr/bin/bwrap", layer_problem="not root"), euid=1000), storage=storage
    )
    assert as_user.sandbox is not None and as_user.sandbox.private_sources == ()
    assert as_user.unapplied == (
        *(
            f"mountPropagation None of the hostPath /srv/{name} (lockstep is not root: the pod "
            "sees what this machine mounts there later)"
            for name in "ab"
        ),
        "a root of its own (not root): what the pod writes outside its volumes is written on "
        "this machine, where lockstep's user may",
    )


def test_pods_whose_identity_comes_from_the_image_run_as_the_pod_user() -> None:
    """LOCKSTEP_POD_USER stands for the image's user: it satisfies runAsNonRoot, yields to a
    custom identity, and is refused by name where no sandbox can apply it."""
    as_root = Sandboxing("/usr/bin/bwrap", as_root=True)
    image_user = Identity(65534, 65534, (100,))
    chosen = dataclasses.replace(policy(as_root), image_user=image_user)
    sandboxed = apply(chosen, security={"runAsNonRoot": True, "uidGidSource": "fromTheImage"})
    assert sandboxed.sandbox is not None and sandboxed.sandbox.identity == image_user
    custom = apply(chosen, security={"uidGidSource": "custom", "runAsUid": 7, "runAsGid": 8})
    assert custom.sandbox is not None and custom.sandbox.identity == Identity(7, 8)
    with pytest.raises(PodStartError, match=r"uid 0, LOCKSTEP_POD_USER"):
        apply(
            dataclasses.replace(chosen, image_user=Identity(0, 0)),
            security={"runAsNonRoot": True},
        )
    missing = dataclasses.replace(chosen, sandboxing=Sandboxing(None, "bwrap is missing"))
    with pytest.raises(PodStartError, match=r"the user LOCKSTEP_POD_USER names \(uid 65534\)"):
        apply(missing)


def test_a_sandboxed_launch_sees_its_own_directory_alone_and_loses_tmpdir() -> None:
    sandboxed = apply(policy(Sandboxing("/usr/bin/bwrap", as_root=True)))
    assert sandboxed.sandbox is not None
    workload = workload_of(request_body())
    work = f"/r/{workload.id}/{sandboxed.pod_name}/work"
    bound = [m for m in sandboxed.sandbox.mounts if m.kind is MountKind.BIND]
    assert [(m.target, m.source, m.read_only) for m in bound] == [(work, work, False)]
    assert sandboxed.sandbox.working_dir == work
    assert "TMPDIR" not in sandboxed.env
    assert dataclasses.replace(sandboxed, sandbox=None).sandbox is None


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A directory any user may enter (the tests' own may not be)."""
    directory = Path(tempfile.mkdtemp(prefix="lockstep-open-", dir="/var/tmp"))
    directory.chmod(0o755)
    yield directory
    shutil.rmtree(directory)


def test_what_another_user_may_not_enter_is_veiled_and_lockstep_bound_back_through_it(
    open_dir: Path,
) -> None:
    """A pod running as another user reaches lockstep's interpreter and its workload's
    directory even where they lie under a directory only lockstep's user may enter."""
    home = open_dir / "home"
    (home / "python").mkdir(parents=True)
    home.chmod(0o700)
    chosen = dataclasses.replace(
        policy(Sandboxing("/usr/bin/bwrap", as_root=True)), installation=(str(home / "python"),)
    )
    workload = workload_of(request_body())

    def mounts(**security: object) -> tuple[Mount, ...]:
        launch, worker = launch_for(security={"uidGidSource": "custom", **security})
        sandboxed = chosen.apply(launch, worker, workload=workload, runtime_root=home, on=None)
        assert sandboxed.sandbox is not None
        return sandboxed.sandbox.mounts

    veiled = mounts(runAsUid=4242, runAsGid=4343)
    assert Mount(str(home), MountKind.TMPFS, read_only=True) in veiled
    assert Mount(str(home / "python"), source=str(home / "python"), read_only=True) in veiled
    own = str(home / workload.id / "p-master-0" / "work")
    assert Mount(own, source=own) in veiled
    # The group's search permission lets its members in (others', anyone).
    if os.geteuid() == 0:
        os.chown(home, -1, 4343)
        home.chmod(0o710)
    else:
        home.chmod(0o701)
    assert all(m.kind is not MountKind.TMPFS for m in mounts(runAsUid=4242, runAsGid=4343))
    # Lockstep's own user (and a pod without an identity of its own) needs no veil.
    plain = apply(chosen)
    assert plain.sandbox is not None
    assert all(m.kind is not MountKind.TMPFS for m in plain.sandbox.mounts)


def test_a_veil_is_read_only_once_what_it_holds_is_mounted() -> None:
    sandbox = SandboxSpec(
        mounts=(
            Mount("/root/.pyenv/3.11", source="/root/.pyenv/3.11", read_only=True),
            Mount("/root", MountKind.TMPFS, read_only=True),
        )
    )
    line = command(sandbox, ["true"])
    veil = line.index("/root")
    assert line[veil - 3 : veil] == ["--perms", "0755", "--tmpfs"]
    assert line.index("/root/.pyenv") < line.index("/root/.pyenv/3.11")
    remount = line.index("--remount-ro")
    assert line[remount + 1] == "/root" and remount > line.index("/root/.pyenv/3.11")
    assert host_mount_points(sandbox) == []  # nothing to make on this machine


def test_mpi_files_are_at_etc_mpi_in_pods_sandboxed_as_root() -> None:
    directory = Path("/r/w/mpi")
    as_root = policy(Sandboxing("/usr/bin/bwrap", as_root=True))
    launcher = as_root.expose_mpi_files(apply(as_root), directory, launcher=True)
    assert launcher.sandbox is not None
    assert Mount("/etc/mpi", source="/r/w/mpi", read_only=True) in launcher.sandbox.mounts
    assert launcher.env["OMPI_MCA_orte_default_hostfile"] == "/etc/mpi/hostfile"
    assert launcher.env["PRTE_MCA_plm_ssh_agent"] == "/etc/mpi/rsh"
    worker = as_root.expose_mpi_files(apply(as_root), directory, launcher=False)
    assert worker.sandbox is not None and worker.sandbox.mounts[-1].target == "/etc/mpi"
    assert "PRTE_MCA_plm_ssh_agent" not in worker.env
    # Not as root: at their own path (lockstep's user, the pods', may enter there), read-only.
    as_user = policy(Sandboxing("/usr/bin/bwrap"), euid=1000)
    unchanged = apply(as_user)
    exposed = as_user.expose_mpi_files(unchanged, directory, launcher=True)
    assert exposed.sandbox is not None and exposed.env == unchanged.env
    assert exposed.sandbox.mounts[-1] == Mount("/r/w/mpi", source="/r/w/mpi", read_only=True)


ROOTED = Sandboxing("/usr/bin/bwrap", as_root=True, layers=("/", "/work"))
"""lockstep as root on a machine with overlayfs and a second disk file system at /work."""


def test_a_pod_that_asks_nothing_gets_a_containers_defaults() -> None:
    chosen = dataclasses.replace(policy(ROOTED), private_paths=("/srv/lockstep",))
    sandbox = apply(chosen).sandbox
    assert sandbox is not None
    assert sandbox.capabilities == CONTAINER_CAPABILITIES and "NET_RAW" not in sandbox.capabilities
    assert sandbox.ambient_capabilities == () and sandbox.seccomp
    work = sandbox.mounts[1].target
    pod_dir = work.removesuffix("/work")
    assert pod_dir.endswith("/p-master-0")
    # Its root's layer is lockstep's, beside the pod's own directory, never bound into it.
    assert sandbox.root_layer == RootLayer(f"{pod_dir}/rootfs", ("/", "/work"))
    # lockstep's own files veiled first; the pod's own directory bound back, and nothing else
    assert sandbox.mounts == (veil("/srv/lockstep"), Mount(work, source=work))


def test_capabilities_are_added_to_the_defaults_and_unconfined_lifts_the_filter() -> None:
    security = {"capabilities": ["SYS_PTRACE", "CHOWN"], "seccompProfileType": "Unconfined"}
    sandbox = apply(policy(ROOTED), security=security).sandbox
    assert sandbox is not None
    assert sandbox.capabilities == (*CONTAINER_CAPABILITIES, "SYS_PTRACE")
    assert sandbox.ambient_capabilities == ("SYS_PTRACE", "CHOWN") and not sandbox.seccomp


def test_a_read_only_root_needs_no_layer_and_lockstep_not_root_keeps_no_capabilities() -> None:
    read_only = apply(policy(ROOTED), security={"readOnlyRootFilesystem": True})
    assert read_only.sandbox is not None and read_only.sandbox.root_layer is None
    assert read_only.unapplied == ()
    as_user = apply(policy(Sandboxing("/usr/bin/bwrap", layer_problem="not root"), euid=1000))
    assert as_user.sandbox is not None and as_user.sandbox.capabilities is None
    assert as_user.sandbox.seccomp and as_user.sandbox.root_layer is None


def test_a_root_layer_is_overlaid_before_bwrap_and_bound_as_the_root() -> None:
    sandbox = SandboxSpec(root_layer=RootLayer("/d/rootfs", ("/work", "/")))
    line = command(sandbox, ["true"], unshare="/usr/bin/unshare")
    assert line[2:6] == ["/usr/bin/unshare", "--mount", "--propagation", "slave"]
    script = line.index("lockstep-sandbox")
    steps = line[script + 1 : line.index("--", script)]
    assert steps == [
        *("layer", "/", "/d/rootfs/upper/0", "/d/rootfs/work/0", "/d/rootfs/merged"),
        *("layer", "/work", "/d/rootfs/upper/1", "/d/rootfs/work/1", "/d/rootfs/merged/work"),
    ]
    bwrap = line.index("bwrap")
    assert line[bwrap + 1 : bwrap + 9] == [
        *("--die-with-parent", "--unshare-pid", "--bind", "/d/rootfs/merged", "/"),
        *("--ro-bind", "/sys", "/sys"),
    ]


MOUNTINFO = """\
22 1 254:0 / / rw,relatime - ext4 /dev/vda rw
23 22 0:5 / /dev rw - devtmpfs udev rw
24 22 0:21 / /proc rw - proc proc rw
25 22 254:16 / /work rw - xfs /dev/vdb rw
26 25 254:32 / /work/scratch\\040space rw - ext4 /dev/vdc rw
27 22 0:30 / /run rw - tmpfs tmpfs rw
28 27 254:48 / /run/media rw - ext4 /dev/vdd rw
29 22 0:40 / /mnt/bucket rw - fuse.s3fs s3fs rw
30 22 0:41 / /home rw - tmpfs tmpfs rw
"""


def test_a_pods_root_is_made_of_this_machines_disk_file_systems(tmp_path: Path) -> None:
    """Not the virtual ones, nor those under the pod's own trees, nor FUSE mounts (other pods'
    s3 volumes); a directory that is missing here is left out."""
    found = machine_file_systems(MOUNTINFO)
    assert found[0] == "/"
    assert "/proc" not in found and "/run/media" not in found and "/mnt/bucket" not in found
    assert "/home" not in found
    expected = ["/"] + [p for p in ("/work", "/work/scratch space") if Path(p).is_dir()]
    assert list(found) == expected


def test_directories_made_in_a_pods_own_root_are_readable_by_all() -> None:
    """bwrap would make the parents of a mount target 0700, out of reach of a pod's user."""
    mounts = (Mount("/container/repo", source="/srv/repo"),)
    line = command(SandboxSpec(mounts=mounts, root_layer=RootLayer("/d/rootfs")), ["true"])
    made = line.index("/container")
    assert line[made - 3 : made] == ["--perms", "0755", "--dir"]
    assert made < line.index("/srv/repo")
    assert "/container" not in command(SandboxSpec(mounts=mounts), ["true"])


def test_lockstep_s_installation_is_its_interpreter_and_its_checkout() -> None:
    """What pods reach of lockstep's own: the checkout it runs from (this one, installed
    editable), which holds its venv, and the interpreter the venv was made from."""
    from lockstep.runtimes.local.sandbox.policy import installation

    checkout = str(Path(__file__).resolve().parents[2])
    assert checkout in installation()
    assert str(Path(sys.base_prefix).resolve()) in installation()
