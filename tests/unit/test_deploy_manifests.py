"""deploy/kubernetes: the manifests that run lockstep itself in a cluster.

Every document validates against Kubernetes' own schemas (`kubernetes-validate`, strict: no
unknown fields); the ClusterRole grants exactly what the Kubernetes runtime needs; the
Deployment runs several replicas of the Kubernetes runtime on the shared PostgreSQL, with the
shared keys where lockstep reads them; and kustomization.yaml names every manifest. No cluster
is reachable from the machines the tests run on, so nothing here is applied.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from fastapi.routing import APIRoute

from lockstep.api.routes import health
from lockstep.config import Settings
from lockstep.store.database import normalize_url

KUBERNETES_VERSION = "1.30"
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "kubernetes"
KUSTOMIZATION = "kustomization.yaml"
EXAMPLE_SECRETS = "secrets.example.yaml"
NAMESPACE = "lockstep-system"

Manifest = dict[str, Any]

KUBEFLOW_JOBS = ("pytorchjobs", "mpijobs", "tfjobs", "xgboostjobs", "jaxjobs")
ALL_VERBS = frozenset({"get", "list", "watch", "create", "patch", "update", "delete"})
READ = frozenset({"get", "list", "watch"})
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
RUNTIME_NEEDS: dict[tuple[str, str], frozenset[str]] = {
    **{("kubeflow.org", jobs): ALL_VERBS for jobs in KUBEFLOW_JOBS},
    ("", "pods"): READ,
    ("", "pods/log"): frozenset({"get"}),
    ("", "events"): READ,
    ("", "services"): ALL_VERBS,
    ("", "configmaps"): ALL_VERBS,
    ("", "secrets"): ALL_VERBS,
    ("", "persistentvolumeclaims"): ALL_VERBS,
    ("", "namespaces"): frozenset({"get", "list", "create"}),
    ("", "nodes"): READ,
    ("networking.k8s.io", "ingresses"): ALL_VERBS,
    ("scheduling.volcano.sh", "podgroups"): ALL_VERBS,
    ("scheduling.run.ai", "queues"): READ,
}
"""(API group, resource) → the verbs lockstep's Kubernetes runtime uses on it: all it may do."""


def manifest_files() -> list[Path]:
    return sorted(path for path in DEPLOY.glob("*.yaml") if path.name != KUSTOMIZATION)


def documents(path: Path) -> list[Manifest]:
    with path.open() as handle:
        return [document for document in yaml.safe_load_all(handle) if document is not None]


def every_document() -> Iterator[tuple[str, Manifest]]:
    for path in manifest_files():
        for document in documents(path):
            yield f"{path.name}:{document['kind']}/{document['metadata']['name']}", document


def deployed() -> list[Manifest]:
    """What `kubectl apply -k` applies: the documents of kustomization.yaml's resources."""
    return [
        document for name in kustomization()["resources"] for document in documents(DEPLOY / name)
    ]


def kustomization() -> Manifest:
    [document] = documents(DEPLOY / KUSTOMIZATION)
    return document


def one(manifests: list[Manifest], kind: str) -> Manifest:
    [found] = [manifest for manifest in manifests if manifest["kind"] == kind]
    return found


def server() -> Manifest:
    """The Deployment's lockstep container."""
    containers: list[Manifest] = one(deployed(), "Deployment")["spec"]["template"]["spec"][
        "containers"
    ]
    [container] = containers
    return container


def environment() -> dict[str, Manifest]:
    return {variable["name"]: variable for variable in server()["env"]}


def example_secret(name: str) -> Manifest:
    return next(s for s in documents(DEPLOY / EXAMPLE_SECRETS) if s["metadata"]["name"] == name)


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


def test_the_manifests_are_there() -> None:
    names = {path.name for path in manifest_files()}
    assert {"namespace.yaml", "serviceaccount.yaml", "rbac.yaml", "deployment.yaml"} <= names
    assert {"service.yaml", "pdb.yaml", EXAMPLE_SECRETS} <= names


@pytest.mark.parametrize(
    "document", [pytest.param(document, id=name) for name, document in every_document()]
)
def test_each_document_validates_against_kubernetes_schemas(document: Manifest) -> None:
    refused = None
    try:
        version = kubernetes_validate.validate(document, KUBERNETES_VERSION, strict=True)
    except kubernetes_validate.ValidationError as error:
        refused = f"{'.'.join(map(str, error.path))}: {error.message}"
    assert refused is None  # outside the except: the schema itself is not worth printing
    assert version == KUBERNETES_VERSION


def test_namespaced_resources_are_in_lockstep_system() -> None:
    for name, document in every_document():
        if document["kind"] in {"Namespace", "ClusterRole", "ClusterRoleBinding"}:
            assert "namespace" not in document["metadata"], name
        else:
            assert document["metadata"]["namespace"] == NAMESPACE, name
    assert one(deployed(), "Namespace")["metadata"]["name"] == NAMESPACE


def test_the_cluster_role_grants_no_wildcard() -> None:
    for rule in one(deployed(), "ClusterRole")["rules"]:
        assert "nonResourceURLs" not in rule
        assert "resourceNames" not in rule  # RUNTIME_NEEDS grants whole resources
        for field in ("apiGroups", "resources", "verbs"):
            assert rule[field], rule
            assert not any("*" in value for value in rule[field]), rule


def test_the_cluster_role_grants_exactly_what_the_runtime_needs() -> None:
    granted: dict[tuple[str, str], set[str]] = {}
    for rule in one(deployed(), "ClusterRole")["rules"]:
        for group in rule["apiGroups"]:
            for resource in rule["resources"]:
                granted.setdefault((group, resource), set()).update(rule["verbs"])
    assert granted == RUNTIME_NEEDS


