"""The semantic rules of a distributed creation request (domain/rules.py): each rule's exact
field path and text, every violation reported at once in a stable order, name lengths that
keep pod names within 63 characters, and the Run:ai documentation example accepted as is."""

from __future__ import annotations

import json
from typing import Any

import pytest

from lockstep.domain.plan import build_plan
from lockstep.domain.rules import ELASTIC_MAX, ELASTIC_MIN, ELASTIC_NO_MASTER, check_request
from lockstep.schemas.distributed import DistributedCreationRequest
from tests.unit.specs import creation_request, reference_file, request, request_body

PORTION_RANGE = (
    "must be greater than 0 and at most 1 (a fraction of one device); "
    "use gpuDevicesRequest for whole devices"
)
MPI_ONLY = "allowed only when distributedFramework is MPI"
AT_LEAST_MIN = f"must be greater than or equal to {ELASTIC_MIN}"
AT_MOST_MAX = f"must be less than or equal to {ELASTIC_MAX}"
NOT_ELASTIC = (
    "elastic scaling (minReplicas/maxReplicas) is allowed only when distributedFramework is "
    "PyTorch; otherwise it may only equal numWorkers"
)
DNS_LABEL = (
    "must be a DNS-1123 label: lower-case letters, digits and '-', starting and ending with a "
    "letter or digit, at most 63 characters"
)
LABEL_KEY = (
    "must be a Kubernetes label key: an optional DNS prefix and '/', then up to 63 letters, "
    "digits, '-', '_' or '.', starting and ending alphanumeric"
)
LABEL_VALUE = (
    "must be at most 63 letters, digits, '-', '_' or '.', starting and ending alphanumeric"
)
MEMORY_QUANTITY = "must be a quantity such as 512Mi, 20M or 2G"
AT_LEAST_ZERO = "must be greater than or equal to 0"
REQUIRED = "required"

Found = list[tuple[str, str]]


def found(parsed: DistributedCreationRequest) -> Found:
    return [(v.field, v.rule) for v in check_request(parsed)]


def check(**kwargs: Any) -> Found:
    """The violations of `request(**kwargs)` as (field, rule) pairs."""
    return found(request(**kwargs))


def test_a_minimal_request_is_valid() -> None:
    assert check() == []


def test_the_documentation_example_is_valid() -> None:
    text = reference_file("examples/create-request.json").read_text()
    assert found(DistributedCreationRequest.model_validate_json(text)) == []


# --- request level ------------------------------------------------------------------------


def test_template_id_is_refused() -> None:
    assert check(templateId="0b5e0f4e-5c6a-4d89-9f3e-1f1f1f1f1f1f") == [
        ("templateId", "workload templates are not supported")
    ]


def test_missing_spec_stops_the_checks() -> None:
    body = request_body()
    del body["spec"]
    body["templateId"] = "0b5e0f4e-5c6a-4d89-9f3e-1f1f1f1f1f1f"
    assert found(creation_request(body)) == [
        ("templateId", "workload templates are not supported"),
        ("spec", REQUIRED),
    ]


# --- topology -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        ("distributedFramework", "spec.distributedFramework"),
        ("numWorkers", "spec.numWorkers"),
        ("image", "spec.image"),
    ],
)
def test_topology_fields_are_required(missing: str, field: str) -> None:
    assert check(without=(missing,)) == [(field, REQUIRED)]


def test_all_missing_topology_fields_are_reported_together() -> None:
    assert check(without=("distributedFramework", "numWorkers", "image")) == [
        ("spec.distributedFramework", REQUIRED),
        ("spec.numWorkers", REQUIRED),
        ("spec.image", REQUIRED),
    ]


