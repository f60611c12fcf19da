"""The management API behind each front door (decision 0035): the same routes and the same
IAM caller scoping for a REST API's payload 1.0 and the 2.0 of an HTTP API or a function URL."""

from __future__ import annotations

import base64
import json

import pytest

from hookline_dev.local.apigw import LocalContext, build_http_event
from tests.support.management import OPERATOR, as_tenant

pytestmark = pytest.mark.integration


def call(method: str, path: str, body: dict | None, identity: str | None, function_url: bool):
    from functions.api.handler import lambda_handler

    data = json.dumps(body).encode() if body is not None else b""
    headers = {"Content-Type": "application/json"} if data else {}
    event = build_http_event(
        method, path, headers, data, identity_arn=identity, function_url=function_url
    )
    answer = lambda_handler(event, LocalContext(function_name="api"))
    text = answer.get("body") or ""
    raw = base64.b64decode(text) if answer.get("isBase64Encoded") else text.encode()
    return answer["statusCode"], json.loads(raw) if raw else None


@pytest.mark.parametrize("function_url", [False, True], ids=["http-api", "function-url"])
def test_payload_2_0_is_served_with_the_iam_callers_scope(management_env, mgmt, db, function_url):
    # Given two tenants, created over payload 2.0 by the operator's IAM principal
    status, a = call("POST", "/v1/tenants", {"name": "a"}, OPERATOR, function_url)
    assert status == 201, a
    status, b = call("POST", "/v1/tenants", {"name": "b"}, OPERATOR, function_url)
    assert status == 201, b
    # When a principal scoped to tenant A lists tenants over payload 2.0
    principal = as_tenant(mgmt, db, a["id"]).identity
    status, page = call("GET", "/v1/tenants", None, principal, function_url)
    # Then it sees A only, as over REST
    assert status == 200, page
    assert [t["id"] for t in page["items"]] == [a["id"]]
    # And a request with no IAM identity is refused
    status, _ = call("GET", "/v1/tenants", None, None, function_url)
    assert status in (401, 403)
