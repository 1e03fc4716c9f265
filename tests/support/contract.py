"""The official Run:ai OpenAPI document, and responses validated against it (OpenAPI 3.0
semantics, `nullable`, formats such as uuid and date-time checked).

The document is the one in `shared/reference/` beside the checkout (`../shared/reference`),
the contract every part of lockstep is held to; every test that needs it finds it here."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import httpx
from openapi_schema_validator import OAS30Validator, oas30_format_checker

CHECKOUT = Path(__file__).resolve().parents[2]
DOCUMENT = CHECKOUT.parent / "shared" / "reference" / "runai-openapi-subset.json"


@cache
def document() -> dict[str, Any]:
    if not DOCUMENT.is_file():
        raise AssertionError(
            f"the Run:ai document is not at {DOCUMENT}: the tests need shared/reference "
            "beside the checkout"
        )
    loaded: dict[str, Any] = json.loads(DOCUMENT.read_text())
    return loaded


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        *_, kind, name = node["$ref"].split("/")
        node = document()["components"][kind][name]
    return node


def response_schema(path: str, method: str, status: int) -> dict[str, Any] | None:
    """The JSON schema the document gives for this response; None for a body-less one."""
    operation = document()["paths"][path][method.lower()]
    responses = operation["responses"]
    declared = responses.get(str(status))
    if declared is None:
        if status < 400:
            raise AssertionError(f"{method} {path} does not declare status {status}")
        declared = {
            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
        }
    declared = _resolve(declared)
    content = declared.get("content", {}).get("application/json")
    return None if content is None else content.get("schema")  # some show examples only


def assert_conforms(
    response: httpx.Response,
    path: str,
    method: str | None = None,
    *,
    tolerate: frozenset[str] = frozenset(),
) -> Any:
    """Assert `response` matches the document for `path` and return its JSON body.
    `tolerate` names the paths of values a client sent that the document forbids, which
    lockstep returns as sent."""
    method = method or response.request.method
    schema = response_schema(path, method, response.status_code)
    if schema is None:
        return None
    body = response.json()
    validator = OAS30Validator(
        {**schema, "components": document()["components"]}, format_checker=oas30_format_checker
    )
    errors = sorted(
        (
            e
            for e in validator.iter_errors(body)
            if "/".join(map(str, e.absolute_path)) not in tolerate
        ),
        key=lambda e: list(e.absolute_path),
    )
    if errors:
        details = "\n".join(
            f"- {'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:20]
        )
        raise AssertionError(
            f"{method} {path} -> {response.status_code} breaks the contract:\n{details}"
        )
    return body
