"""Pod Security levels (domain/pod_security.py): what each level refuses of a request, field by
field, and what the runtimes make of a restricted project's pods (the local sandbox's
capabilities; on Kubernetes, the security contexts the level requires and the namespace's
label), the manifests checked against Kubernetes' schemas and the level's own rules."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path, PurePosixPath
from typing import Any

import pytest

from lockstep.domain.pod_security import AllowedHostPath, PodSecurityLevel, violations
from lockstep.runtimes.kubernetes.identity import POD_SECURITY_LABEL, namespace_manifest
from lockstep.runtimes.local.pod_launch import Launch
from lockstep.runtimes.local.sandbox.policy import SandboxPolicy
from lockstep.runtimes.local.sandbox.probe import Sandboxing
from lockstep.schemas.distributed import DistributedCreationRequest, WorkerSpec
from tests.unit.k8s import manifests_of, workload_of
from tests.unit.k8s_schemas import schema_errors
from tests.unit.specs import request_body

PRIVILEGED, BASELINE, RESTRICTED = (
    PodSecurityLevel.PRIVILEGED,
    PodSecurityLevel.BASELINE,
    PodSecurityLevel.RESTRICTED,
)
ALLOWED = (AllowedHostPath(PurePosixPath("/srv/data")), AllowedHostPath.parse("/scratch:rw"))


def request(**spec: Any) -> DistributedCreationRequest:
    body = request_body()
    body["spec"] |= spec
    return DistributedCreationRequest.model_validate_json(json.dumps(body))


def refused(level: PodSecurityLevel, **spec: Any) -> list[tuple[str, str]]:
    return [(v.field, v.rule) for v in violations(request(**spec), level, ALLOWED)]


def host(path: str, **fields: Any) -> dict[str, Any]:
    return {"storage": {"hostPath": [{"path": path, "mountPath": "/mnt", **fields}]}}


CASES: list[tuple[str, dict[str, Any], PodSecurityLevel, list[str]]] = [
    ("host root", host("/", readOnly=False), BASELINE, ["spec.storage.hostPath[0].path"]),
    ("allowed, read-only", host("/srv/data/imagenet"), BASELINE, []),
    ("climbs out", host("/srv/data/../../etc"), BASELINE, ["spec.storage.hostPath[0].path"]),
    (
        "allowed read-only, asked writable",
        host("/srv/data", readOnly=False),
        BASELINE,
        ["spec.storage.hostPath[0].readOnly"],
    ),
    ("allowed writable", host("/scratch/run", readOnly=False), BASELINE, []),
    ("excluded", host("/", exclude=True), BASELINE, []),
    ("any host path", host("/", readOnly=False), PRIVILEGED, []),
    (
        "no host path at all",
        host("/srv/data"),
        RESTRICTED,
        ["spec.storage.hostPath[0]", "spec.security.runAsNonRoot"],
    ),
    (
        "nfs",
        {"storage": {"nfs": [{"server": "n", "path": "/e", "mountPath": "/m"}]}},
        RESTRICTED,
        ["spec.storage.nfs[0]", "spec.security.runAsNonRoot"],
    ),
    (
        "capabilities beyond baseline",
        {"security": {"capabilities": ["CHOWN", "SYS_ADMIN", "SYS_PTRACE"]}},
        BASELINE,
        ["spec.security.capabilities[1]", "spec.security.capabilities[2]"],
    ),
    (
        "baseline capabilities",
        {"security": {"capabilities": ["KILL", "NET_RAW"]}},
        BASELINE,
        ["spec.security.capabilities[1]"],
    ),
    (
        "host namespaces and Unconfined",
        {"security": {"hostIpc": True, "hostNetwork": True, "seccompProfileType": "Unconfined"}},
        BASELINE,
        ["spec.security.hostIpc", "spec.security.hostNetwork", "spec.security.seccompProfileType"],
    ),
    ("all of it", {"security": {"capabilities": ["SYS_ADMIN"], "hostIpc": True}}, PRIVILEGED, []),
    (
        "restricted: root and capabilities",
        {
            "security": {
                "runAsUid": 0,
                "uidGidSource": "custom",
                "capabilities": ["CHOWN", "NET_BIND_SERVICE"],
                "allowPrivilegeEscalation": True,
            }
        },
        RESTRICTED,
        [
            "spec.security.capabilities[0]",
            "spec.security.runAsNonRoot",
            "spec.security.runAsUid",
            "spec.security.allowPrivilegeEscalation",
        ],
    ),
    (
        "restricted as asked",
        {"security": {"runAsNonRoot": True, "runAsUid": 1000, "uidGidSource": "custom"}},
        RESTRICTED,
        [],
    ),
]


@pytest.mark.parametrize(
    ("spec", "level", "fields"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_each_level_refuses_what_it_forbids_by_field(
    spec: dict[str, Any], level: PodSecurityLevel, fields: list[str]
) -> None:
    found = refused(level, **spec)
    assert [field for field, _ in found] == fields
    assert all(f"Pod Security level is {level}" in rule for _, rule in found)


def test_a_refusal_says_the_rule_and_what_is_allowed() -> None:
    ((_, rule),) = refused(BASELINE, **host("/etc"))
    assert rule == (
        "/etc is not under a host path an administrator allowed (/srv/data, /scratch) "
        "(the project's Pod Security level is baseline)"
    )
    assert violations(request(**host("/etc")), BASELINE)[0].rule.startswith(
        "/etc is not under a host path an administrator allowed (none)"
    )


def test_the_master_spec_is_checked_too() -> None:
    body = request_body()
    body["masterSpec"] = {"image": "python:3.11", "security": {"hostNetwork": True}}
    body["masterSpecSameAsWorker"] = False
    parsed = DistributedCreationRequest.model_validate_json(json.dumps(body))
    assert [v.field for v in violations(parsed, BASELINE)] == ["masterSpec.security.hostNetwork"]


@pytest.mark.parametrize("text", ["srv", "/srv:rwx", "relative:rw"])
def test_an_allowed_host_path_is_absolute_with_an_optional_mode(text: str) -> None:
    with pytest.raises(ValueError, match="path"):
        AllowedHostPath.parse(text)


# --- the local runtime -----------------------------------------------------------------------


def local_launch(level: PodSecurityLevel, tmp_path: Path, **spec: Any) -> Launch:
    chosen = SandboxPolicy(
        Sandboxing("/usr/bin/bwrap", as_root=True, layers=("/",)),
        tmp_path / "claims",
        tmp_path / "shm",
        0,
        allowed_host_paths=(AllowedHostPath(PurePosixPath(str(tmp_path / "allowed"))),),
    )
    workload = dataclasses.replace(workload_of(request_body()), pod_security=level)
    launch = Launch("p-master-0", "master", 0, "x", ("true",), {}, None)
    worker = WorkerSpec.model_validate({"image": "x", **spec}, strict=False)
    return chosen.apply(launch, worker, workload=workload, runtime_root=tmp_path, on=None)


def test_a_restricted_pod_keeps_only_the_capabilities_its_spec_adds(tmp_path: Path) -> None:
    plain = local_launch(RESTRICTED, tmp_path).sandbox
    added = local_launch(RESTRICTED, tmp_path, security={"capabilities": ["NET_BIND_SERVICE"]})
    assert plain is not None and plain.capabilities == ()
    assert added.sandbox is not None and added.sandbox.capabilities == ("NET_BIND_SERVICE",)
    baseline = local_launch(BASELINE, tmp_path).sandbox
    assert baseline is not None and "CHOWN" in (baseline.capabilities or ())


def test_a_host_path_that_a_link_leads_out_of_the_allowed_one_is_refused_at_start(
    tmp_path: Path,
) -> None:
    """Checked at submission by its path, and again where it resolves when the pod starts."""
    from lockstep.runtimes.base import PodStartError

    allowed = tmp_path / "allowed"
    allowed.mkdir()
    (allowed / "data").mkdir()
    (allowed / "root").symlink_to("/")
    assert local_launch(BASELINE, tmp_path, **host(str(allowed / "data"))).sandbox is not None
    with pytest.raises(PodStartError, match=r"leads to /, which its project's Pod Security"):
        local_launch(BASELINE, tmp_path, **host(str(allowed / "root")))
    assert local_launch(PRIVILEGED, tmp_path, **host(str(allowed / "root"))).sandbox is not None


# --- Kubernetes ----------------------------------------------------------------------------


def pod_templates(level: PodSecurityLevel, **spec: Any) -> list[dict[str, Any]]:
    body = request_body()
    body["spec"] |= spec
    workload = dataclasses.replace(workload_of(body), pod_security=level)
    manifests = manifests_of(workload)
    for manifest in manifests:
        assert schema_errors(manifest) == []
    job = next(m for m in manifests if m["kind"] == "PyTorchJob")
    return [r["template"] for r in job["spec"]["pytorchReplicaSpecs"].values()]


def restricted_problems(template: dict[str, Any]) -> list[str]:
    """What the API server's PodSecurity admission refuses of a pod at `restricted` (the
    Pod Security Standards' checks that a rendered pod can break)."""
    pod = template["spec"]
    context = pod.get("securityContext") or {}
    problems = []
    if pod.get("hostNetwork") or pod.get("hostIPC") or pod.get("hostPID"):
        problems.append("host namespaces")
    allowed_volumes = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral"}
    allowed_volumes |= {"persistentVolumeClaim", "projected", "secret"}
    for volume in pod.get("volumes") or ():
        if not set(volume) - {"name"} <= allowed_volumes:
            problems.append(f"volume {volume['name']}")
    if (context.get("seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"):
        problems.append("seccompProfile")
    for container in [*pod["containers"], *(pod.get("initContainers") or ())]:
        own = container.get("securityContext") or {}
        if own.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{container['name']}: allowPrivilegeEscalation")
        capabilities = own.get("capabilities") or {}
        if "ALL" not in (capabilities.get("drop") or ()):
            problems.append(f"{container['name']}: capabilities.drop")
        if not set(capabilities.get("add") or ()) <= {"NET_BIND_SERVICE"}:
            problems.append(f"{container['name']}: capabilities.add")
        if not own.get("runAsNonRoot", context.get("runAsNonRoot")):
            problems.append(f"{container['name']}: runAsNonRoot")
        if own.get("runAsUser", context.get("runAsUser")) == 0:
            problems.append(f"{container['name']}: runAsUser")
    return problems


def test_a_restricted_projects_pods_are_rendered_as_the_level_requires() -> None:
    git = {"repository": "https://example.com/r.git", "path": "/code", "branch": "main"}
    for template in pod_templates(
        RESTRICTED,
        security={"capabilities": ["NET_BIND_SERVICE"], "runAsNonRoot": True},
        storage={"git": [git]},
    ):
        assert template["spec"].get("initContainers"), "the git volume's init container"
        assert restricted_problems(template) == []
        main = template["spec"]["containers"][0]["securityContext"]
        assert main["capabilities"] == {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}


def test_a_baseline_projects_pods_keep_their_runtime_defaults() -> None:
    for template in pod_templates(BASELINE):
        assert "securityContext" not in template["spec"]["containers"][0]
        assert restricted_problems(template) != []


def test_a_projects_namespace_enforces_its_level() -> None:
    manifest = namespace_manifest("runai-team-a", RESTRICTED)
    assert manifest["metadata"]["labels"] == {POD_SECURITY_LABEL: "restricted"}
    assert schema_errors(manifest) == []
