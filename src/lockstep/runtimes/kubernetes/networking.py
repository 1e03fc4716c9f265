"""How a workload is reached: its `ports` as Services, one per service type (LoadBalancer,
NodePort on the `external` port, ClusterIP), and its `exposedUrls` as Ingresses, each to a
ClusterIP Service of its port, with the authorization fields as annotations (for the
authenticating proxy or ingress controller the cluster runs; Kubernetes does not enforce them).

Called by `render`. A Service selects the pods whose spec declares the port: every pod of the
workload when the master runs the workers' spec, else the pods of one role.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from lockstep.domain.plan import Role
from lockstep.domain.workload import Workload
from lockstep.runtimes.kubernetes.identity import metadata, pod_selector
from lockstep.runtimes.kubernetes.names import child_name
from lockstep.runtimes.kubernetes.settings import KubernetesSettings
from lockstep.schemas.distributed import PodSpec
from lockstep.schemas.pod import ExposedUrl, PortServiceType

SERVICE_SUFFIX: dict[PortServiceType, str] = {
    PortServiceType.LOAD_BALANCER: "loadbalancer",
    PortServiceType.NODE_PORT: "nodeport",
    PortServiceType.CLUSTER_IP: "clusterip",
}
AUTHORIZATION_TYPE = "lockstep.io/authorization-type"
AUTHORIZED_USERS = "lockstep.io/authorized-users"
AUTHORIZED_GROUPS = "lockstep.io/authorized-groups"
TOOL_TYPE = "lockstep.io/tool-type"
TOOL_NAME = "lockstep.io/tool-name"


@dataclass(frozen=True, slots=True)
class Exposure:
    """The pods that share a spec, and so its ports and URLs: `role` None is every pod."""

    spec: PodSpec
    role: Role | None


def _service_port(port: int, target: int, node_port: int | None = None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": f"port-{port}",
        "port": port,
        "targetPort": target,
        "protocol": "TCP",
    }
    if node_port is not None:
        entry["nodePort"] = node_port
    return entry


def service_ports(spec: PodSpec) -> dict[PortServiceType, list[dict[str, Any]]]:
    """The Service ports of each service type: the `external` port of a LoadBalancer or
    ClusterIP (else the container port), the node port of a NodePort; then the container
    port of each exposed URL on the ClusterIP Service. Each port once per Service."""
    by_type: dict[PortServiceType, dict[int, dict[str, Any]]] = {}
    for port in spec.ports or ():
        if port.exclude or port.container is None:
            continue
        kind = port.service_type or PortServiceType.CLUSTER_IP
        if kind is PortServiceType.NODE_PORT:
            entry = _service_port(port.container, port.container, port.external)
        else:
            entry = _service_port(port.external or port.container, port.container)
        by_type.setdefault(kind, {}).setdefault(entry["port"], entry)
    for url in spec.exposed_urls or ():
        if url.exclude or url.container is None:
            continue
        entry = _service_port(url.container, url.container)
        by_type.setdefault(PortServiceType.CLUSTER_IP, {}).setdefault(url.container, entry)
    return {kind: list(ports.values()) for kind, ports in by_type.items()}


def exposed_urls(spec: PodSpec) -> list[ExposedUrl]:
    return [u for u in spec.exposed_urls or () if not u.exclude and u.container is not None]


def _name(workload: Workload, exposure: Exposure, *suffixes: str) -> str:
    roles = () if exposure.role is None else (exposure.role.value,)
    return child_name(workload.name, *roles, *suffixes)


def services(workload: Workload, exposure: Exposure) -> list[dict[str, Any]]:
    """The Services of one exposure's ports, one per service type."""
    result = []
    for kind, ports in service_ports(exposure.spec).items():
        result.append(
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": metadata(workload, _name(workload, exposure, SERVICE_SUFFIX[kind])),
                "spec": {
                    "type": kind.value,
                    "selector": pod_selector(workload, exposure.role),
                    "ports": ports,
                },
            }
        )
    return result


def authorization_annotations(url: ExposedUrl) -> dict[str, str]:
    """Who may use a URL, and what runs behind it, as annotations."""
    annotations: dict[str, str] = {}
    kind = url.authorization_type
    if kind is not None:
        annotations[AUTHORIZATION_TYPE] = kind.value
    elif url.authorized_users:
        annotations[AUTHORIZATION_TYPE] = "authorizedUsers"
    elif url.authorized_groups:
        annotations[AUTHORIZATION_TYPE] = "authorizedGroups"
    if url.authorized_users:
        annotations[AUTHORIZED_USERS] = ",".join(url.authorized_users)
    if url.authorized_groups:
        annotations[AUTHORIZED_GROUPS] = ",".join(url.authorized_groups)
    if url.tool_type:
        annotations[TOOL_TYPE] = url.tool_type
    if url.tool_name:
        annotations[TOOL_NAME] = url.tool_name
    return annotations


def url_route(url: ExposedUrl, workload: Workload) -> tuple[str | None, str, bool]:
    """(host, path, https) of a URL; without one, the path `/<project>/<workload>/<port>`
    on any host."""
    if not url.url:
        return None, f"/{workload.project_name}/{workload.name}/{url.container}", False
    text = url.url if "//" in url.url else f"//{url.url}"
    parts = urlsplit(text)
    return parts.hostname, parts.path or "/", parts.scheme == "https"


def ingress(
    workload: Workload,
    exposure: Exposure,
    url: ExposedUrl,
    *,
    index: int,
    settings: KubernetesSettings,
) -> dict[str, Any]:
    """The Ingress of one exposed URL, to the ClusterIP Service of its exposure."""
    host, path, https = url_route(url, workload)
    backend = {
        "service": {
            "name": _name(workload, exposure, SERVICE_SUFFIX[PortServiceType.CLUSTER_IP]),
            "port": {"number": url.container},
        }
    }
    rule: dict[str, Any] = {} if host is None else {"host": host}
    rule["http"] = {"paths": [{"path": path, "pathType": "Prefix", "backend": backend}]}
    spec: dict[str, Any] = {"rules": [rule]}
    if host is not None and https:
        spec["tls"] = [{"hosts": [host]}]
    if settings.ingress_class_name:
        spec["ingressClassName"] = settings.ingress_class_name
    meta = metadata(workload, _name(workload, exposure, "url", str(index)))
    annotations = authorization_annotations(url)
    if annotations:
        meta["annotations"] = annotations
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": meta,
        "spec": spec,
    }


def networking(
    workload: Workload, exposures: Iterable[Exposure], settings: KubernetesSettings
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(Services, Ingresses) of every exposure."""
    all_services: list[dict[str, Any]] = []
    ingresses: list[dict[str, Any]] = []
    for exposure in exposures:
        all_services += services(workload, exposure)
        ingresses += [
            ingress(workload, exposure, url, index=i, settings=settings)
            for i, url in enumerate(exposed_urls(exposure.spec))
        ]
    return all_services, ingresses
