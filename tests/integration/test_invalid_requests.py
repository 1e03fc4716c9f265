"""Bad input: each invalid creation request is answered 400 in the Run:ai error body, with a
message naming the field and the rule, and nothing is stored. Among them the bounds that keep a
request from hurting the server: the server's limits on workers and on command lines, numbers
the store cannot hold (past 64 bits, not finite) and NUL characters."""

from __future__ import annotations

import copy
import json
import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.support.api import Api
from tests.support.requests import distributed

Body = dict[str, Any]
Mutation = Callable[[Body], None]


def spec(**fields: Any) -> Mutation:
    return lambda body: body["spec"].update(fields)


def compute(**fields: Any) -> Mutation:
    return lambda body: body["spec"].setdefault("compute", {}).update(fields)


def top(**fields: Any) -> Mutation:
    return lambda body: body.update(fields)


def drop(*path: str) -> Mutation:
    def apply(body: Body) -> None:
        node = body
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]

    return apply


def both(*mutations: Mutation) -> Mutation:
    def apply(body: Body) -> None:
        for mutation in mutations:
            mutation(body)

    return apply


CASES: list[tuple[str, Mutation, str, str]] = [
    ("name missing", drop("name"), "name", "required"),
    ("name empty", top(name=""), "name", "at least 1 character"),
    ("name not a DNS label", top(name="Bad_Name"), "name", "DNS-1123 label"),
    ("name too long for pod names", top(name="a" * 55), "name", "at most 54 characters"),
    (
        "name too long with prefix",
        top(name="a" * 50, useGivenNameAsPrefix=True),
        "name",
        "at most 48",
    ),
    (
        "useGivenNameAsPrefix not a boolean",
        top(useGivenNameAsPrefix="yes"),
        "useGivenNameAsPrefix",
        "boolean",
    ),
    ("projectId missing", drop("projectId"), "projectId", "required"),
    ("projectId unknown", top(projectId="999"), "projectId", "no project has the id '999'"),
    ("clusterId missing", drop("clusterId"), "clusterId", "required"),
    ("clusterId not a uuid", top(clusterId="cluster-1"), "clusterId", "UUID"),
    (
        "clusterId unknown",
        top(clusterId=str(uuid.UUID(int=7))),
        "clusterId",
        "no cluster has the id",
    ),
    ("templateId given", top(templateId=str(uuid.uuid4())), "templateId", "not supported"),
    ("unknown top-level field", top(priority=3), "priority", "not a known field"),
    ("spec missing", drop("spec"), "spec", "required"),
    (
        "framework missing",
        drop("spec", "distributedFramework"),
        "spec.distributedFramework",
        "required",
    ),
    (
        "framework unknown",
        spec(distributedFramework="Horovod"),
        "spec.distributedFramework",
        "'MPI'",
    ),
    ("numWorkers missing", drop("spec", "numWorkers"), "spec.numWorkers", "required"),
    ("numWorkers zero", spec(numWorkers=0), "spec.numWorkers", "greater than or equal to 1"),
    ("numWorkers as string", spec(numWorkers="2"), "spec.numWorkers", "valid integer"),
    (
        "numWorkers above the server's limit",
        spec(numWorkers=1001),
        "spec.numWorkers",
        "less than or equal to 1000",
    ),
    (
        "numWorkers of a billion",
        spec(numWorkers=1_000_000_000),
        "spec.numWorkers",
        "less than or equal to 1000",
    ),
    (
        "maxReplicas above the server's limit",
        spec(numWorkers=2, minReplicas=1, maxReplicas=5000),
        "spec.maxReplicas",
        "less than or equal to 1000",
    ),
    (
        "args longer than Run:ai's limit",
        spec(args="x" * 10_001),
        "spec.args",
        "at most 10000 characters",
    ),
    (
        "command longer than Run:ai's limit",
        spec(command="x" * 10_001),
        "spec.command",
        "at most 10000 characters",
    ),
    (
        "master args longer than Run:ai's limit",
        top(masterSpecSameAsWorker=False, masterSpec={"image": "x", "args": "y" * 10_001}),
        "masterSpec.args",
        "at most 10000 characters",
    ),
    ("args that do not split", spec(args="-c 'unclosed"), "spec.args", "No closing quotation"),
    (
        "numWorkers past 64 bits",
        spec(numWorkers=2**63),
        "spec.numWorkers",
        "signed 64-bit integer",
    ),
    (
        "backoffLimit below 64 bits",
        spec(backoffLimit=-(2**63) - 1),
        "spec.backoffLimit",
        "signed 64-bit integer",
    ),
    (
        "grace period of centuries",
        spec(terminationGracePeriodSeconds=2**40),
        "spec.terminationGracePeriodSeconds",
        "less than or equal to 2147483647",
    ),
    (
        "auto deletion after centuries",
        spec(autoDeletionTimeAfterCompletionSeconds=2**40),
        "spec.autoDeletionTimeAfterCompletionSeconds",
        "less than or equal to 2147483647",
    ),
    (
        "uid past Kubernetes' range",
        spec(security={"runAsUid": 2**31}),
        "spec.security.runAsUid",
        "less than or equal to 2147483647",
    ),
    (
        "supplemental group past Kubernetes' range",
        spec(security={"supplementalGroups": "2, 99999999999999999999999"}),
        "spec.security.supplementalGroups",
        "each group id must be less than or equal to 2147483647",
    ),
    (
        "negative gid",
        spec(security={"runAsGid": -1}),
        "spec.security.runAsGid",
        "greater than or equal to 0",
    ),
    (
        "image longer than the store keeps",
        spec(image="i" * 1025),
        "spec.image",
        "at most 1024 characters",
    ),
    (
        "category longer than the store keeps",
        spec(category="c" * 256),
        "spec.category",
        "at most 255 characters",
    ),
    (
        "priority class longer than the store keeps",
        spec(priorityClass="p" * 256),
        "spec.priorityClass",
        "at most 255 characters",
    ),
    (
        "external port out of range",
        spec(ports=[{"container": 8080, "external": 2**31 - 1}]),
        "spec.ports[0].external",
        "less than or equal to 65535",
    ),
    (
        "projectId past the store's ids",
        top(projectId=str(2**31)),
        "projectId",
        f"no project has the id '{2**31}'",
    ),
    (
        "projectId past 64 bits",
        top(projectId="9" * 30),
        "projectId",
        "no project has the id",
    ),
    ("NUL in the name", top(name="train\x00"), "name", "NUL character"),
    ("NUL in args", spec(args="-c '\x00'"), "spec.args", "NUL character"),
    (
        "NUL in an environment variable",
        spec(environmentVariables=[{"name": "A", "value": "a\x00b"}]),
        "spec.environmentVariables[0].value",
        "NUL character",
    ),
    (
        "NUL in a label's key",
        spec(labels=[{"name": "a\x00", "value": "b"}]),
        "spec.labels[0].name",
        "NUL character",
    ),
    ("image missing", drop("spec", "image"), "spec.image", "required"),
    ("unknown spec field", spec(gpuDeviceRequest=1), "spec.gpuDeviceRequest", "not a known field"),
    (
        "portion type without portion",
        compute(gpuRequestType="portion", gpuDevicesRequest=1),
        "spec.compute.gpuPortionRequest",
        "required when gpuRequestType is portion",
    ),
    (
        "memory type without memory",
        compute(gpuRequestType="memory"),
        "spec.compute.gpuMemoryRequest",
        "required when gpuRequestType is memory",
    ),
    (
        "gpuRequestType unknown",
        compute(gpuRequestType="half"),
        "spec.compute.gpuRequestType",
        "'portion'",
    ),
    (
        "several devices with memory type",
        compute(gpuRequestType="memory", gpuMemoryRequest="4G", gpuDevicesRequest=2),
        "spec.compute.gpuDevicesRequest",
        "only when gpuRequestType is portion",
    ),
    (
        "portion limit below request",
        compute(gpuRequestType="portion", gpuPortionRequest=0.5, gpuPortionLimit=0.25),
        "spec.compute.gpuPortionLimit",
        "greater than or equal to gpuPortionRequest",
    ),
    (
        "portion above one",
        compute(gpuRequestType="portion", gpuPortionRequest=1.5),
        "spec.compute.gpuPortionRequest",
        "at most 1",
    ),
    (
        "negative cpu request",
        compute(cpuCoreRequest=-1),
        "spec.compute.cpuCoreRequest",
        "greater than or equal to 0",
    ),
    (
        "cpu limit below request",
        compute(cpuCoreRequest=2, cpuCoreLimit=1),
        "spec.compute.cpuCoreLimit",
        "greater than or equal to cpuCoreRequest",
    ),
    (
        "memory request not a quantity",
        compute(cpuMemoryRequest="lots"),
        "spec.compute.cpuMemoryRequest",
        "pattern",
    ),
    (
        "memory limit below request",
        compute(cpuMemoryRequest="2G", cpuMemoryLimit="1G"),
        "spec.compute.cpuMemoryLimit",
        "greater than or equal to cpuMemoryRequest",
    ),
    (
        "negative GPU devices",
        compute(gpuDevicesRequest=-1),
        "spec.compute.gpuDevicesRequest",
        "greater than or equal to 0",
    ),
    (
        "elastic replicas for MPI",
        spec(distributedFramework="MPI", minReplicas=1, maxReplicas=4),
        "spec.minReplicas",
        "only when distributedFramework is PyTorch",
    ),
    (
        "maxReplicas below minReplicas",
        spec(minReplicas=3, maxReplicas=2),
        "spec.maxReplicas",
        "greater than or equal to minReplicas",
    ),
    (
        "numWorkers above maxReplicas",
        spec(numWorkers=5, minReplicas=1, maxReplicas=4),
        "spec.numWorkers",
        "less than or equal to maxReplicas",
    ),
    (
        "numWorkers below minReplicas",
        spec(numWorkers=2, minReplicas=3, maxReplicas=3),
        "spec.numWorkers",
        "greater than or equal to minReplicas: an elastic PyTorch workload (minReplicas/"
        "maxReplicas) is numWorkers worker pods, each a node of the rendezvous",
    ),
    (
        "a master of its own for elastic PyTorch",
        both(
            spec(numWorkers=2, minReplicas=2, maxReplicas=2),
            top(masterSpecSameAsWorker=False, masterSpec={"image": "python:3.12"}),
        ),
        "masterSpec",
        "it is worker pods only, with no master pod",
    ),
    (
        "slotsPerWorker for PyTorch",
        spec(slotsPerWorker=2),
        "spec.slotsPerWorker",
        "only when distributedFramework is MPI",
    ),
    (
        "sshAuthMountPath for TF",
        spec(distributedFramework="TF", sshAuthMountPath="/home/me/.ssh"),
        "spec.sshAuthMountPath",
        "only when distributedFramework is MPI",
    ),
    (
        "launcher policy for JAX",
        spec(distributedFramework="JAX", mpiLauncherCreationPolicy="AtStartup"),
        "spec.mpiLauncherCreationPolicy",
        "only when distributedFramework is MPI",
    ),
    (
        "zero slots for MPI",
        spec(distributedFramework="MPI", slotsPerWorker=0),
        "spec.slotsPerWorker",
        "greater than or equal to 1",
    ),
    (
        "master spec missing",
        top(masterSpecSameAsWorker=False),
        "masterSpec",
        "required when masterSpecSameAsWorker is false",
    ),
    (
        "master spec contradicts",
        top(masterSpecSameAsWorker=True, masterSpec={"image": "other:1", "command": "x"}),
        "masterSpec",
        "equal to the worker spec",
    ),
    (
        "environment variable without name",
        spec(environmentVariables=[{"value": "1"}]),
        "spec.environmentVariables[0].name",
        "required",
    ),
    (
        "secret reference without key",
        spec(environmentVariables=[{"name": "TOKEN", "secret": {"name": "creds"}}]),
        "spec.environmentVariables[0].secret.key",
        "required",
    ),
    (
        "label key invalid",
        spec(labels=[{"name": "bad label", "value": "x"}]),
        "spec.labels[0].name",
        "label key",
    ),
    (
        "toleration effect unknown",
        spec(tolerations=[{"key": "k", "operator": "Equal", "effect": "Sometimes"}]),
        "spec.tolerations[0].effect",
        "'NoSchedule'",
    ),
    (
        "toleration Exists with value",
        spec(tolerations=[{"key": "k", "operator": "Exists", "value": "v"}]),
        "spec.tolerations[0].value",
        "empty when operator is Exists",
    ),
    (
        "port out of range",
        spec(ports=[{"container": 70000}]),
        "spec.ports[0].container",
        "less than or equal to 65535",
    ),
    (
        "host path without mount path",
        spec(storage={"hostPath": [{"path": "/data"}]}),
        "spec.storage.hostPath[0].mountPath",
        "required",
    ),
    (
        "existing PVC without claim",
        spec(storage={"pvc": [{"path": "/data", "existingPvc": True}]}),
        "spec.storage.pvc[0].claimName",
        "required when existingPvc is true",
    ),
    (
        "config map mode invalid",
        spec(
            storage={
                "configMapVolume": [{"configMap": "c", "mountPath": "/c", "defaultMode": "777"}]
            }
        ),
        "spec.storage.configMapVolume[0].defaultMode",
        "at least 4 characters",
    ),
    (
        "capability unknown",
        spec(security={"capabilities": ["FLY"]}),
        "spec.security.capabilities[0]",
        "'AUDIT_CONTROL'",
    ),
    (
        "non-root as root",
        spec(security={"runAsNonRoot": True, "runAsUid": 0}),
        "spec.security.runAsUid",
        "must not be 0 when runAsNonRoot is true",
    ),
    (
        "supplemental groups invalid",
        spec(security={"supplementalGroups": "wheel,adm"}),
        "spec.security.supplementalGroups",
        "comma-separated list of group ids",
    ),
    (
        "probe period zero",
        spec(probes={"readiness": {"periodSeconds": 0}}),
        "spec.probes.readiness.periodSeconds",
        "greater than or equal to 1",
    ),
    ("restart policy unknown", spec(restartPolicy="Sometimes"), "spec.restartPolicy", "'Always'"),
    (
        "negative backoff limit",
        spec(backoffLimit=-1),
        "spec.backoffLimit",
        "greater than or equal to 0",
    ),
    (
        "negative grace period",
        spec(terminationGracePeriodSeconds=-5),
        "spec.terminationGracePeriodSeconds",
        "greater than or equal to 0",
    ),
    (
        "node affinity In without values",
        spec(
            nodeAffinityRequired={
                "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In"}]}]
            }
        ),
        "spec.nodeAffinityRequired.nodeSelectorTerms[0].matchExpressions[0].values",
        "required when operator is In",
    ),
    (
        "pod affinity without key",
        spec(podAffinity={"type": "Required"}),
        "spec.podAffinity.key",
        "required when type is set",
    ),
    (
        "master spec field invalid",
        both(
            top(
                masterSpecSameAsWorker=False,
                masterSpec={"image": "x", "compute": {"cpuCoreRequest": -2}},
            )
        ),
        "masterSpec.compute.cpuCoreRequest",
        "greater than or equal to 0",
    ),
]


