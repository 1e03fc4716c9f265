"""`lockstep admin`: manage applications, users, access rules, departments and projects
directly in the store (whoever can run this holds the store, so no token is needed). The same
is done over the API with a token (`/api/v1/users`, …); these commands stay for recovery: the
store's owner can always create an administrator, reset a password or revoke a rule."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from lockstep.cli.groups import command_group
from lockstep.cli.operator import DatabaseUrl, DataDir, operator_core, print_json
from lockstep.domain.identity import Role, ScopeType
from lockstep.domain.pod_security import PodSecurityLevel

if TYPE_CHECKING:
    from pydantic import BaseModel

    from lockstep.assembly import Core
    from lockstep.domain.organization import Project

M = TypeVar("M", bound="BaseModel")

app = command_group(
    no_args_is_help=True,
    help="Administer applications, users, access rules and the organization in the store.",
)

ROLES = ", ".join(f"'{role.value}'" for role in Role)


GrantedRole = Annotated[str | None, typer.Option("--role", help=f"Grant this role: {ROLES}.")]
GrantedScope = Annotated[
    str,
    typer.Option("--scope", help="system, cluster:<id>, department:<id> or project:<id>."),
]


def _scope(text: str) -> tuple[str, str]:
    kind, _, identifier = text.partition(":")
    if kind == "system":
        return kind, "system"
    if kind not in {"cluster", "department", "project"} or not identifier:
        raise typer.BadParameter("use system, cluster:<id>, department:<id> or project:<id>")
    return kind, identifier


def _role(text: str) -> Role:
    try:
        return Role(text)
    except ValueError as error:
        raise typer.BadParameter(f"the role must be {ROLES}") from error


@app.command("create-application")
def create_application(
    name: Annotated[str, typer.Argument(help="The application's client id.")],
    role: GrantedRole = None,
    scope: GrantedScope = "system",
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create an application (service account) and print its secret, shown only once."""
    scope_type, scope_id = _scope(scope)
    granted = None if role is None else _role(role)
    with operator_core(data_dir, database_url) as core:
        application, secret = core.identity.create_application(name)
        result: dict[str, object] = {"clientId": application.client_id, "clientSecret": secret}
        if granted is not None:
            rule = core.identity.grant(
                client_id=name, role=granted, scope_type=ScopeType(scope_type), scope_id=scope_id
            )
            result["accessRuleId"] = rule.id
        print_json(result)