@pytest.mark.parametrize("framework", ["PyTorch", "TF", "XGBoost", "JAX"])
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("slotsPerWorker", 2),
        ("sshAuthMountPath", "/home/mpi/.ssh"),
        ("mpiLauncherCreationPolicy", "WaitForWorkersReady"),
        ("mpiLauncherCreationPolicy", "AtStartup"),
    ],
)
def test_mpi_fields_only_with_mpi(framework: str, field: str, value: object) -> None:
    assert check(spec={"distributedFramework": framework, field: value}) == [
        (f"spec.{field}", MPI_ONLY)
    ]


@pytest.mark.parametrize("framework", ["PyTorch", "TF", "XGBoost", "JAX"])
def test_document_defaults_of_mpi_fields_are_tolerated_for_every_framework(
    framework: str,
) -> None:
    """Clients generated from the document send slotsPerWorker 1 and /root/.ssh everywhere."""
    spec = {
        "distributedFramework": framework,
        "slotsPerWorker": 1,
        "sshAuthMountPath": "/root/.ssh",
    }
    assert check(spec=spec) == []


def test_mpi_fields_with_mpi_are_accepted() -> None:
    spec = {
        "distributedFramework": "MPI",
        "slotsPerWorker": 4,
        "sshAuthMountPath": "/home/mpi/.ssh",
        "mpiLauncherCreationPolicy": "AtStartup",
    }
    assert check(spec=spec) == []


def test_ssh_auth_mount_path_must_be_absolute() -> None:
    relative = {"sshAuthMountPath": "home/.ssh"}
    assert check(spec={"distributedFramework": "MPI", **relative}) == [
        ("spec.sshAuthMountPath", "must be an absolute path")
    ]
    assert check(spec=relative) == [
        ("spec.sshAuthMountPath", MPI_ONLY),
        ("spec.sshAuthMountPath", "must be an absolute path"),
    ]


# --- elasticity -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("workers", "low", "high", "expected"),
    [
        (2, 1, 4, []),
        (2, 2, 2, []),
        (4, None, 4, []),
        (1, 1, None, []),
        (2, 0, None, [("spec.minReplicas", "must be greater than or equal to 1")]),
        (
            2,
            None,
            0,
            [
                ("spec.maxReplicas", "must be greater than or equal to 1"),
                ("spec.numWorkers", AT_MOST_MAX),
            ],
        ),
        (2, 3, 2, [("spec.maxReplicas", "must be greater than or equal to minReplicas")]),
        (2, 3, 4, [("spec.numWorkers", AT_LEAST_MIN)]),
        (2, 1, 1, [("spec.numWorkers", AT_MOST_MAX)]),
        (5, None, 4, [("spec.numWorkers", AT_MOST_MAX)]),
    ],
)
def test_pytorch_elasticity(
    workers: int, low: int | None, high: int | None, expected: Found
) -> None:
    spec: dict[str, Any] = {"numWorkers": workers}
    if low is not None:
        spec["minReplicas"] = low
    if high is not None:
        spec["maxReplicas"] = high
    assert check(spec=spec) == expected


@pytest.mark.parametrize("framework", ["TF", "XGBoost", "JAX", "MPI"])
def test_other_frameworks_accept_min_and_max_equal_to_num_workers(framework: str) -> None:
    spec = {"distributedFramework": framework, "numWorkers": 3, "minReplicas": 3, "maxReplicas": 3}
    assert check(spec=spec) == []


@pytest.mark.parametrize("framework", ["TF", "XGBoost", "JAX", "MPI"])
def test_other_frameworks_refuse_elastic_scaling(framework: str) -> None:
    spec = {"distributedFramework": framework, "numWorkers": 3, "minReplicas": 1}
    assert check(spec=spec) == [("spec.minReplicas", NOT_ELASTIC)]


def test_non_elastic_violation_names_the_field_that_was_sent() -> None:
    spec = {"distributedFramework": "TF", "numWorkers": 3, "maxReplicas": 5}
    assert check(spec=spec) == [("spec.maxReplicas", NOT_ELASTIC)]


