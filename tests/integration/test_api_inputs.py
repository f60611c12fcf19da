"""Input no route can store or answer (issue 12): NUL bytes and lone surrogates in the path,
list filters, cursors, the Idempotency-Key and JSON bodies, absurd numbers and absurd depth
are refused with a 400 that names the field — never a 5xx — and a refused header value is
never repeated, neither in the answer nor in the log. Every stored event can be read back,
however deep its payload."""

from __future__ import annotations

import base64
import io
import json
import logging

import pytest

from hookline.catalogue_limits import DEFAULT_LIMITS
from hookline.repositories.ledger import NewEvent, store_event
from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support.lambdas import HttpResult

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"


def refused_naming(result, field):
    """The answer is a 400 problem whose errors name `field`."""
    assert result.status == 400, (result.status, result.body[:300])
    problem = result.json()
    assert result.headers["Content-Type"] == "application/problem+json"
    assert field in [e["field"] for e in problem["errors"]], problem
    return problem


def get_with_query(mgmt, path, params):
    """A GET whose query parameters reach the handler as given (a lone surrogate cannot be
    percent-encoded by a client library, but an event can carry one)."""
    event = build_rest_event("GET", path, {}, b"", identity_arn=mgmt.identity)
    event["queryStringParameters"] = dict(params)
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in params.items()}
    answer = mgmt.handler(event, LocalContext(function_name="api"))
    return HttpResult(
        answer["statusCode"], dict(answer.get("headers") or {}), answer["body"].encode()
    )


def nested(depth, leaf=0):
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


@pytest.fixture
def tenant_id(mgmt):
    return mgmt.post("/v1/tenants", {"name": "acme"}).json()["id"]


@pytest.mark.parametrize("bad", ["ten\x00x", "ten\ud800x"], ids=["nul", "surrogate"])
@pytest.mark.parametrize(
    ("path", "param"),
    [
        ("/v1/sources", "tenant_id"),
        ("/v1/events", "type"),
        ("/v1/deliveries", "endpoint_id"),
        ("/v1/event-types", "name"),
        ("/v1/tenants", "cursor"),
        ("/v1/replays", "cursor"),
    ],
)
def test_a_list_filter_or_cursor_that_text_cannot_hold_is_a_400_naming_it(mgmt, path, param, bad):
    refused_naming(get_with_query(mgmt, path, {param: bad}), param)


@pytest.mark.parametrize("bad", ["\x00", "\ud800"], ids=["nul", "surrogate"])
def test_an_id_in_the_path_that_text_cannot_hold_is_a_400(mgmt, bad):
    refused_naming(mgmt.get(f"/v1/endpoints/ep_{bad}"), "path")


@pytest.mark.parametrize("bad", ["key\x00", "key\ud800"], ids=["nul", "surrogate"])
def test_an_idempotency_key_that_text_cannot_hold_is_a_400_naming_the_header(mgmt, bad):
    result = mgmt.post("/v1/tenants", {"name": "b"}, headers={"Idempotency-Key": bad})
    problem = refused_naming(result, "Idempotency-Key")
    assert problem["errors"][0]["in"] == "header"
    assert mgmt.get("/v1/tenants").json()["items"] == []  # nothing was created


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"name": "a\\u0000b"}', "name"),
        (b'{"name": "\\ud800"}', "name"),
        (b'{"name": "x", "group": ' + b"7" * 5000 + b"}", "group"),
        (b'{"name": "x", "group": 1e999}', "group"),
    ],
    ids=["nul", "surrogate", "5000-digit integer", "infinite number"],
)
def test_a_body_field_no_route_can_store_is_a_400_naming_it(mgmt, body, field):
    refused_naming(mgmt.post("/v1/tenants", raw=body), field)
    assert mgmt.get("/v1/tenants").json()["items"] == []


