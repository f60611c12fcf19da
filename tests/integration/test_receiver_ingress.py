"""The receiver accepts each front door's events (decision 0035): REST API (payload 1.0),
HTTP API and function URL (2.0), verifying the same signed bytes."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from hookline.ingress import event_ingress, iam_principal
from hookline_dev.local.apigw import LocalContext, build_http_event, build_rest_event
from tests.integration.conftest import STRIPE_SECRET
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration

SHAPES = {
    "rest": lambda *a, **k: build_rest_event(*a, **k),
    "http": lambda *a, **k: build_http_event(*a, **k),
    "function_url": lambda *a, **k: build_http_event(*a, function_url=True, **k),
}


def _call(handler: Any, event: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    answer = handler(event, LocalContext(function_name="receiver"))
    body = answer.get("body") or ""
    if answer.get("isBase64Encoded"):
        body = base64.b64decode(body).decode()
    return answer["statusCode"], json.loads(body) if body else {}


@pytest.mark.parametrize("ingress", list(SHAPES))
def test_a_signed_event_is_accepted_through_each_front_door(api, db, stripe_source, ingress):
    from functions.receiver.handler import lambda_handler

    # Given a Stripe-signed event as the chosen front delivers it
    body = stripe_event(f"evt_{ingress}")
    event = SHAPES[ingress](
        "POST", stripe_source["path"], stripe_headers(STRIPE_SECRET, body), body
    )
    assert event_ingress(event) == ingress
    # When the receiver handles it
    status, answer = _call(lambda_handler, event)
    # Then it is verified on the exact bytes and stored
    assert status == 200 and answer["duplicate"] is False
    with db.connection() as conn:
        stored = conn.execute(
            "SELECT payload FROM events WHERE id = %s", (answer["id"],)
        ).fetchone()
    assert bytes(stored["payload"]) == body


@pytest.mark.parametrize("ingress", list(SHAPES))
def test_a_bad_signature_is_refused_through_each_front_door(api, db, stripe_source, ingress):
    from functions.receiver.handler import lambda_handler

    body = stripe_event("evt_forged")
    headers = stripe_headers("whsec_not_the_secret", body)
    status, _ = _call(lambda_handler, SHAPES[ingress]("POST", stripe_source["path"], headers, body))
    assert status == 401


@pytest.mark.parametrize("ingress", list(SHAPES))
def test_the_iam_caller_is_found_in_each_shape(ingress):
    arn = "arn:aws:iam::123456789012:role/producer"
    event = SHAPES[ingress]("GET", "/v1/tenants", {}, b"", identity_arn=arn)
    assert iam_principal(event) == arn
    assert iam_principal(SHAPES[ingress]("GET", "/v1/tenants", {}, b"")) is None


@pytest.mark.parametrize("ingress", ["http", "function_url"])
def test_the_local_front_speaks_the_chosen_shape(api, db, stripe_source, ingress):
    import httpx

    from functions.receiver.handler import lambda_handler
    from hookline_dev.local.front import LocalFront

    # Given the dev stack's front imitating an HTTP API or a function URL
    seen: list[str] = []

    def receiver(event: dict[str, Any], context: Any) -> dict[str, Any]:
        seen.append(event_ingress(event))
        return lambda_handler(event, context)

    front = LocalFront(receiver, port=0, ingress=ingress)
    front.start()
    try:
        # When a provider posts a signed event over HTTP
        body = stripe_event(f"evt_front_{ingress}")
        answer = httpx.post(
            f"{front.url}{stripe_source['path']}",
            content=body,
            headers=stripe_headers(STRIPE_SECRET, body),
        )
    finally:
        front.stop()
    # Then the receiver got the 2.0 shape and accepted the event
    assert seen == [ingress]
    assert answer.status_code == 200 and answer.json()["duplicate"] is False