@pytest.mark.parametrize(("case", "mutation", "field", "rule"), CASES, ids=[c[0] for c in CASES])
def test_invalid_request_is_refused_and_nothing_stored(
    module_api: Api, case: str, mutation: Mutation, field: str, rule: str
) -> None:
    body = distributed(module_api.cluster_id(), name=f"case-{uuid.uuid4().hex[:8]}")
    body = copy.deepcopy(body)
    mutation(body)
    before = module_api.get("/api/v1/workloads/count").json()["count"]
    response = module_api.post("/api/v1/workloads/distributed", json=body)
    assert response.status_code == 400, (case, response.text)
    error = response.json()
    assert error["code"] == 400
    message = error["message"] + "\n" + error.get("details", "")
    assert f"{field}: " in message, (case, message)
    assert rule in message, (case, message)
    assert module_api.get("/api/v1/workloads/count").json()["count"] == before


RAW_NUMBERS = [
    ("1e400", "must be a finite number"),
    ("-1e400", "must be a finite number"),
    ("NaN", "must be a finite number"),
    ("Infinity", "must be a finite number"),
    ("-Infinity", "must be a finite number"),
    (str(2**63), "signed 64-bit integer"),
    (str(-(2**63) - 1), "signed 64-bit integer"),
    ("9" * 5000, "signed 64-bit integer"),
    ("1" + "0" * 400 + ".5", "must be a finite number"),
]


