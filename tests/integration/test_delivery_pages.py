"""What the portal and the console show of what was sent (issue 26): a delivery log that
names things and filters by event type, state and time; a delivery page with the payload
exactly as sent (escaped, pretty JSON, the transformed body), the request headers (signature
values recomputed, secrets and custom header values never) and each attempt; an endpoint page
with its health and chart; the portal's catalogue with the operational events."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from markupsafe import escape

from hookline.config import HooklineConfig
from hookline.db import get_database
from hookline.management import event_service
from hookline.management.access import OPERATOR, Caller
from hookline.management.portal_links import create_portal_link
from hookline.replay import wait_for_local_replays
from hookline.runtime import reset_runtime
from hookline.settings import get_settings
from tests.support import operator
from tests.support.console import ConsoleClient, text
from tests.support.pipeline import Pipeline
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

OPERATOR_CALLER = Caller("test-operator", OPERATOR)
TRANSFORMER = {"InputPathsMap": {"o": "$.payload.order"}, "InputTemplate": '{"order_id": <o>}'}


@pytest.fixture
def console(
    pipeline: Pipeline, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> Iterator[ConsoleClient]:
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    monkeypatch.delenv("HOOKLINE_REPLAY_FUNCTION", raising=False)
    get_settings.cache_clear()
    reset_runtime()
    from functions.console.handler import lambda_handler

    yield ConsoleClient(lambda_handler)
    assert wait_for_local_replays(30), "a replay thread is still running"


def sent_delivery(pipeline: Pipeline, sink: Sink) -> dict[str, Any]:
    """A tenant's endpoint (transformer, a credential in a custom header) that answered 500
    then 200 to an order event carrying markup."""
    db = pipeline.db
    sink.behave("/orders", statuses=[500, 200], headers={"X-Answer": "yes"})
    tenant = operator.add_tenant(db, HooklineConfig(), name="Acme Shop", group="standard")["id"]
    endpoint = operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url=sink.url("/orders"), description="orders svc",
        headers=["X-Api-Key: s3cr3t-key-value"], input_transformer=TRANSFORMER,
    )  # fmt: skip
    event_service.publish_event(
        db, get_settings(), OPERATOR_CALLER, tenant_id=tenant, type="order.paid",
        payload={"order": 42, "note": "<script>alert(1)</script>"}, idempotency_key=None,
    )  # fmt: skip
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1}, timeout=30)
    delivery = pipeline.delivery(endpoint_id=endpoint["id"])
    return {"tenant": tenant, "endpoint": endpoint, "delivery": delivery}


def portal_session(console: ConsoleClient, tenant: str) -> None:
    """Open the tenant's portal from a portal link (confirmed, as the link's page asks)."""
    made = create_portal_link(
        get_database(), get_settings(), OPERATOR_CALLER, tenant, own_url="",
        ttl=timedelta(minutes=15),
    )  # fmt: skip
    token = made["url"].split("token=", 1)[1]
    assert console.get(made["url"]).status == 200
    assert console.post("/portal/login", {"token": token}).status == 303


def test_the_portal_delivery_page_shows_what_was_sent_and_what_came_back(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink
) -> None:
    # Given a delivery that took two attempts, and its tenant's customer in the portal
    made = sent_delivery(pipeline, sink)
    delivery, endpoint = made["delivery"], made["endpoint"]
    portal_session(console, made["tenant"])
    # When they open the delivery's page
    page = console.get(f"/portal/deliveries/{delivery['id']}")
    body = text(page)
    # Then it names the event type and shows the payload as published, escaped and pretty
    assert page.status == 200 and "order.paid" in body
    assert "<script>alert(1)</script>" not in body
    assert escape('"note": "<script>alert(1)</script>"') in body
    # and the body the transformer made, which is what was sent
    [first, second] = sink.requests("/orders")
    assert json.loads(second.body) == {"order_id": 42}
    assert escape(json.dumps({"order_id": 42}, indent=2)) in body
    # and each attempt's status, response and request headers: the signature the subscriber
    # received, the custom header's name but never its value, never the signing secret
    assert "500" in body and "200" in body
    assert '<th scope="row">x-answer</th><td><code>yes</code>' in body
    assert escape(second.headers["webhook-signature"]) in body
    assert escape(first.headers["webhook-signature"]) in body
    assert "x-api-key" in body.lower() and "s3cr3t-key-value" not in body
    assert endpoint["secret"] not in body
    # and it offers a resend and a test event
    assert f"/portal/deliveries/{delivery['id']}/resend" in body
    assert f"/portal/endpoints/{endpoint['id']}/test" in body


def test_the_delivery_log_names_things_and_filters_by_type_state_and_time(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink
) -> None:
    # Given a delivered order event
    made = sent_delivery(pipeline, sink)
    delivery_id = made["delivery"]["id"]
    # When the operator lists deliveries in the console
    listed = text(console.get("/console/deliveries"))
    # Then the row names the tenant, the endpoint and the event type, not bare ids
    assert "Acme Shop" in listed and "orders svc" in listed and "order.paid" in listed
    # And the portal's log filters by event type, state and time
    portal_session(console, made["tenant"])
    by = {
        "type": text(console.get("/portal/deliveries?event_type=order.paid")),
        "other type": text(console.get("/portal/deliveries?event_type=invoice.paid")),
        "state": text(console.get("/portal/deliveries?state=dead")),
        "future": text(console.get("/portal/deliveries?since=2999-01-01T00:00")),
        "past": text(console.get("/portal/deliveries?until=2999-01-01T00:00")),
    }
    assert delivery_id in by["type"] and delivery_id in by["past"]
    assert all(delivery_id not in by[k] for k in ("other type", "state", "future"))
    bad = console.get("/portal/deliveries?since=yesterday")
    assert bad.status == 400 and "since" in text(bad)


def test_endpoint_pages_show_health_and_the_catalogue_shows_operational_events(
    console: ConsoleClient, pipeline: Pipeline, sink: Sink
) -> None:
    # Given an endpoint that answered 500 then 200
    made = sent_delivery(pipeline, sink)
    portal_session(console, made["tenant"])
    # When its page and the catalogue are opened in the portal
    page = text(console.get(f"/portal/endpoints/{made['endpoint']['id']}"))
    catalogue = text(console.get("/portal/event-types"))
    # Then the endpoint's health is there: state, the hour's success rate, and a chart bar
    assert 'id="health-state">healthy' in page and "50%" in page
    assert 'id="health-chart"' in page and '<rect class="bar"' in page
    # And the catalogue documents each operational event with its schema and example
    for name in ("endpoint.failing", "endpoint.recovered", "endpoint.disabled", "delivery.dead"):
        assert name in catalogue
    assert "how_to_reenable" in catalogue and "consecutive_failures" in catalogue