def test_nested_option_and_schema_fields_are_named_by_their_path(mgmt, tenant_id):
    source = {"tenant_id": tenant_id, "scheme": "standard", "options": {"x": ["ok", "\x00"]}}
    refused_naming(mgmt.post("/v1/sources", source), "options.x.1")
    schema = {"type": "object", "properties": {"n": {"maximum": int("9" * 1200)}}}
    raw = json.dumps({"tenant_id": tenant_id, "name": "order.paid", "schema": schema})
    refused_naming(mgmt.post("/v1/event-types", raw=raw.encode()), "schema.properties.n.maximum")


def test_a_nul_inside_a_published_payload_is_data_and_kept(mgmt, tenant_id):
    published = mgmt.post(
        "/v1/events", {"tenant_id": tenant_id, "type": "note", "payload": {"text": "a\x00b"}}
    )
    assert published.status == 200, published.body
    shown = mgmt.get(f"/v1/events/{published.json()['id']}").json()
    assert shown["payload"] == {"text": "a\x00b"}


@pytest.mark.parametrize("depth", [201, 100_000])
def test_a_body_nested_absurdly_deep_is_a_400_naming_the_field(mgmt, tenant_id, depth):
    raw = (
        b'{"tenant_id": "%s", "type": "x", "payload": ' % tenant_id.encode()
        + b"[" * depth
        + b"]" * depth
        + b"}"
    )
    problem = refused_naming(mgmt.post("/v1/events", raw=raw), "payload" if depth < 900 else "body")
    assert "nested deeper than 200 levels" in problem["detail"]
    assert mgmt.get("/v1/events").json()["items"] == []


def test_a_published_event_as_deep_as_accepted_reads_back_as_json(mgmt, tenant_id):
    payload = nested(DEFAULT_LIMITS.payload_max_depth - 1)
    published = mgmt.post("/v1/events", {"tenant_id": tenant_id, "type": "x", "payload": payload})
    assert published.status == 200, published.body
    shown = mgmt.get(f"/v1/events/{published.json()['id']}")
    assert shown.status == 200 and shown.json()["payload"] == payload


def test_a_stored_event_too_deep_for_a_json_parser_reads_back_as_its_exact_bytes(
    mgmt, db, tenant_id
):
    payload = b"[" * 100_000 + b"]" * 100_000  # an archive restore stores what it is given
    with db.connection() as conn:
        stored = store_event(
            conn,
            NewEvent(
                tenant_id=tenant_id, origin="publish", type="deep", dedupe_key="d", payload=payload
            ),
        )
    shown = mgmt.get(f"/v1/events/{stored.id}")
    assert shown.status == 200, shown.body[:300]
    assert base64.b64decode(shown.json()["payload_base64"]) == payload


@pytest.fixture
def api_log():
    """What the API logs (Powertools' JSON lines) while the test runs."""
    from hookline.observability import logger

    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    lines = io.StringIO()
    previous = handler.setStream(lines)
    yield lines
    handler.setStream(previous)


def test_a_crlf_in_an_authorization_header_is_refused_by_name_only(mgmt, api_log):
    token = "Bearer sk_live_very_secret_token"
    headers = {"Authorization": f"{token}\r\nX-Evil: 1"}
    result = mgmt.request("GET", "/v1/tenants", headers=headers)
    problem = refused_naming(result, "Authorization")
    assert "sk_live_very_secret_token" not in result.body.decode()
    assert problem["errors"][0]["in"] == "header"
    log = api_log.getvalue()
    assert "request refused" in log  # the refusal is logged ...
    assert "sk_live_very_secret_token" not in log  # ... by name only


def test_a_crlf_in_an_endpoint_header_value_is_refused_by_name_only(mgmt, tenant_id, api_log):
    body = {
        "tenant_id": tenant_id,
        "url": PUBLIC_URL,
        "headers": {"Authorization": "Bearer sk_live_endpoint_token\r\nX-Evil: 1"},
    }
    result = mgmt.post("/v1/endpoints", body)
    assert result.status in (400, 422), result.body
    assert "sk_live_endpoint_token" not in result.body.decode()
    assert "Authorization" in result.body.decode()  # the name says which one
    assert "request refused" in api_log.getvalue()
    assert "sk_live_endpoint_token" not in api_log.getvalue()