@pytest.mark.parametrize(
    ("request_fields", "expected"),
    [
        ({"masterSpecSameAsWorker": True}, []),
        ({}, []),
        ({"masterSpecSameAsWorker": False, "masterSpec": {"image": "other"}}, "refused"),
        ({"masterSpec": {"image": "other"}}, "refused"),
    ],
)
def test_an_elastic_workload_has_no_master_to_give_a_spec(
    request_fields: dict[str, Any], expected: Found | str
) -> None:
    """Elastic PyTorch is worker pods only: a master spec of its own has no pod to run it."""
    spec = {"numWorkers": 2, "minReplicas": 2, "maxReplicas": 2}
    found = check(spec=spec, **request_fields)
    assert found == ([("masterSpec", ELASTIC_NO_MASTER)] if expected == "refused" else expected)


def test_a_fixed_pytorch_workload_keeps_its_own_master_spec() -> None:
    found = check(spec={"numWorkers": 2}, masterSpecSameAsWorker=False, masterSpec={"image": "o"})
    assert found == []


# --- name -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Train", "-train", "train-", "my_job", "my.job", "trä", "a" * 64, "job name"]
)
def test_name_must_be_a_dns_label(name: str) -> None:
    assert check(name=name) == [("name", DNS_LABEL)]


@pytest.mark.parametrize("name", ["a", "7", "my-job-2", "a" * 40])
def test_dns_label_names_are_accepted(name: str) -> None:
    assert check(name=name) == []


def test_name_too_long_for_its_pod_names_says_how_long_it_may_be() -> None:
    # PyTorch with two workers: the longest pod name is <name>-master-0 (9 characters more).
    assert check(name="a" * 54) == []
    assert check(name="a" * 55) == [
        (
            "name",
            "must be at most 54 characters so that pod names such as '<name>-master-0' fit in 63",
        )
    ]


def test_given_name_as_prefix_leaves_room_for_the_random_suffix() -> None:
    assert check(name="a" * 48, useGivenNameAsPrefix=True) == []
    assert check(name="a" * 49, useGivenNameAsPrefix=True) == [
        (
            "name",
            "must be at most 48 characters so that pod names such as '<name>-master-0' fit in 63",
        )
    ]


def _longest_allowed(framework: str, workers: int, *, prefix: bool) -> int:
    """The longest accepted name, found by asking the rules."""
    spec = {"distributedFramework": framework, "numWorkers": workers}
    longest = 0
    for length in range(1, 64):
        extra = {"useGivenNameAsPrefix": True} if prefix else {}
        if check(name="a" * length, spec=spec, **extra):
            break
        longest = length
    return longest


@pytest.mark.parametrize("framework", ["PyTorch", "TF", "XGBoost", "MPI", "JAX"])
@pytest.mark.parametrize("workers", [1, 9, 10, 100])
@pytest.mark.parametrize("prefix", [False, True])
def test_longest_accepted_name_makes_the_longest_pod_name_exactly_63(
    framework: str, workers: int, prefix: bool
) -> None:
    """Checked against the plan's real pod names, not against the rule's own arithmetic."""
    longest = _longest_allowed(framework, workers, prefix=prefix)
    assert longest > 0
    # the name the workload really gets: the prefix plus '-' and five random characters
    final = "a" * longest + ("-abcde" if prefix else "")
    parsed = request(
        name="a" * longest, spec={"distributedFramework": framework, "numWorkers": workers}
    )
    assert parsed.spec is not None
    plan = build_plan(final, parsed.spec, master_spec_same_as_worker=None, master_spec=None)
    assert max(len(replica.pod_name) for replica in plan.replicas) == 63


# --- master ---------------------------------------------------------------------------------

WORKER_POD = {"image": "python:3.11", "command": "python", "args": "-c pass"}


def test_master_spec_required_when_not_same_as_worker() -> None:
    assert check(masterSpecSameAsWorker=False) == [
        ("masterSpec", "required when masterSpecSameAsWorker is false")
    ]


def test_master_spec_equal_to_worker_is_accepted_when_same_as_worker() -> None:
    assert check(masterSpecSameAsWorker=True, masterSpec=WORKER_POD) == []


