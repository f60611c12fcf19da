"""The OpenAPI document: generated from the routes, committed as docs/openapi.json, and held
to by the handler — schemathesis sends generated requests (valid and not) to every operation,
as an operator and as a tenant-scoped principal: never a 5xx, and every answer matches the
document (status, content type, schema)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support.management import OPERATOR, scope_principal

# Alone: schemathesis runs each operation as a subtest, and under pytest-xdist a subtest's
# failure never reaches the controller (a planted one passed), so `make test` runs this file
# in its own process after the workers (decision 0089).
pytestmark = [pytest.mark.integration, pytest.mark.alone]

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"
REGENERATE = (
    ".venv/bin/python -c 'import json; from hookline.api.openapi import openapi_document; "
    "print(json.dumps(openapi_document(), indent=2, sort_keys=True))' > docs/openapi.json"
)


def test_the_committed_openapi_document_matches_the_code():
    from hookline.api.openapi import openapi_document

    committed = json.loads(COMMITTED.read_text())
    assert committed == openapi_document(), f"docs/openapi.json is stale; run: {REGENERATE}"


TENANT = "arn:aws:iam::123456789012:role/fuzzing-tenant"


def lambda_as_wsgi(identity: str) -> Any:
    """The API handler behind a WSGI front, as API Gateway would call it for `identity`."""
    return lambda environ, start_response: call_lambda(identity, environ, start_response)


def call_lambda(identity: str, environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """One WSGI request through the API handler."""
    from functions.api.handler import lambda_handler

    path = environ.get("PATH_INFO", "/")
    if path == "/openapi.json":
        start_response("200 OK", [("Content-Type", "application/json")])
        return [COMMITTED.read_bytes()]
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else b""
    headers = [
        (key[5:].replace("_", "-").title(), value)
        for key, value in environ.items()
        if key.startswith("HTTP_")
    ]
    if environ.get("CONTENT_TYPE"):
        headers.append(("Content-Type", environ["CONTENT_TYPE"]))
    event = build_rest_event(
        environ["REQUEST_METHOD"],
        path,
        headers,
        body,
        query=environ.get("QUERY_STRING", ""),
        identity_arn=identity,
    )
    answer = lambda_handler(event, LocalContext(function_name="api"))
    import base64

    raw = answer.get("body") or ""
    data = base64.b64decode(raw) if answer.get("isBase64Encoded") else raw.encode()
    out_headers = dict(answer.get("headers") or {})
    for name, values in (answer.get("multiValueHeaders") or {}).items():
        out_headers[name] = values[-1]
    start_response(f"{answer['statusCode']} X", list(out_headers.items()))
    return [data]


schema = schemathesis.openapi.from_wsgi("/openapi.json", lambda_as_wsgi(OPERATOR))
tenant_schema = schemathesis.openapi.from_wsgi("/openapi.json", lambda_as_wsgi(TENANT))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def seeded(mgmt):
    """A tenant with an endpoint and a delivery, so generated requests also meet real rows."""
    tenant = mgmt.post("/v1/tenants", {"name": "fuzz"}).json()
    endpoint = mgmt.post(
        "/v1/endpoints", {"tenant_id": tenant["id"], "url": "https://93.184.216.34/h"}
    ).json()
    mgmt.post(f"/v1/endpoints/{endpoint['id']}/test")
    return tenant


@pytest.fixture
def seeded_as_tenant(seeded, mgmt, db):
    """The seeded tenant, and another one beside it, with the fuzzing principal scoped to the
    first: generated requests meet its rows and the other tenant's ids alike."""
    other = mgmt.post("/v1/tenants", {"name": "other"}).json()
    mgmt.post("/v1/endpoints", {"tenant_id": other["id"], "url": "https://93.184.216.34/o"})
    scope_principal(db, TENANT, seeded["id"])
    return seeded


@schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_generated_requests_never_5xx_and_match_the_document(case, seeded):
    case.call_and_validate(checks=CHECKS)


@tenant_schema.parametrize()
@settings(
    max_examples=5,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_generated_requests_as_a_tenant_never_5xx_and_match_the_document(case, seeded_as_tenant):
    case.call_and_validate(checks=CHECKS)
