"""Validators of rendered manifests: custom resources against their CRD's openAPIV3Schema,
built-in kinds against Kubernetes' own schemas (`kubernetes-validate`), and the API server's
and the operators' rules that no schema states.

A CRD's structural schema becomes JSON Schema as the API server reads it:
- `x-kubernetes-int-or-string` is an integer or a string (the CRDs already spell it `anyOf`);
- an object with `properties` takes no other fields unless `x-kubernetes-preserve-unknown-fields`
  (the API server would prune them; with strict field validation, as `kubectl apply` uses by
  default, it refuses them: either way a field lockstep writes there would be lost);
- `x-kubernetes-list-type: map` items are unique by their `x-kubernetes-list-map-keys` (a
  missing key counts as the key's default), `set` items are unique;
- `format: int32/int64` bound integers;
- `x-kubernetes-validations` are CEL rules: only transition rules (`oldSelf`), which apply to
  updates, are known here; any other rule fails loudly rather than being skipped.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import yaml

from tests.unit.specs import reference_file

KUBERNETES_VERSION = "1.30"
CRDS = reference_file("k8s/crds")
CRD_FILES: dict[tuple[str, str], str] = {
    ("kubeflow.org/v1", "PyTorchJob"): "kubeflow.org_pytorchjobs.yaml",
    ("kubeflow.org/v1", "TFJob"): "kubeflow.org_tfjobs.yaml",
    ("kubeflow.org/v1", "XGBoostJob"): "kubeflow.org_xgboostjobs.yaml",
    ("kubeflow.org/v1", "JAXJob"): "kubeflow.org_jaxjobs.yaml",
    ("kubeflow.org/v2beta1", "MPIJob"): "kubeflow.org_mpijobs.v2beta1.mpi-operator.yaml",
    ("scheduling.run.ai/v2", "Queue"): "scheduling.run.ai_queues.yaml",
}
BUILT_IN = {
    ("v1", "PersistentVolumeClaim"),
    ("v1", "Service"),
    ("v1", "ConfigMap"),
    ("v1", "Secret"),
    ("v1", "PodTemplate"),
    ("v1", "Namespace"),
    ("networking.k8s.io/v1", "Ingress"),
    ("batch/v1", "Job"),
    ("apps/v1", "StatefulSet"),
}

VOLCANO_POD_GROUP: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "scheduling.volcano.sh/v1beta1"},
        "kind": {"const": "PodGroup"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "minMember": {"type": "integer", "format": "int32"},
                "queue": {"type": "string"},
                "priorityClassName": {"type": "string"},
                "minResources": {"type": "object"},
                "minTaskMember": {"type": "object"},
                "networkTopology": {"type": "object"},
            },
        },
    },
}
"""No CRD of Volcano is kept with the tests: this is the spec of its PodGroup
(scheduling.volcano.sh/v1beta1) as its API types state it, written by hand."""

_QUANTITIES: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {
        "type": "string",
        "pattern": (
            r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
            r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
        ),
    },
}
VOLCANO_QUEUE: dict[str, Any] = {
    "type": "object",
    "required": ["apiVersion", "kind", "metadata", "spec"],
    "additionalProperties": False,
    "properties": {
        "apiVersion": {"const": "scheduling.volcano.sh/v1beta1"},
        "kind": {"const": "Queue"},
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "weight": {"type": "integer", "format": "int32", "minimum": 1},
                "capability": _QUANTITIES,
                "deserved": _QUANTITIES,
                "guarantee": {"type": "object"},
                "reclaimable": {"type": "boolean"},
                "parent": {"type": "string"},
                "priority": {"type": "integer", "format": "int32"},
                "type": {"type": "string"},
                "extendClusters": {"type": "array"},
                "affinity": {"type": "object"},
                "dequeueStrategy": {"type": "string"},
            },
        },
    },
}
"""Volcano's Queue (scheduling.volcano.sh/v1beta1) as its API types state it, written by hand
like its PodGroup; `weight` at least 1 as its admission webhook requires."""

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
"""libyaml's safe loader where PyYAML has it (the CRDs are large), else the Python one."""

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
FORMATS = jsonschema.FormatChecker()