def test_master_spec_different_from_worker_is_refused_when_same_as_worker() -> None:
    different = {**WORKER_POD, "image": "python:3.12"}
    assert check(masterSpecSameAsWorker=True, masterSpec=different) == [
        (
            "masterSpec",
            "must be omitted or equal to the worker spec when masterSpecSameAsWorker is true",
        )
    ]


@pytest.mark.parametrize("same", [False, None])
def test_own_master_spec_needs_an_image(same: bool | None) -> None:
    extra: dict[str, Any] = {"masterSpec": {"command": "python"}}
    if same is not None:
        extra["masterSpecSameAsWorker"] = same
    assert check(**extra) == [("masterSpec.image", "required when the master has its own spec")]


@pytest.mark.parametrize("same", [False, None])
def test_own_master_spec_with_an_image_is_accepted(same: bool | None) -> None:
    extra: dict[str, Any] = {"masterSpec": {"image": "other:1", "command": "python"}}
    if same is not None:
        extra["masterSpecSameAsWorker"] = same
    assert check(**extra) == []


# --- pod spec: compute ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("compute", "expected"),
    [
        ({"gpuDevicesRequest": 2}, []),
        ({"gpuRequestType": "portion", "gpuPortionRequest": 0.5}, []),
        ({"gpuRequestType": "portion", "gpuPortionRequest": 1}, []),
        ({"gpuRequestType": "memory", "gpuMemoryRequest": "4Gi"}, []),
        ({"gpuPortionRequest": 0.25}, []),
        (
            {"gpuRequestType": "portion"},
            [("gpuPortionRequest", "required when gpuRequestType is portion")],
        ),
        (
            {"gpuRequestType": "memory"},
            [("gpuMemoryRequest", "required when gpuRequestType is memory")],
        ),
        (
            {"gpuPortionRequest": 0.5, "gpuMemoryRequest": "1G"},
            [
                (
                    "gpuRequestType",
                    "required when both gpuPortionRequest and gpuMemoryRequest are set",
                )
            ],
        ),
        (
            {"gpuRequestType": "memory", "gpuMemoryRequest": "1G", "gpuDevicesRequest": 2},
            [
                (
                    "gpuDevicesRequest",
                    "more than one device is allowed with a fractional request only when "
                    "gpuRequestType is portion",
                )
            ],
        ),
        (
            {"gpuRequestType": "portion", "gpuPortionRequest": 0.5, "gpuDevicesRequest": 4},
            [],
        ),
        ({"gpuPortionRequest": 0}, [("gpuPortionRequest", PORTION_RANGE)]),
        ({"gpuPortionRequest": 1.5}, [("gpuPortionRequest", PORTION_RANGE)]),
        ({"gpuPortionLimit": 0.5}, [("gpuPortionLimit", "allowed only with gpuPortionRequest")]),
        (
            {"gpuPortionRequest": 0.5, "gpuPortionLimit": 0.25},
            [("gpuPortionLimit", "must be greater than or equal to gpuPortionRequest")],
        ),
        ({"gpuPortionRequest": 0.5, "gpuPortionLimit": 0.5}, []),
        (
            {"cpuCoreRequest": 2, "cpuCoreLimit": 1.5},
            [("cpuCoreLimit", "must be greater than or equal to cpuCoreRequest")],
        ),
        ({"cpuCoreRequest": 2, "cpuCoreLimit": 2}, []),
        ({"cpuCoreLimit": 1}, []),
        ({"cpuMemoryRequest": "1.2.3"}, [("cpuMemoryRequest", MEMORY_QUANTITY)]),
        ({"cpuMemoryLimit": "1ki"}, [("cpuMemoryLimit", MEMORY_QUANTITY)]),
        (
            {"gpuRequestType": "memory", "gpuMemoryRequest": "2Gi", "gpuMemoryLimit": "1e"},
            [("gpuMemoryLimit", MEMORY_QUANTITY)],
        ),
        # units are compared by value, not by text: 1Gi is more than 1G, less than 2G
        ({"cpuMemoryRequest": "1G", "cpuMemoryLimit": "1Gi"}, []),
        ({"cpuMemoryRequest": "1500M", "cpuMemoryLimit": "1.5e9"}, []),
        (
            {"cpuMemoryRequest": "2G", "cpuMemoryLimit": "1Gi"},
            [("cpuMemoryLimit", "must be greater than or equal to cpuMemoryRequest")],
        ),
        (
            {"gpuRequestType": "memory", "gpuMemoryRequest": "1Gi", "gpuMemoryLimit": "512Mi"},
            [("gpuMemoryLimit", "must be greater than or equal to gpuMemoryRequest")],
        ),
        # an unparsable request is reported once, not compared with its limit
        (
            {"cpuMemoryRequest": "1.2.3", "cpuMemoryLimit": "1"},
            [("cpuMemoryRequest", MEMORY_QUANTITY)],
        ),
        ({"extendedResources": [{"resource": "vendor.example/fpga", "quantity": "2"}]}, []),
        ({"extendedResources": [{"quantity": "2"}]}, [("extendedResources[0].resource", REQUIRED)]),
        (
            {"extendedResources": [{"resource": "a"}, {}]},
            [
                ("extendedResources[0].quantity", REQUIRED),
                ("extendedResources[1].resource", REQUIRED),
                ("extendedResources[1].quantity", REQUIRED),
            ],
        ),
    ],
)
def test_compute(compute: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert check(spec={"compute": compute}) == [
        (f"spec.compute.{field}", rule) for field, rule in expected
    ]


def test_huge_memory_exponent_is_a_violation_not_a_crash() -> None:
    assert check(spec={"compute": {"cpuMemoryRequest": "1e1000000"}}) == [
        ("spec.compute.cpuMemoryRequest", MEMORY_QUANTITY)
    ]


# --- pod spec: storage ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "item", "missing"),
    [
        ("dataVolume", {}, ["id", "mountPath"]),
        ("dataVolume", {"id": "123e4567-e89b-12d3-a456-426614174000"}, ["mountPath"]),
        ("pvc", {"claimName": "c"}, ["path"]),
        ("hostPath", {"path": "/data"}, ["mountPath"]),
        ("nfs", {}, ["server", "path", "mountPath"]),
        ("git", {"repository": "https://example.com/r.git"}, ["path"]),
        ("s3", {"path": "/b"}, ["bucket"]),
        ("configMapVolume", {"mountPath": "/etc/c"}, ["configMap"]),
        ("secretVolume", {"secret": "s"}, ["mountPath"]),
        ("emptyDirVolume", {"medium": "Memory"}, ["path"]),
    ],
)
def test_storage_required_fields(kind: str, item: dict[str, Any], missing: list[str]) -> None:
    assert check(spec={"storage": {kind: [item]}}) == [
        (f"spec.storage.{kind}[0].{key}", REQUIRED) for key in missing
    ]


