"""How a workload is reached on Kubernetes (runtimes/kubernetes/networking.py): one Service
per service type of its ports, selecting the pods whose spec declares them; an Ingress per
exposed URL, to the ClusterIP Service of its port, with the authorization as annotations."""

from __future__ import annotations

from typing import Any

import pytest

from lockstep.domain.labels import WORKLOAD_ID
from lockstep.runtimes.kubernetes.identity import ROLE
from tests.unit.k8s import WORKLOAD_ID as ID
from tests.unit.k8s import of_kind, rendered

Manifest = dict[str, Any]


def by_name(manifests: list[Manifest], kind: str) -> dict[str, Manifest]:
    return {m["metadata"]["name"]: m for m in of_kind(manifests, kind)}


def test_a_service_per_service_type() -> None:
    services = by_name(
        rendered(
            {
                "ports": [
                    {"container": 8080, "serviceType": "LoadBalancer", "external": 80},
                    {"container": 8443, "serviceType": "LoadBalancer"},
                    {"container": 6006, "serviceType": "NodePort", "external": 30606},
                    {"container": 7000, "serviceType": "NodePort"},
                    {"container": 9090, "serviceType": "ClusterIP", "external": 90},
                    {"container": 9091},
                    {"container": 5000, "serviceType": "ClusterIP", "exclude": True},
                ]
            }
        ),
        "Service",
    )
    assert {name: s["spec"]["type"] for name, s in services.items()} == {
        "train-loadbalancer": "LoadBalancer",
        "train-nodeport": "NodePort",
        "train-clusterip": "ClusterIP",
    }
    ports = {name: s["spec"]["ports"] for name, s in services.items()}
    assert ports["train-loadbalancer"] == [
        {"name": "port-80", "port": 80, "targetPort": 8080, "protocol": "TCP"},
        {"name": "port-8443", "port": 8443, "targetPort": 8443, "protocol": "TCP"},
    ]
    assert ports["train-nodeport"] == [
        {
            "name": "port-6006",
            "port": 6006,
            "targetPort": 6006,
            "protocol": "TCP",
            "nodePort": 30606,
        },
        {"name": "port-7000", "port": 7000, "targetPort": 7000, "protocol": "TCP"},
    ]
    assert ports["train-clusterip"] == [
        {"name": "port-90", "port": 90, "targetPort": 9090, "protocol": "TCP"},
        {"name": "port-9091", "port": 9091, "targetPort": 9091, "protocol": "TCP"},
    ]
    for service in services.values():
        assert service["spec"]["selector"] == {WORKLOAD_ID: ID}


def test_services_select_the_pods_of_the_role_whose_spec_declares_the_port() -> None:
    services = by_name(
        rendered(
            {"ports": [{"container": 6006, "serviceType": "NodePort"}]},
            masterSpecSameAsWorker=False,
            masterSpec={
                "image": "x:1",
                "command": "python",
                "ports": [{"container": 8888, "serviceType": "LoadBalancer"}],
            },
        ),
        "Service",
    )
    assert services["train-master-loadbalancer"]["spec"]["selector"] == {
        WORKLOAD_ID: ID,
        ROLE: "master",
    }
    assert services["train-worker-nodeport"]["spec"]["selector"] == {
        WORKLOAD_ID: ID,
        ROLE: "worker",
    }
    assert len(services) == 2


def test_no_services_or_ingresses_without_ports_or_urls() -> None:
    manifests = rendered()
    assert of_kind(manifests, "Service") == []
    assert of_kind(manifests, "Ingress") == []


def test_an_exposed_url_is_an_ingress_to_the_clusterip_service_of_its_port() -> None:
    manifests = rendered(
        {
            "exposedUrls": [
                {
                    "container": 8888,
                    "url": "https://notebook.example.com/lab",
                    "authorizationType": "authorizedGroups",
                    "authorizedGroups": ["ml", "ops"],
                    "toolType": "jupyter",
                    "toolName": "lab",
                },
                {"container": 6006, "exclude": True},
            ]
        },
        settings={"ingress_class_name": "nginx"},
    )
    (service,) = of_kind(manifests, "Service")
    assert service["metadata"]["name"] == "train-clusterip"
    assert service["spec"]["ports"] == [
        {"name": "port-8888", "port": 8888, "targetPort": 8888, "protocol": "TCP"}
    ]
    (ingress,) = of_kind(manifests, "Ingress")
    assert ingress["metadata"]["name"] == "train-url-0"
    assert ingress["metadata"]["annotations"] == {
        "lockstep.io/authorization-type": "authorizedGroups",
        "lockstep.io/authorized-groups": "ml,ops",
        "lockstep.io/tool-type": "jupyter",
        "lockstep.io/tool-name": "lab",
    }
    assert ingress["spec"] == {
        "rules": [
            {
                "host": "notebook.example.com",
                "http": {
                    "paths": [
                        {
                            "path": "/lab",
                            "pathType": "Prefix",
                            "backend": {
                                "service": {"name": "train-clusterip", "port": {"number": 8888}}
                            },
                        }
                    ]
                },
            }
        ],
        "tls": [{"hosts": ["notebook.example.com"]}],
        "ingressClassName": "nginx",
    }


@pytest.mark.parametrize(
    ("url", "host", "path", "tls"),
    [
        ("http://a.example.com", "a.example.com", "/", False),
        ("a.example.com/x/y", "a.example.com", "/x/y", False),
        (None, None, "/team-a/train/8888", False),
    ],
)
def test_url_routes(url: str | None, host: str | None, path: str, tls: bool) -> None:
    entry: dict[str, Any] = {"container": 8888}
    if url is not None:
        entry["url"] = url
    (ingress,) = of_kind(rendered({"exposedUrls": [entry]}), "Ingress")
    (rule,) = ingress["spec"]["rules"]
    assert rule.get("host") == host
    assert rule["http"]["paths"][0]["path"] == path
    assert ("tls" in ingress["spec"]) is tls
    assert "annotations" not in ingress["metadata"]


def test_authorized_users_imply_their_authorization_type() -> None:
    (ingress,) = of_kind(
        rendered({"exposedUrls": [{"container": 80, "authorizedUsers": ["ann", "bob"]}]}),
        "Ingress",
    )
    assert ingress["metadata"]["annotations"] == {
        "lockstep.io/authorization-type": "authorizedUsers",
        "lockstep.io/authorized-users": "ann,bob",
    }


def test_a_port_both_exposed_and_on_a_clusterip_service_is_served_once() -> None:
    manifests = rendered(
        {
            "ports": [{"container": 8888, "serviceType": "ClusterIP"}],
            "exposedUrls": [{"container": 8888, "url": "https://a.example.com"}],
        }
    )
    (service,) = of_kind(manifests, "Service")
    assert [p["port"] for p in service["spec"]["ports"]] == [8888]
