"""Pod-level settings of a workload spec: environment, metadata, networking, probes, placement."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import Field, StringConstraints

from lockstep.schemas.base import DnsLabel, NonEmpty, WireModel
from lockstep.schemas.bounds import PORT_RANGE, EnvironmentName

MetadataName = Annotated[str, StringConstraints(min_length=1, max_length=63)]
ProbePath = Annotated[str, StringConstraints(pattern=r"^(/[a-zA-Z0-9\-_./]*)?$")]
PortNumber = Annotated[int, Field(ge=1, le=65535)]
Int32 = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]


class ImagePullPolicy(StrEnum):
    ALWAYS = "Always"
    NEVER = "Never"
    IF_NOT_PRESENT = "IfNotPresent"


class RestartPolicy(StrEnum):
    ALWAYS = "Always"
    NEVER = "Never"
    ON_FAILURE = "OnFailure"


class Preemptibility(StrEnum):
    PREEMPTIBLE = "preemptible"
    NON_PREEMPTIBLE = "non-preemptible"


class PortServiceType(StrEnum):
    LOAD_BALANCER = "LoadBalancer"
    NODE_PORT = "NodePort"
    CLUSTER_IP = "ClusterIP"


class AuthorizationType(StrEnum):
    AUTHENTICATED_USERS = "authenticatedUsers"
    AUTHORIZED_USERS = "authorizedUsers"
    AUTHORIZED_GROUPS = "authorizedGroups"


class TolerationOperator(StrEnum):
    EQUAL = "Equal"
    EXISTS = "Exists"


class TolerationEffect(StrEnum):
    NO_SCHEDULE = "NoSchedule"
    NO_EXECUTE = "NoExecute"
    PREFER_NO_SCHEDULE = "PreferNoSchedule"
    ANY = "Any"


class PodAffinityType(StrEnum):
    REQUIRED = "Required"
    PREFERRED = "Preferred"


class MatchExpressionOperator(StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"
    GT = "Gt"
    LT = "Lt"


class ProbeScheme(StrEnum):
    HTTP = "HTTP"
    HTTPS = "HTTPS"


class EnvironmentVariableSecret(WireModel):
    # The document restricts the name to a DNS label; the documentation's own example uses
    # `postgress_secret`, so only non-emptiness is enforced.
    name: NonEmpty | None = None
    key: NonEmpty | None = None


class EnvironmentVariableConfigMap(WireModel):
    name: DnsLabel | None = None
    key: NonEmpty | None = None


class EnvironmentVariablePodFieldRef(WireModel):
    path: NonEmpty | None = None


class EnvironmentVariableUserCredential(WireModel):
    name: NonEmpty | None = None
    key: NonEmpty | None = None


class EnvironmentVariable(WireModel):
    name: EnvironmentName | None = None
    value: str | None = None
    secret: EnvironmentVariableSecret | None = None
    config_map: EnvironmentVariableConfigMap | None = None
    pod_field_ref: EnvironmentVariablePodFieldRef | None = None
    user_credential: EnvironmentVariableUserCredential | None = None
    description: str | None = None
    exclude: bool | None = None


class Label(WireModel):
    name: MetadataName | None = None
    value: str | None = None
    exclude: bool | None = None


class Annotation(WireModel):
    name: MetadataName | None = None
    value: str | None = None
    exclude: bool | None = None


class ImagePullSecret(WireModel):
    name: DnsLabel | None = None
    user_credential: bool | None = None
    exclude: bool | None = None


class Port(WireModel):
    container: PortNumber | None = None
    service_type: PortServiceType | None = None
    external: Annotated[Int32, PORT_RANGE] | None = None
    tool_type: str | None = None
    tool_name: str | None = None
    name: NonEmpty | None = None
    exclude: bool | None = None


class ExposedUrl(WireModel):
    container: Annotated[Int32, PORT_RANGE] | None = None
    url: str | None = None
    authorization_type: AuthorizationType | None = None
    authorized_users: list[str] | None = None
    authorized_groups: list[str] | None = None
    tool_type: str | None = None
    tool_name: str | None = None
    name: NonEmpty | None = None
    exclude: bool | None = None


class RelatedUrl(WireModel):
    url: str | None = None
    type: str | None = None
    name: str | None = None
    exclude: bool | None = None


class Toleration(WireModel):
    name: NonEmpty | None = None
    operator: TolerationOperator | None = None
    key: str | None = None
    value: str | None = None
    effect: TolerationEffect | None = None
    seconds: int | None = Field(default=None, ge=1)
    exclude: bool | None = None


class HttpGet(WireModel):
    path: ProbePath | None = None
    port: PortNumber | None = None
    host: str | None = None
    scheme: ProbeScheme | None = None


class ProbeHandler(WireModel):
    http_get: HttpGet | None = None


class Probe(WireModel):
    initial_delay_seconds: Annotated[int, Field(ge=0, le=2**31 - 1)] | None = None
    period_seconds: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    timeout_seconds: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    success_threshold: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    failure_threshold: Annotated[int, Field(ge=1, le=2**31 - 1)] | None = None
    handler: ProbeHandler | None = None


class Probes(WireModel):
    readiness: Probe | None = None


class PodAffinity(WireModel):
    type: PodAffinityType | None = None
    key: str | None = None


class MatchExpression(WireModel):
    key: str
    operator: MatchExpressionOperator
    values: list[str] | None = None


class NodeSelectorTerm(WireModel):
    match_expressions: list[MatchExpression] | None = None


class NodeAffinityRequired(WireModel):
    node_selector_terms: list[NodeSelectorTerm] | None = None