def test_storage_indexes_name_the_broken_item() -> None:
    good = {"path": "/data", "mountPath": "/mnt"}
    assert check(spec={"storage": {"hostPath": [good, {"path": "/x"}]}}) == [
        ("spec.storage.hostPath[1].mountPath", REQUIRED)
    ]


def test_existing_pvc_needs_a_claim_name() -> None:
    assert check(spec={"storage": {"pvc": [{"path": "/data", "existingPvc": True}]}}) == [
        ("spec.storage.pvc[0].claimName", "required when existingPvc is true")
    ]
    pvc = {"path": "/data", "existingPvc": True, "claimName": "mine"}
    assert check(spec={"storage": {"pvc": [pvc]}}) == []


def test_new_pvc_size_must_be_a_quantity() -> None:
    pvc: dict[str, Any] = {"path": "/data", "claimInfo": {"size": "1.2.3"}}
    assert check(spec={"storage": {"pvc": [pvc]}}) == [
        ("spec.storage.pvc[0].claimInfo.size", "must be a quantity such as 10Gi")
    ]
    pvc["claimInfo"]["size"] = "10Gi"
    assert check(spec={"storage": {"pvc": [pvc]}}) == []


def test_existing_pvc_size_is_not_checked() -> None:
    pvc = {"path": "/d", "existingPvc": True, "claimName": "c", "claimInfo": {"size": "1.2.3"}}
    assert check(spec={"storage": {"pvc": [pvc]}}) == []