def _int_format(name: str) -> None:
    low, high = _INT_RANGES[name]

    @FORMATS.checks(name)
    def check(instance: object) -> bool:
        return not isinstance(instance, int) or low <= instance <= high

    del check


for _name in _INT_RANGES:
    _int_format(_name)


def _map_key(item: Mapping[str, Any], keys: list[str], schema: Mapping[str, Any]) -> str:
    properties = schema.get("items", {}).get("properties", {})
    return json.dumps([item.get(k, properties.get(k, {}).get("default")) for k in keys])


def _list_type(
    validator: Any, list_type: str, instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    del validator
    if not isinstance(instance, list):
        return
    if list_type == "map":
        keys = schema["x-kubernetes-list-map-keys"]
        seen = [_map_key(item, keys, schema) for item in instance if isinstance(item, dict)]
    elif list_type == "set":
        seen = [json.dumps(item, sort_keys=True) for item in instance]
    else:
        return
    duplicates = {key for key in seen if seen.count(key) > 1}
    if duplicates:
        yield jsonschema.ValidationError(f"duplicate {list_type} entries {sorted(duplicates)}")


TRANSITION_ONLY = re.compile(r"\boldSelf\b")


def _cel_rules(
    validator: Any, rules: list[dict[str, Any]], instance: Any, schema: Mapping[str, Any]
) -> Iterator[jsonschema.ValidationError]:
    del validator, instance, schema
    for rule in rules:
        if not TRANSITION_ONLY.search(rule["rule"]):
            yield jsonschema.ValidationError(f"CEL rule not checked here: {rule['rule']}")


_extend: Any = jsonschema.validators.extend  # untyped in its stubs
StructuralValidator = _extend(
    jsonschema.Draft202012Validator,
    {"x-kubernetes-list-type": _list_type, "x-kubernetes-validations": _cel_rules},
)


def structural_to_json_schema(node: Any) -> Any:
    """A CRD schema as JSON Schema with the API server's reading (see the module's text)."""
    if isinstance(node, list):
        return [structural_to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    result = {key: structural_to_json_schema(value) for key, value in node.items()}
    if result.get("x-kubernetes-int-or-string") and "anyOf" not in result:
        result["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    if result.get("nullable") and isinstance(result.get("type"), str):
        result["type"] = [result["type"], "null"]
    if (
        "properties" in result
        and "additionalProperties" not in result
        and not result.get("x-kubernetes-preserve-unknown-fields")
    ):
        result["additionalProperties"] = False
    return result


@cache
def crd_validator(api_version: str, kind: str) -> Any:
    """The validator of one kind's served version, from its CRD file."""
    path: Path = CRDS / CRD_FILES[(api_version, kind)]
    crd = yaml.load(path.read_text(), Loader=SAFE_LOADER)  # noqa: S506 (a safe loader)
    version = api_version.split("/")[1]
    (served,) = [v for v in crd["spec"]["versions"] if v["name"] == version and v["served"]]
    schema = structural_to_json_schema(copy.deepcopy(served["schema"]["openAPIV3Schema"]))
    StructuralValidator.check_schema(schema)
    return StructuralValidator(schema, format_checker=FORMATS)


@cache
def volcano_validator(kind: str = "PodGroup") -> Any:
    schema = VOLCANO_QUEUE if kind == "Queue" else VOLCANO_POD_GROUP
    return jsonschema.Draft202012Validator(schema, format_checker=FORMATS)


def schema_errors(manifest: Mapping[str, Any]) -> list[str]:
    """What the manifest's schema refuses: a CRD's, or Kubernetes' own (strict: no unknown
    fields)."""
    key = (manifest["apiVersion"], manifest["kind"])
    if key in CRD_FILES:
        validator = crd_validator(*key)
    elif key in {
        ("scheduling.volcano.sh/v1beta1", "PodGroup"),
        ("scheduling.volcano.sh/v1beta1", "Queue"),
    }:
        validator = volcano_validator(key[1])
    elif key in BUILT_IN:
        try:
            kubernetes_validate.validate(dict(manifest), KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as error:
            return [f"{list(error.path)}: {error.message}"]
        return []
    else:
        return [f"no schema known for {key}"]
    return [
        f"{list(error.absolute_path)}: {error.message}" for error in validator.iter_errors(manifest)
    ]


def as_pod_template(template: Mapping[str, Any], *, name: str, namespace: str) -> dict[str, Any]:
    """A replica's pod template as a PodTemplate object, which Kubernetes' schemas know."""
    return {
        "apiVersion": "v1",
        "kind": "PodTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "template": dict(template),
    }


# The API server's and operators' rules beyond the schemas (apimachinery validation).

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
DNS_1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
IANA_SVC_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")


def is_label(value: str, pattern: re.Pattern[str] = DNS_LABEL) -> bool:
    return len(value) <= 63 and pattern.fullmatch(value) is not None


def is_subdomain(value: str) -> bool:
    return len(value) <= 253 and DNS_SUBDOMAIN.fullmatch(value) is not None


def label_errors(labels: Mapping[str, str], where: str) -> list[str]:
    errors = []
    for key, value in labels.items():
        prefix, _, name = key.rpartition("/")
        if (prefix and not is_subdomain(prefix)) or not is_label(name, LABEL_NAME):
            errors.append(f"{where}: label key {key!r}")
        if value and not is_label(value, LABEL_NAME):
            errors.append(f"{where}: label value {value!r}")
    return errors


def metadata_errors(meta: Mapping[str, Any], where: str) -> list[str]:
    errors = label_errors(meta.get("labels") or {}, where)
    for key in meta.get("annotations") or {}:
        prefix, _, name = key.rpartition("/")
        if (prefix and not is_subdomain(prefix)) or not is_label(name, LABEL_NAME):
            errors.append(f"{where}: annotation key {key!r}")
    return errors


def pod_errors(template: Mapping[str, Any], where: str) -> list[str]:
    """What the API server refuses in a pod template beyond its schema."""
    errors = metadata_errors(template.get("metadata") or {}, where)
    spec = template["spec"]
    volumes = [volume["name"] for volume in spec.get("volumes") or ()]
    errors += [f"{where}: volume name {v!r}" for v in volumes if not is_label(v)]
    errors += [f"{where}: duplicate volume {v!r}" for v in set(volumes) if volumes.count(v) > 1]
    containers = [*spec.get("initContainers", ()), *spec["containers"]]
    names = [c["name"] for c in containers]
    errors += [f"{where}: container name {n!r}" for n in names if not is_label(n)]
    errors += [f"{where}: duplicate container {n!r}" for n in set(names) if names.count(n) > 1]
    for c in containers:
        paths = []
        for mount in [*c.get("volumeMounts", ()), *c.get("volumeDevices", ())]:
            if mount["name"] not in volumes:
                errors.append(f"{where}: {c['name']} mounts unknown volume {mount['name']!r}")
            paths.append(mount.get("mountPath", mount.get("devicePath")))
        duplicates = {p for p in paths if paths.count(p) > 1}
        errors += [f"{where}: {c['name']} mounts twice at {p!r}" for p in duplicates]
        if not c.get("image"):
            errors.append(f"{where}: {c['name']} has no image")
        for port in c.get("ports", ()):
            if "name" in port and not (
                len(port["name"]) <= 15 and IANA_SVC_NAME.fullmatch(port["name"])
            ):
                errors.append(f"{where}: port name {port['name']!r}")
    for toleration in spec.get("tolerations", ()):
        if "tolerationSeconds" in toleration and toleration.get("effect") != "NoExecute":
            errors.append(f"{where}: tolerationSeconds without NoExecute")
        if toleration.get("operator") == "Exists" and toleration.get("value"):
            errors.append(f"{where}: a value with operator Exists")
    for preference in (
        spec.get("affinity", {})
        .get("nodeAffinity", {})
        .get("preferredDuringSchedulingIgnoredDuringExecution", ())
    ):
        if not 1 <= preference["weight"] <= 100:
            errors.append(f"{where}: weight {preference['weight']}")
    return errors


def object_errors(manifest: Mapping[str, Any], manifests: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the API server refuses in an object's metadata and, for Services and Ingresses,
    in their spec beyond its schema."""
    meta = manifest["metadata"]
    where = f"{manifest['kind']}/{meta['name']}"
    errors = metadata_errors(meta, where)
    name_ok = (
        is_label(meta["name"], DNS_1035_LABEL)
        if manifest["kind"] == "Service"
        else (is_subdomain(meta["name"]))
    )
    if not name_ok:
        errors.append(f"{where}: name")
    if manifest["kind"] == "Service":
        ports = manifest["spec"].get("ports") or []
        if not ports and manifest["spec"].get("clusterIP") != "None":
            errors.append(f"{where}: ports are required unless the Service is headless")
        names = [p.get("name") for p in ports]
        if len(ports) > 1 and (None in names or len(set(names)) != len(names)):
            errors.append(f"{where}: ports need unique names")
        numbers = [p["port"] for p in ports]
        if len(set(numbers)) != len(numbers):
            errors.append(f"{where}: duplicate ports")
        if any("nodePort" in p for p in ports) and manifest["spec"]["type"] == "ClusterIP":
            errors.append(f"{where}: nodePort on a ClusterIP Service")
    if manifest["kind"] == "Ingress":
        services = {
            m["metadata"]["name"]: {p["port"] for p in m["spec"].get("ports") or []}
            for m in manifests
            if m["kind"] == "Service"
        }
        for rule in manifest["spec"]["rules"]:
            for path in rule["http"]["paths"]:
                backend = path["backend"]["service"]
                if backend["port"]["number"] not in services.get(backend["name"], set()):
                    errors.append(f"{where}: backend {backend} is not a rendered Service port")
    return errors


V1_RULES: dict[str, tuple[str, set[str]]] = {
    "PyTorchJob": ("pytorch", {"Master", "Worker"}),
    "TFJob": ("tensorflow", {"Chief", "Master", "PS", "Worker", "Evaluator"}),
    "XGBoostJob": ("xgboost", {"Master", "Worker"}),
    "JAXJob": ("jax", {"Worker"}),
}
LEADER_TYPES = {"Master", "Chief", "Launcher"}


def operator_errors(job: Mapping[str, Any]) -> list[str]:
    """What the operators' admission webhooks refuse (Training Operator v1.9 `validate*Job`,
    mpi-operator v0.8 `ValidateMPIJob`)."""
    kind = job["kind"]
    spec = job["spec"]
    errors = []
    if not is_label(job["metadata"]["name"], DNS_1035_LABEL):
        errors.append("job name is not a DNS-1035 label")
    key = next(k for k in spec if k.endswith("ReplicaSpecs"))
    replica_specs = spec[key]
    for name, replica in replica_specs.items():
        containers = replica["template"]["spec"]["containers"]
        if any(not c.get("image") for c in containers):
            errors.append(f"{name}: a container without image")
        if name in LEADER_TYPES and replica.get("replicas") != 1:
            errors.append(f"{name}: replicas must be 1")
        if name == "Worker" and replica.get("replicas", 1) < 1:
            errors.append("Worker: replicas must be at least 1")
    if kind in V1_RULES:
        container_name, types = V1_RULES[kind]
        for name, replica in replica_specs.items():
            if name not in types:
                errors.append(f"replica type {name} is not one of {sorted(types)}")
            names = {c["name"] for c in replica["template"]["spec"]["containers"]}
            if container_name not in names:
                errors.append(f"{name}: no container named {container_name}")
    else:
        policy = spec.get("runPolicy", {})
        if policy.get("cleanPodPolicy") not in {"None", "Running", "All"}:
            errors.append("MPIJob: cleanPodPolicy required")
        if spec.get("slotsPerWorker") is None or not spec.get("sshAuthMountPath"):
            errors.append("MPIJob: slotsPerWorker and sshAuthMountPath required")
        if spec.get("mpiImplementation") not in {"OpenMPI", "Intel", "MPICH"}:
            errors.append("MPIJob: mpiImplementation")
        if "Launcher" not in replica_specs:
            errors.append("MPIJob: a Launcher is required")
        for name, replica in replica_specs.items():
            if replica.get("restartPolicy") not in {"Never", "OnFailure"}:
                errors.append(f"{name}: restartPolicy {replica.get('restartPolicy')}")
            if replica.get("replicas") is None:
                errors.append(f"{name}: replicas required")
    return errors
