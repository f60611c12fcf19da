"""Input transformers end to end: the subscriber receives (and can verify) the rendered
template; an event the template cannot render fails its delivery with the reason; the
preview shows both before saving (decision 0045)."""

from __future__ import annotations

import json

import pytest
from standardwebhooks.webhooks import Webhook

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management.endpoint_preview import preview_endpoint
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration

TRANSFORM = {
    "InputPathsMap": {"amount": "$.payload.amount", "who": "$.payload.customer.name"},
    "InputTemplate": '{"text": "<who> paid <amount>", "amount": <amount>, "kind": "receipt"}',
}


def publish(db: Database, tenant_id: str, payload: dict) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="invoice.paid", payload=payload).id


def test_the_subscriber_receives_the_rendered_template_signed_over_it(pipeline, db, sink):
    # Given an endpoint with an input transformer
    t = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    ep = operator.add_endpoint(
        db, get_settings(), tenant_id=t, url=sink.url("/r"), input_transformer=TRANSFORM
    )
    # When an event is published and delivered
    publish(db, t, {"amount": 42.5, "customer": {"name": "Zoë"}, "secret_note": "x"})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    # Then the body is what the template says, and verifies with an independent library
    [request] = sink.requests("/r")
    assert json.loads(request.body) == {"text": "Zoë paid 42.5", "amount": 42.5, "kind": "receipt"}
    assert request.headers["content-type"] == "application/json"
    Webhook(ep["secret"]).verify(request.body, dict(request.headers))


def test_an_event_the_template_cannot_render_fails_with_the_reason(pipeline, db, sink):
    t = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    operator.add_endpoint(
        db, get_settings(), tenant_id=t, url=sink.url("/r"), input_transformer=TRANSFORM
    )
    event_id = publish(db, t, {"amount": 1})  # no customer
    pipeline.run_until(lambda: pipeline.states() == {"failed": 1})
    delivery = pipeline.delivery(event_id=event_id)
    [attempt] = pipeline.attempts(delivery["id"])
    assert "$.payload.customer.name (<who>) is not in the event" in attempt["error_class"]
    assert sink.requests("/r") == []


def test_the_preview_shows_the_body_or_the_reason_before_saving(pipeline, db, sink):
    t = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    ep = operator.add_endpoint(
        db, get_settings(), tenant_id=t, url=sink.url("/p"),
        content_filter={"payload": {"amount": [{"numeric": [">", 10]}]}},
    )  # fmt: skip
    event = {"type": "invoice.paid", "payload": {"amount": 42, "customer": {"name": "Al"}}}
    # The saved endpoint: it matches, and without a transformer the payload is sent as is
    plain = preview_endpoint(db, operator.OPERATOR, ep["id"], event)
    assert plain == {
        "matches": True, "body": '{"amount":42,"customer":{"name":"Al"}}',
        "content_type": "application/json", "error": None,
    }  # fmt: skip
    # A transformer tried before saving it
    tried = preview_endpoint(
        db, operator.OPERATOR, ep["id"], {**event, "input_transformer": TRANSFORM}
    )
    assert json.loads(tried["body"])["text"] == "Al paid 42"
    small = {"type": "invoice.paid", "payload": {"amount": 3}}
    failing = preview_endpoint(
        db, operator.OPERATOR, ep["id"], {**small, "input_transformer": TRANSFORM}
    )
    assert failing["matches"] is False
    assert failing["error"] == "transform: $.payload.customer.name (<who>) is not in the event"
    with pytest.raises(BadRequest, match="<nope> is not defined"):
        preview_endpoint(
            db, operator.OPERATOR, ep["id"],
            {**event, "input_transformer": {"InputTemplate": "<nope>"}},
        )  # fmt: skip
