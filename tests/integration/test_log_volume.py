"""Log volume (decision 0065): a success writes a log line only when sampled, a failure always
writes one line saying what to look up. The real receiver and deliver handlers, a loopback
sink, log lines captured as CloudWatch would get them."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest

import hookline
from hookline import observability
from hookline.config import HooklineConfig
from hookline.observability import logger
from hookline.settings import get_settings
from tests.integration.conftest import STRIPE_SECRET
from tests.support import operator
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """Every structured log line written meanwhile, one JSON document per line."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger(logger.name).addHandler(handler)
    try:
        yield stream
    finally:
        logging.getLogger(logger.name).removeHandler(handler)


def messages(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.strip()]


def test_accepted_events_write_no_line_unless_sampled(api, stripe_source, log_lines, monkeypatch):
    # Given success lines sampled at the deployed default, here never chosen
    monkeypatch.setattr(observability, "success_sample_rate", 0.0)
    # When 20 events are accepted and one badly signed request is refused
    for n in range(20):
        body = stripe_event(f"evt_quiet_{n}")
        assert api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body),
                        body=body).status == 200  # fmt: skip
    body = stripe_event("evt_forged")
    refused = api.post(stripe_source["path"], headers=stripe_headers("whsec_x", body), body=body)
    # Then only the refusal wrote a line
    assert refused.status == 401
    assert [m["message"] for m in messages(log_lines)] == ["request rejected"]


def test_a_sampled_success_says_it_was_sampled(api, stripe_source, log_lines, monkeypatch):
    # Given every success line sampled
    monkeypatch.setattr(observability, "success_sample_rate", 1.0)
    # When an event is accepted
    body = stripe_event("evt_loud")
    api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    # Then its line is written, marked with the rate it was sampled at
    [line] = messages(log_lines)
    assert line["message"] == "event accepted" and line["sampled"] == 1.0


def test_each_failed_attempt_writes_one_line_and_a_delivered_one_none(
    pipeline, db, sink, log_lines, monkeypatch
):
    # Given success lines never sampled, an endpoint that fails once and one that answers 200
    monkeypatch.setattr(observability, "success_sample_rate", 0.0)
    tenant = operator.add_tenant(db, HooklineConfig(), name="quiet", group="standard")["id"]
    sink.behave("/flaky", statuses=[500, 200])
    flaky = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/flaky"))
    operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url("/ok"))
    # When an event is published and both deliveries end delivered
    with db.connection() as conn, conn.transaction():
        event = hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": 1}).id
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2}, timeout=30)
    # Then exactly one line was written: the failed attempt, naming the delivery and why
    failures = [m for m in messages(log_lines) if m["message"] == "delivery not delivered"]
    with db.connection() as conn:
        delivery = conn.execute(
            "SELECT id FROM deliveries WHERE event_id = %s AND endpoint_id = %s",
            (event, flaky["id"]),
        ).fetchone()
    assert len(failures) == 1, messages(log_lines)
    assert failures[0]["delivery"] == delivery["id"]
    assert failures[0]["result"] == "retry" and failures[0]["status"] == 500
    assert len(messages(log_lines)) == 1, messages(log_lines)