@app.command()
def grant(
    client_id: Annotated[
        str | None, typer.Argument(help="The application to grant the role to.")
    ] = None,
    *,
    user: Annotated[
        str | None, typer.Option(help="A user (their email) to grant the role to instead.")
    ] = None,
    role: Annotated[str, typer.Option(help=f"{ROLES}.")],
    scope: Annotated[
        str, typer.Option(help="system, cluster:<id>, department:<id> or project:<id>.")
    ],
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Add an access rule: the application (or --user) holds the role in the scope."""
    if (client_id is None) == (user is None):
        raise typer.BadParameter("name an application or give --user, not both")
    scope_type, scope_id = _scope(scope)
    role_value = _role(role)
    with operator_core(data_dir, database_url) as core:
        rule = core.identity.grant(
            client_id=client_id,
            user=user,
            role=role_value,
            scope_type=ScopeType(scope_type),
            scope_id=scope_id,
        )
        print_json({"accessRuleId": rule.id})


@app.command("create-user")
def create_user(
    email: Annotated[str, typer.Argument(help="The user's email, their name to sign in.")],
    role: GrantedRole = None,
    scope: GrantedScope = "system",
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a user and print their one-time password, shown only once."""
    from lockstep.auth.tokens import OPERATOR

    scope_type, scope_id = _scope(scope)
    granted = None if role is None else _role(role)
    with operator_core(data_dir, database_url) as core:
        user, password = core.users.create(OPERATOR, email)
        result: dict[str, object] = {
            "id": user.id,
            "username": user.username,
            "tempPassword": password,
        }
        if granted is not None:
            rule = core.identity.grant(
                user=user.username,
                role=granted,
                scope_type=ScopeType(scope_type),
                scope_id=scope_id,
            )
            result["accessRuleId"] = rule.id
        print_json(result)


@app.command("reset-password")
def reset_password(
    email: Annotated[str, typer.Argument(help="The user's email.")],
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Give a user a new one-time password (printed once); their sessions end."""
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        user = core.users.named(OPERATOR, email)
        print_json({"tempPassword": core.users.reset_password(OPERATOR, user.id)})


@app.command("delete-user")
def delete_user(
    email: Annotated[str, typer.Argument(help="The user's email.")],
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Delete a user and their access rules; their tokens are refused from then on."""
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        core.users.delete(OPERATOR, core.users.named(OPERATOR, email).id)


@app.command("list-users")
def list_users(data_dir: DataDir = None, database_url: DatabaseUrl = None) -> None:
    """List users (never their passwords)."""
    from lockstep.auth.tokens import OPERATOR
    from lockstep.services.users import UserQuery

    with operator_core(data_dir, database_url) as core:
        print_json(
            [
                {"id": u.id, "username": u.username, "createdAt": u.created_at}
                for u in core.users.users(OPERATOR, UserQuery(limit=10**9))
            ]
        )


@app.command()
def revoke(
    rule_id: Annotated[int, typer.Argument(help="The access rule to delete.")],
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Delete an access rule."""
    with operator_core(data_dir, database_url) as core:
        core.identity.revoke(rule_id)


@app.command("list-applications")
def list_applications(data_dir: DataDir = None, database_url: DatabaseUrl = None) -> None:
    """List applications (never their secrets)."""
    with operator_core(data_dir, database_url) as core:
        print_json(
            [
                {"clientId": a.client_id, "createdAt": a.created_at}
                for a in core.identity.applications()
            ]
        )


@app.command("list-access-rules")
def list_access_rules(data_dir: DataDir = None, database_url: DatabaseUrl = None) -> None:
    """List access rules."""
    with operator_core(data_dir, database_url) as core:
        print_json(
            [
                {
                    "id": r.id,
                    "subject": r.subject_id,
                    "role": r.role.value,
                    "scope": f"{r.scope_type.value}:{r.scope_id}",
                }
                for r in core.identity.rules()
            ]
        )


@app.command("create-department")
def create_department(
    name: str,
    cluster: Annotated[
        str | None, typer.Option(help="Cluster id; the only cluster if unset.")
    ] = None,
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a department."""
    from lockstep.auth.tokens import OPERATOR
    from lockstep.schemas.organization import DepartmentCreationRequest

    with operator_core(data_dir, database_url) as core:
        cluster_id = cluster or _only_cluster(core)
        request = _request(DepartmentCreationRequest, {"name": name, "clusterId": cluster_id})
        department = core.organization.create_department(OPERATOR, request)
        print_json(
            {"id": department.id, "name": department.name, "clusterId": department.cluster_id}
        )


@app.command("create-project")
def create_project(  # noqa: PLR0917 - typer passes options by position
    name: str,
    department: Annotated[
        str | None, typer.Option(help="Department id; 'default' if unset.")
    ] = None,
    cluster: Annotated[
        str | None, typer.Option(help="Cluster id; the only cluster if unset.")
    ] = None,
    pod_security: Annotated[
        PodSecurityLevel | None,
        typer.Option(help="What its pods may ask (Pod Security level); baseline if unset."),
    ] = None,
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Create a project."""
    from lockstep.auth.tokens import OPERATOR
    from lockstep.schemas.organization import ProjectCreationRequest

    with operator_core(data_dir, database_url) as core:
        cluster_id = cluster or _only_cluster(core)
        fields: dict[str, object] = {
            "name": name,
            "clusterId": cluster_id,
            "parentId": department,
            "resources": [],
        }
        if pod_security is not None:
            fields["podSecurityLevel"] = pod_security.value
        request = _request(ProjectCreationRequest, fields)
        project = core.organization.create_project(OPERATOR, request)
        print_json(_project_json(project))


@app.command("set-pod-security")
def set_pod_security(
    project: Annotated[str, typer.Argument(help="The project's id or name.")],
    level: Annotated[PodSecurityLevel, typer.Argument(help="privileged, baseline or restricted.")],
    data_dir: DataDir = None,
    database_url: DatabaseUrl = None,
) -> None:
    """Set what a project's pods may ask (its Pod Security level), for the workloads submitted
    and the pods started from now on."""
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        known = core.organization.projects(OPERATOR)
        found = next((p for p in known if project in (p.id, p.name)), None)
        if found is None:
            raise typer.BadParameter(f"no project has the id or name {project!r}")
        changed = core.organization.set_pod_security_level(OPERATOR, found.id, level)
        print_json(_project_json(changed))


def _project_json(project: Project) -> dict[str, str]:
    return {
        "id": project.id,
        "name": project.name,
        "departmentId": project.department_id,
        "podSecurityLevel": project.pod_security_level.value,
    }


@app.command("list-projects")
def list_projects(data_dir: DataDir = None, database_url: DatabaseUrl = None) -> None:
    """List projects."""
    from lockstep.auth.tokens import OPERATOR

    with operator_core(data_dir, database_url) as core:
        projects = core.organization.projects(OPERATOR)
        print_json(
            [
                {
                    "id": p.id,
                    "name": p.name,
                    "departmentId": p.department_id,
                    "clusterId": p.cluster_id,
                    "podSecurityLevel": p.pod_security_level.value,
                }
                for p in projects
            ]
        )


def _request(model: type[M], data: dict[str, object]) -> M:
    """The request, or `InvalidRequest` naming each field it breaks (the name's rules)."""
    from pydantic import ValidationError

    from lockstep.api.errors import violations_of
    from lockstep.domain.errors import InvalidRequest

    try:
        return model.model_validate(data, strict=False)
    except ValidationError as error:
        raise InvalidRequest(violations_of(error)) from error


def _only_cluster(core: Core) -> str:
    from lockstep.auth.tokens import OPERATOR

    clusters = core.organization.clusters(OPERATOR)
    if len(clusters) != 1:
        typer.echo("error: there is not exactly one cluster; pass --cluster", err=True)
        raise typer.Exit(2)
    return clusters[0].id