def test_the_cluster_role_is_bound_to_the_deployments_service_account() -> None:
    manifests = deployed()
    binding = one(manifests, "ClusterRoleBinding")
    account = one(manifests, "ServiceAccount")["metadata"]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": one(manifests, "ClusterRole")["metadata"]["name"],
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": account["name"], "namespace": account["namespace"]}
    ]
    pod = one(manifests, "Deployment")["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == account["name"]
    assert pod.get("automountServiceAccountToken", True)


def test_several_replicas_of_the_kubernetes_runtime_share_the_database() -> None:
    assert one(deployed(), "Deployment")["spec"]["replicas"] >= 2
    env = environment()
    assert env["LOCKSTEP_RUNTIME"]["value"] == "kubernetes"
    assert env["LOCKSTEP_KUBE_SCHEDULER"]["value"] == "kai"
    assert env["LOCKSTEP_DATABASE_URL"] == {
        "name": "LOCKSTEP_DATABASE_URL",
        "valueFrom": {"secretKeyRef": {"name": "lockstep-database", "key": "url"}},
    }
    url = example_secret("lockstep-database")["stringData"]["url"]
    assert url.startswith("postgresql+psycopg://")
    assert normalize_url(url) == url


def deployed_settings() -> Settings:
    """The settings lockstep reads from the Deployment's plain values (not the Secrets')."""
    values = {
        name.removeprefix("LOCKSTEP_").lower(): variable["value"]
        for name, variable in environment().items()
        if "value" in variable
    }
    return Settings.model_validate(values)


def test_every_variable_names_a_setting_and_holds_a_valid_value() -> None:
    """A misspelt variable would be ignored without a word (Settings ignores unknown ones)."""
    for name in environment():
        assert name.startswith("LOCKSTEP_"), name
        assert name.removeprefix("LOCKSTEP_").lower() in Settings.model_fields, name
    settings = deployed_settings()
    assert settings.runtime == "kubernetes"
    assert settings.kube_scheduler == "kai"
    assert settings.kubeconfig is None  # the in-cluster config, as the ServiceAccount


def test_lockstep_serves_on_the_port_the_service_targets() -> None:
    container = server()
    assert container["image"].startswith("ghcr.io/lockstep-dev/lockstep:")
    assert container["command"] == ["lockstep", "serve", "--host", "0.0.0.0", "--port", "8080"]
    [port] = container["ports"]
    assert port["containerPort"] == 8080
    service = one(deployed(), "Service")
    assert service["spec"]["type"] == "ClusterIP"
    [service_port] = service["spec"]["ports"]
    assert service_port["port"] == 80
    assert service_port["targetPort"] in {port["name"], 8080}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["port"] in {port["name"], 8080}, probe


def test_the_probes_ask_lockstep_s_health_endpoints() -> None:
    """Liveness and start-up: the process answers; readiness: the store answers and, on the
    leader, the reconciler runs (tests/integration/test_health.py runs them)."""
    container = server()
    paths = {probe: container[probe]["httpGet"]["path"] for probe in PROBES}
    assert paths == {
        "startupProbe": "/healthz",
        "readinessProbe": "/readyz",
        "livenessProbe": "/healthz",
    }
    served = {route.path for route in health.router.routes if isinstance(route, APIRoute)}
    assert set(paths.values()) <= served
    for probe in PROBES:
        assert container[probe]["httpGet"].get("scheme", "HTTP") == "HTTP", probe
        assert "httpHeaders" not in container[probe]["httpGet"], probe  # no token needed


def test_the_service_and_the_budget_select_the_pods() -> None:
    manifests = deployed()
    deployment = one(manifests, "Deployment")["spec"]
    labels = deployment["template"]["metadata"]["labels"]
    assert matches(deployment["selector"]["matchLabels"], labels)
    assert matches(one(manifests, "Service")["spec"]["selector"], labels)
    budget = one(manifests, "PodDisruptionBudget")["spec"]
    assert matches(budget["selector"]["matchLabels"], labels)
    assert budget["minAvailable"] == 1 < deployment["replicas"]
    [spread] = deployment["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    assert spread["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert matches(spread["podAffinityTerm"]["labelSelector"]["matchLabels"], labels)


def test_the_keys_are_mounted_read_only_where_lockstep_reads_them() -> None:
    pod = one(deployed(), "Deployment")["spec"]["template"]["spec"]
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    mounts = {mount["mountPath"]: mount for mount in server()["volumeMounts"]}
    settings = deployed_settings()
    assert "emptyDir" in volumes[mounts[str(settings.data_dir)]["name"]]
    keys = example_secret("lockstep-keys")["stringData"]
    for path in (settings.signing_key_path, settings.sealing_key_path):
        mount = mounts[str(path)]
        assert mount["readOnly"] is True
        assert mount["subPath"] == path.name
        assert path.name in keys
        assert volumes[mount["name"]]["secret"]["secretName"] == "lockstep-keys"


def test_the_pod_is_locked_down() -> None:
    pod = one(deployed(), "Deployment")["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    container = server()
    context = container["securityContext"]
    assert context["runAsNonRoot"] is True
    assert context["readOnlyRootFilesystem"] is True
    assert context["allowPrivilegeEscalation"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context["seccompProfile"] == {"type": "RuntimeDefault"}
    for kind in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(container["resources"][kind]), kind


def test_kustomization_lists_every_manifest_but_the_example_secrets() -> None:
    listed = kustomization()["resources"]
    assert len(listed) == len(set(listed))
    for name in listed:
        assert (DEPLOY / name).is_file(), name
    assert EXAMPLE_SECRETS not in listed
    assert set(listed) == {path.name for path in manifest_files()} - {EXAMPLE_SECRETS}