# --- pod spec: everything else ---------------------------------------------------------------


@pytest.mark.parametrize("field", ["backoffLimit", "autoDeletionTimeAfterCompletionSeconds"])
def test_counts_must_not_be_negative(field: str) -> None:
    assert check(spec={field: -1}) == [(f"spec.{field}", AT_LEAST_ZERO)]
    assert check(spec={field: 0}) == []


ENV = "spec.environmentVariables"


@pytest.mark.parametrize(
    ("variable", "expected"),
    [
        ({"name": "A", "value": "1"}, []),
        ({"name": "A", "podFieldRef": {"path": "metadata.name"}}, []),
        ({"value": "1"}, [("[0].name", REQUIRED)]),
        ({"name": "A=B", "value": "1"}, [("[0].name", "must not contain '='")]),
        ({"name": "A", "secret": {"name": "s"}}, [("[0].secret.key", REQUIRED)]),
        ({"name": "A", "secret": {"key": "k"}}, [("[0].secret.name", REQUIRED)]),
        (
            {"name": "A", "configMap": {}},
            [("[0].configMap.name", REQUIRED), ("[0].configMap.key", REQUIRED)],
        ),
        ({"name": "A", "userCredential": {"key": "k"}}, [("[0].userCredential.name", REQUIRED)]),
        ({"name": "A", "podFieldRef": {}}, [("[0].podFieldRef.path", REQUIRED)]),
    ],
)
def test_environment_variables(variable: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert check(spec={"environmentVariables": [variable]}) == [
        (f"{ENV}{where}", rule) for where, rule in expected
    ]


def test_every_broken_environment_variable_is_reported() -> None:
    variables = [{"name": "OK", "value": "1"}, {"value": "x"}, {"name": "B=C"}]
    assert check(spec={"environmentVariables": variables}) == [
        (f"{ENV}[1].name", REQUIRED),
        (f"{ENV}[2].name", "must not contain '='"),
    ]


@pytest.mark.parametrize(
    "key", ["stage", "a", "Stage_1.x-y", "example.com/stage", "a.b-c.d/x", "x" * 63]
)
def test_valid_label_keys(key: str) -> None:
    assert check(spec={"labels": [{"name": key, "value": "v"}]}) == []


@pytest.mark.parametrize(
    "key", ["-stage", "stage-", "st age", "Example.com/stage", "a..b/x", "a/b/c", "a/", "_x"]
)
def test_invalid_label_keys(key: str) -> None:
    assert check(spec={"labels": [{"name": key}]}) == [("spec.labels[0].name", LABEL_KEY)]


def test_label_key_with_empty_prefix_is_invalid() -> None:
    assert check(spec={"labels": [{"name": "/stage"}]}) == [("spec.labels[0].name", LABEL_KEY)]


@pytest.mark.parametrize(
    ("value", "valid"),
    [
        ("", True),
        ("v", True),
        ("v1.2_x-y", True),
        ("x" * 63, True),
        ("x" * 64, False),
        ("-v", False),
        ("v.", False),
        ("a b", False),
        ("a/b", False),
    ],
)
def test_label_values(value: str, valid: bool) -> None:
    expected = [] if valid else [("spec.labels[0].value", LABEL_VALUE)]
    assert check(spec={"labels": [{"name": "k", "value": value}]}) == expected


def test_label_without_name() -> None:
    assert check(spec={"labels": [{"value": "v"}]}) == [("spec.labels[0].name", REQUIRED)]


def test_annotation_without_name() -> None:
    annotations = [{"name": "ok", "value": "1"}, {"value": "2"}]
    assert check(spec={"annotations": annotations}) == [("spec.annotations[1].name", REQUIRED)]


def test_port_without_container_port() -> None:
    ports = [{"container": 8080}, {"name": "metrics"}]
    assert check(spec={"ports": ports}) == [("spec.ports[1].container", REQUIRED)]


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"operator": "Exists"}, []),
        ({"key": "gpu", "operator": "Equal", "value": "a100"}, []),
        ({"key": "gpu", "value": "a100"}, []),
        (
            {"key": "gpu", "operator": "Exists", "value": "a100"},
            [("value", "must be empty when operator is Exists")],
        ),
        (
            {"operator": "Equal", "value": "x"},
            [("operator", "must be Exists when no key is given")],
        ),
        ({"value": "x"}, [("operator", "must be Exists when no key is given")]),
        (
            {"operator": "Exists", "value": "x"},
            [("value", "must be empty when operator is Exists")],
        ),
    ],
)
def test_tolerations(toleration: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert check(spec={"tolerations": [toleration]}) == [
        (f"spec.tolerations[0].{field}", rule) for field, rule in expected
    ]


def test_pod_affinity_type_needs_a_key() -> None:
    assert check(spec={"podAffinity": {"type": "Required"}}) == [
        ("spec.podAffinity.key", "required when type is set")
    ]
    assert check(spec={"podAffinity": {"type": "Preferred", "key": "zone"}}) == []


def test_readiness_http_probe_needs_a_port() -> None:
    def probes(**http_get: Any) -> dict[str, Any]:
        return {"readiness": {"handler": {"httpGet": {"path": "/healthz", **http_get}}}}

    assert check(spec={"probes": probes()}) == [
        ("spec.probes.readiness.handler.httpGet.port", REQUIRED)
    ]
    assert check(spec={"probes": probes(port=8080)}) == []


NODE_VALUES = "spec.nodeAffinityRequired.nodeSelectorTerms[{t}].matchExpressions[{e}].values"


def _affinity(*terms: list[dict[str, Any]]) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchExpressions": term} for term in terms]}


@pytest.mark.parametrize(
    ("operator", "values", "rule"),
    [
        ("In", ["a"], None),
        ("NotIn", ["a", "b"], None),
        ("Exists", None, None),
        ("DoesNotExist", [], None),
        ("Gt", ["3"], None),
        ("Lt", ["-3"], None),
        ("In", None, "required when operator is In"),
        ("NotIn", [], "required when operator is NotIn"),
        ("Exists", ["a"], "must be empty when operator is Exists"),
        ("DoesNotExist", ["a"], "must be empty when operator is DoesNotExist"),
        ("Gt", None, "must hold exactly one integer when operator is Gt"),
        ("Gt", ["1", "2"], "must hold exactly one integer when operator is Gt"),
        ("Lt", ["1.5"], "must hold exactly one integer when operator is Lt"),
        ("Lt", ["ten"], "must hold exactly one integer when operator is Lt"),
    ],
)
def test_node_affinity_values(operator: str, values: list[str] | None, rule: str | None) -> None:
    expression: dict[str, Any] = {"key": "k", "operator": operator}
    if values is not None:
        expression["values"] = values
    expected = [] if rule is None else [(NODE_VALUES.format(t=0, e=0), rule)]
    assert check(spec={"nodeAffinityRequired": _affinity([expression])}) == expected


def test_node_affinity_paths_index_terms_and_expressions() -> None:
    good = {"key": "k", "operator": "Exists"}
    bad = {"key": "k", "operator": "In"}
    affinity = _affinity([good], [good, bad])
    assert check(spec={"nodeAffinityRequired": affinity}) == [
        (NODE_VALUES.format(t=1, e=1), "required when operator is In")
    ]


def test_node_affinity_double_minus_is_not_an_integer() -> None:
    expression = {"key": "k", "operator": "Gt", "values": ["--5"]}
    assert check(spec={"nodeAffinityRequired": _affinity([expression])}) == [
        (NODE_VALUES.format(t=0, e=0), "must hold exactly one integer when operator is Gt")
    ]


@pytest.mark.parametrize(
    ("groups", "valid"),
    [
        ("2", True),
        ("2,3,5", True),
        (" 2 , 3 ", True),
        ("", True),
        ("a", False),
        ("2,", False),
        (",2", False),
        ("2;3", False),
        ("2,,3", False),
    ],
)
def test_supplemental_groups(groups: str, valid: bool) -> None:
    expected = (
        []
        if valid
        else [
            (
                "spec.security.supplementalGroups",
                "must be a comma-separated list of group ids, e.g. '2,3,5'",
            )
        ]
    )
    assert check(spec={"security": {"supplementalGroups": groups}}) == expected


def test_run_as_non_root_refuses_uid_zero() -> None:
    rule = ("spec.security.runAsUid", "must not be 0 when runAsNonRoot is true")
    assert check(spec={"security": {"runAsNonRoot": True, "runAsUid": 0}}) == [rule]
    assert check(spec={"security": {"runAsNonRoot": False, "runAsUid": 0}}) == []
    assert check(spec={"security": {"runAsNonRoot": True, "runAsUid": 1000}}) == []


def test_master_spec_pod_rules_use_the_master_spec_path() -> None:
    master = {
        "image": "other:1",
        "compute": {"gpuRequestType": "portion"},
        "backoffLimit": -1,
        "labels": [{"value": "v"}],
    }
    assert check(masterSpecSameAsWorker=False, masterSpec=master) == [
        ("masterSpec.compute.gpuPortionRequest", "required when gpuRequestType is portion"),
        ("masterSpec.backoffLimit", AT_LEAST_ZERO),
        ("masterSpec.labels[0].name", REQUIRED),
    ]


def test_every_violation_is_reported_at_once_in_a_stable_order() -> None:
    body = request_body(
        name="Bad_Name",
        spec={"slotsPerWorker": 2, "backoffLimit": -1, "compute": {"gpuPortionRequest": 2}},
        without=("image",),
        templateId="0b5e0f4e-5c6a-4d89-9f3e-1f1f1f1f1f1f",
        masterSpecSameAsWorker=False,
        masterSpec={"image": "m:1", "autoDeletionTimeAfterCompletionSeconds": -5},
    )
    expected = [
        ("templateId", "workload templates are not supported"),
        ("spec.image", REQUIRED),
        ("spec.slotsPerWorker", MPI_ONLY),
        ("name", DNS_LABEL),
        ("spec.compute.gpuPortionRequest", PORTION_RANGE),
        ("spec.backoffLimit", AT_LEAST_ZERO),
        ("masterSpec.autoDeletionTimeAfterCompletionSeconds", AT_LEAST_ZERO),
    ]
    parsed = creation_request(body)
    assert found(parsed) == expected
    assert found(parsed) == expected, "the same request gives the same list every time"


def test_rules_do_not_modify_the_request() -> None:
    body = request_body(spec={"compute": {"cpuMemoryRequest": "1Gi"}})
    parsed = creation_request(body)
    before = parsed.to_wire()
    check_request(parsed)
    assert parsed.to_wire() == before
    assert json.loads(json.dumps(before)) == {**body, "projectId": "1"}


@pytest.mark.parametrize("claim", ["../../etc", "Upper", "a/b", "-dash"])
def test_a_claim_name_is_a_dns_label(claim: str) -> None:
    pvc = {"claimName": claim, "path": "/data"}
    assert check(spec={"storage": {"pvc": [pvc]}}) == [
        (
            "spec.storage.pvc[0].claimName",
            "must be a DNS-1123 label: lower-case letters, digits and '-', starting and "
            "ending with a letter or digit",
        )
    ]
