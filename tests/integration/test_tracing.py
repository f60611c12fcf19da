"""One event's trace, receive -> enqueue (fan-out) -> deliver -> POST, exported by OTLP/HTTP
to a real receiver on loopback (decision 0070); and with tracing off or the event not
sampled, nothing exported and nothing written for it."""

from __future__ import annotations

import socket
import time

import pytest

from hookline.db import Database
from hookline.queues import TRACEPARENT
from hookline.settings import get_settings
from hookline.tracing import Tracing
from tests.integration.conftest import STRIPE_SECRET
from tests.support import operator
from tests.support.management import OPERATOR, ManagementClient
from tests.support.otlp import ReceivedSpan, running_otlp_receiver
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration


def outbox_traceparent(db: Database, event_id: str) -> str | None:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT traceparent FROM outbox WHERE event_id = %s", (event_id,)
        ).fetchone()
    assert row is not None
    return row["traceparent"]


def named(spans: list[ReceivedSpan], name: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.name == name]


@pytest.fixture
def otlp():
    with running_otlp_receiver() as receiver:
        yield receiver


def test_one_trace_follows_an_event_from_receive_to_each_attempt(
    make_pipeline, api, db, tenant, stripe_source, sink, otlp, monkeypatch
):
    # Given tracing on, exporting to a collector on loopback, and two subscribers of the
    # tenant, one of which fails once before it accepts
    monkeypatch.setenv("HOOKLINE_OTLP_TRACES_ENDPOINT", otlp.url)
    pipeline = make_pipeline()
    sink.behave("/flaky", statuses=[503, 200])
    for path in ("/ok", "/flaky"):
        operator.add_endpoint(db, get_settings(), tenant_id=tenant["id"], url=sink.url(path))
    # When Stripe posts an event and the pipeline delivers it everywhere
    body = stripe_event("evt_traced")
    answer = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    assert answer.status == 200
    event_id = answer.json()["id"]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2}, timeout=30)
    # Then the event's outbox row carries its trace
    traceparent = outbox_traceparent(db, event_id)
    assert traceparent is not None
    # And the collector received one trace: receive -> enqueue -> deliver -> POST, per attempt
    otlp.wait_for(lambda spans: len(named(spans, "POST")) == 3)
    spans = otlp.spans
    [receive] = named(spans, "receive")
    assert receive.parent_id == "" and receive.attributes["hookline.event_id"] == event_id
    assert traceparent.split("-")[1] == receive.trace_id
    enqueues = named(spans, "enqueue")
    assert enqueues and {e.parent_id for e in enqueues} == {receive.span_id}
    assert all(e.attributes["hookline.event_id"] == event_id for e in enqueues)
    delivers = named(spans, "deliver")
    assert len(delivers) == 3  # /ok once, /flaky twice
    assert {d.parent_id for d in delivers} <= {e.span_id for e in enqueues}
    posts = named(spans, "POST")
    assert {p.parent_id for p in posts} == {d.span_id for d in delivers}
    assert sorted(p.attributes["http.response.status_code"] for p in posts) == [200, 200, 503]
    assert [p.error for p in posts if p.attributes["http.response.status_code"] == 503] == [True]
    assert {s.trace_id for s in spans} == {receive.trace_id}
    # X-Ray-compatible ids: the trace id starts with its start time in epoch seconds
    assert abs(int(receive.trace_id[:8], 16) - int(time.time())) < 300
    assert {s.service for s in spans} == {"hookline"}


@pytest.mark.parametrize("sample_rate", [None, "0"], ids=["tracing-off", "not-sampled"])
def test_an_untraced_event_exports_nothing_and_writes_no_trace(
    make_pipeline, api, db, tenant, stripe_source, sink, otlp, monkeypatch, sample_rate
):
    # Given tracing off (no endpoint), or on with a sample rate of 0
    if sample_rate is not None:
        monkeypatch.setenv("HOOKLINE_OTLP_TRACES_ENDPOINT", otlp.url)
        monkeypatch.setenv("HOOKLINE_TRACE_SAMPLE_RATE", sample_rate)
    pipeline = make_pipeline()
    operator.add_endpoint(db, get_settings(), tenant_id=tenant["id"], url=sink.url("/ok"))
    # When an event is received and fanned out
    body = stripe_event("evt_untraced")
    answer = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    event_id = answer.json()["id"]
    pipeline.fanout()
    # Then its outbox row holds no trace and its queue message carries no attribute
    assert outbox_traceparent(db, event_id) is None
    queue = pipeline.queues["standard"].url
    [message] = pipeline.sqs.receive_message(
        QueueUrl=queue, MessageAttributeNames=["All"], VisibilityTimeout=0
    )["Messages"]
    assert TRACEPARENT not in (message.get("MessageAttributes") or {})
    # And once delivered, the collector received nothing
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    Tracing(otlp.url).flush()
    assert otlp.requests == 0 and otlp.spans == []


def test_a_collector_that_is_down_costs_no_event_and_no_delivery(
    make_pipeline, api, db, tenant, stripe_source, sink, monkeypatch
):
    # Given tracing on, exporting to a port where nothing listens
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    monkeypatch.setenv("HOOKLINE_OTLP_TRACES_ENDPOINT", f"http://127.0.0.1:{port}/v1/traces")
    pipeline = make_pipeline()
    operator.add_endpoint(db, get_settings(), tenant_id=tenant["id"], url=sink.url("/ok"))
    # When an event is received and delivered
    body = stripe_event("evt_collector_down")
    started = time.monotonic()
    answer = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    answered_in = time.monotonic() - started
    # Then the provider got its 200 within the flush's bound, and the event was delivered
    assert answer.status == 200 and answered_in < 2.5
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/ok")) == 1


def test_an_event_published_through_the_api_is_traced_from_publish_to_delivery(
    make_pipeline, db, tenant, sink, otlp, monkeypatch
):
    # Given tracing on and an operator calling the management API
    monkeypatch.setenv("HOOKLINE_OTLP_TRACES_ENDPOINT", otlp.url)
    monkeypatch.setenv("HOOKLINE_OPERATOR_PRINCIPALS", OPERATOR)
    pipeline = make_pipeline()
    from functions.api.handler import lambda_handler

    mgmt = ManagementClient(lambda_handler)
    operator.add_endpoint(db, get_settings(), tenant_id=tenant["id"], url=sink.url("/ok"))
    # When the tenant's own event is published and delivered
    answer = mgmt.post(
        "/v1/events", {"tenant_id": tenant["id"], "type": "order.paid", "payload": {}}
    )
    assert answer.status == 200, answer.body
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    # Then one trace runs publish -> enqueue -> deliver -> POST
    otlp.wait_for(lambda spans: len(named(spans, "POST")) == 1)
    [publish] = named(otlp.spans, "publish")
    [enqueue] = named(otlp.spans, "enqueue")
    [deliver] = named(otlp.spans, "deliver")
    [post] = named(otlp.spans, "POST")
    assert publish.attributes["hookline.event_id"] == answer.json()["id"]
    assert (enqueue.parent_id, deliver.parent_id, post.parent_id) == (
        publish.span_id,
        enqueue.span_id,
        deliver.span_id,
    )
    assert {s.trace_id for s in otlp.spans} == {publish.trace_id}