@pytest.mark.parametrize(("number", "rule"), RAW_NUMBERS, ids=[n[:12] for n, _ in RAW_NUMBERS])
@pytest.mark.parametrize(
    ("where", "field"),
    [
        (("spec", "compute", "cpuCoreRequest"), "spec.compute.cpuCoreRequest"),
        (("spec", "numWorkers"), "spec.numWorkers"),
        (("spec", "ports"), "spec.ports[0]"),
    ],
    ids=["float field", "integer field", "in a list"],
)
def test_a_number_that_cannot_be_stored_is_refused(
    module_api: Api, number: str, rule: str, where: tuple[str, ...], field: str
) -> None:
    """Written into the JSON text as is: these are not numbers Python's encoder writes."""
    body = distributed(module_api.cluster_id(), name=f"case-{uuid.uuid4().hex[:8]}")
    node = body
    for key in where[:-1]:
        node = node.setdefault(key, {})
    node[where[-1]] = ["@number@"] if field.endswith("[0]") else "@number@"
    text = json.dumps(body).replace('"@number@"', number)
    before = module_api.get("/api/v1/workloads/count").json()["count"]
    response = module_api.post(
        "/api/v1/workloads/distributed",
        content=text,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["code"] == 400
    assert error["message"].startswith(f"{field}: "), error
    assert rule in error["message"], error
    assert module_api.get("/api/v1/workloads/count").json()["count"] == before


@pytest.mark.parametrize(
    ("payload", "rule"),
    [
        (b"{not json", "body: is not valid JSON"),
        (b"[1, 2]", "body: input should be an object"),
        (b"", "body: a JSON object is required"),
    ],
    ids=["malformed", "array", "empty"],
)
def test_body_that_is_not_an_object_is_refused(module_api: Api, payload: bytes, rule: str) -> None:
    response = module_api.post(
        "/api/v1/workloads/distributed",
        content=payload,
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 400
    assert rule in response.json()["message"]


def test_there_are_at_least_forty_cases() -> None:
    assert len(CASES) >= 40
