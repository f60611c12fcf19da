"""Deliveries sent without a claim statement (decision 0108): a first message that carries its
event, to an endpoint whose cap no deployment's concurrency can reach and that has no rate
limit or ordering, is sent with its record as deliver's only statement; everything else is
claimed as before. Real Postgres and its statement log, moto SQS, the real receiver and
deliver handlers, a loopback subscriber."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from functions.deliver.handler import lambda_handler as deliver
from hookline.db import Database
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.integration.conftest import STRIPE_SECRET
from tests.integration.test_delivery_batch import sqs_event
from tests.integration.test_proxy_pinning import statement_log  # noqa: F401 - a fixture
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.pipeline import Pipeline
from tests.support.signers import stripe_event, stripe_headers, verify_standard
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

CLAIMS = ("hookline_claim", "claim_delivery_to_send", "claim_deliveries_to_send")


@dataclass
class Stage:
    """The pipeline as deployed (fan-out at receipt), a tenant with a Stripe source, a sink,
    and the statements the server runs."""

    pipeline: Pipeline
    api: ApiClient
    db: Database
    tenant: dict[str, str]
    source: dict[str, str]
    sink: Sink
    log: Callable[[], list[Any]]

    @property
    def ceiling(self) -> int:
        """The most deliveries the test deployment's deliver functions can have in flight."""
        return sum(g.max_concurrency * g.batch_size for g in self.pipeline.config.tenant_groups)

    def endpoint(self, path: str, **options: Any) -> dict[str, Any]:
        return operator.add_endpoint(
            self.db, get_settings(), tenant_id=self.tenant["id"], url=self.sink.url(path),
            **options,
        )  # fmt: skip

    def post(self, event_id: str, size: int = 0) -> str:
        """Stripe posts an event; its id in the ledger."""
        body = stripe_event(event_id, size=size)
        headers = stripe_headers(STRIPE_SECRET, body)
        result = self.api.post(self.source["path"], headers=headers, body=body)
        assert result.status == 200, result.body
        return str(result.json()["id"])

    def statements(self) -> list[str]:
        return [text for _, text in self.log()]

    def claims_since(self, start: int) -> list[str]:
        return [s for s in self.statements()[start:] if any(name in s for name in CLAIMS)]

    def take_message(self, sqs: Any) -> str:
        """The one message on the standard group's queue, taken off it: its body."""
        url = self.pipeline.queues["standard"].url
        [message] = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
        return str(message["Body"])


@pytest.fixture
def stage(
    make_pipeline,
    api,
    db,
    tenant,
    stripe_source,
    sink,
    statement_log,  # noqa: F811
    monkeypatch,
) -> Stage:
    """As deployed, the receiver fanning out as it stores; deliver keeping an endpoint 0.3 s."""
    monkeypatch.setenv("HOOKLINE_FANOUT_AT_RECEIPT", "true")
    monkeypatch.setenv("HOOKLINE_ENDPOINT_CACHE_SECONDS", "0.3")
    return Stage(make_pipeline(), api, db, tenant, stripe_source, sink, statement_log)


def handle(body: str, receive_count: int = 1) -> dict[str, Any]:
    """The deliver function given one message, handed out for the `receive_count`th time."""
    event = sqs_event([body])
    event["Records"][0]["attributes"]["ApproximateReceiveCount"] = str(receive_count)
    return deliver(event, LocalContext(function_name="deliver"))


def test_a_first_message_to_an_endpoint_whose_cap_cannot_be_reached_needs_no_claim(stage):
    # Given an endpoint whose cap is the most the deployment can have in flight
    wants = stage.endpoint("/free", max_concurrency=stage.ceiling)
    # When Stripe posts two events and deliver takes each one's message off the queue
    first = stage.post("evt_free_1")
    before = len(stage.log())
    assert stage.pipeline.deliver_once("standard") == 1
    second = stage.post("evt_free_2")
    middle = len(stage.log())
    assert stage.pipeline.deliver_once("standard") == 1
    log = stage.statements()
    # Then both arrive, signed with the endpoint's secret, and are recorded as delivered
    requests = stage.sink.requests("/free")
    assert [json.loads(r.body)["id"] for r in requests] == ["evt_free_1", "evt_free_2"]
    assert all(verify_standard([wants["secret"]], r.headers, r.body) for r in requests)
    assert stage.pipeline.states() == {"delivered": 2}
    for event_id in (first, second):
        delivery = stage.pipeline.delivery(event_id=event_id)
        [attempt] = stage.pipeline.attempts(delivery["id"])
        assert attempt["status_code"] == 200 and delivery["attempt_count"] == 1
    # And deliver claimed neither: it read the endpoint once, then only recorded
    assert stage.claims_since(before) == []
    assert sum("endpoint_secrets" in s for s in log[before:middle]) == 1
    delivering = [s for s in log[middle:] if "hookline_accept_event" not in s]
    assert len(delivering) == 1 and "record_batch" in delivering[0], log[middle:]


def test_an_event_published_through_the_api_needs_no_claim_either(mgmt, stage):
    # Given an endpoint whose cap cannot be reached, for the tenant's own order events
    wants = stage.endpoint("/orders", max_concurrency=stage.ceiling, event_types=["order.*"])
    # When the tenant's service publishes one through the API and deliver takes its message
    result = mgmt.post(
        "/v1/events", {"tenant_id": stage.tenant["id"], "type": "order.paid", "payload": {"n": 7}}
    )
    assert result.status == 200, result.body
    before = len(stage.log())
    assert stage.pipeline.deliver_once("standard") == 1
    # Then it arrives signed, and deliver made no claim for it
    [request] = stage.sink.requests("/orders")
    assert json.loads(request.body) == {"n": 7}
    assert verify_standard([wants["secret"]], request.headers, request.body)
    assert stage.claims_since(before) == [] and stage.pipeline.states() == {"delivered": 1}


@pytest.mark.parametrize(
    ("below_ceiling", "rate_limit"), [(1, None), (0, "100/s")], ids=["cap", "rate"]
)
def test_an_endpoint_a_claim_can_hold_back_is_claimed(stage, below_ceiling, rate_limit):
    # Given an endpoint whose cap the deployment could reach, or that has a rate limit
    stage.endpoint("/held", rate_limit=rate_limit, max_concurrency=stage.ceiling - below_ceiling)
    # When an event's message is delivered
    stage.post("evt_held_1")
    before = len(stage.log())
    assert stage.pipeline.deliver_once("standard") == 1
    # Then it was claimed, as every delivery before decision 0108, and arrived
    assert len(stage.claims_since(before)) == 1
    assert len(stage.sink.requests("/held")) == 1
    assert stage.pipeline.states() == {"delivered": 1}


@pytest.mark.parametrize("change", ["handed out again", "lease nearly over", "too large"])
def test_a_message_whose_claim_could_matter_is_claimed(stage, sqs, change):
    # Given an endpoint that needs no claim, and an event's message as the queue holds it
    stage.endpoint("/again", max_concurrency=stage.ceiling)
    stage.post("evt_again_1", size=20_000 if change == "too large" else 0)
    body, count = stage.take_message(sqs), 1
    doc = json.loads(body)
    if change == "too large":  # a payload over 16 KiB is not carried
        assert "event" not in doc
    elif change == "handed out again":  # a copy may have been claimed or sent before
        count = 2
    else:  # the reconciler could send it again before this attempt ends
        doc["event"]["lease_ms"] = int(time.time() * 1000) + 10_000
        body = json.dumps(doc)
    # When deliver handles it
    before = len(stage.log())
    assert handle(body, count) == {"batchItemFailures": []}
    # Then it was claimed before it was sent, and arrived once
    assert len(stage.claims_since(before)) == 1
    assert len(stage.sink.requests("/again")) == 1
    assert stage.pipeline.states() == {"delivered": 1}


def test_a_disabled_endpoint_stops_receiving_once_its_kept_copy_expires(stage):
    # Given an endpoint that needs no claim, sent to once (so deliver keeps it)
    wants = stage.endpoint("/off", max_concurrency=stage.ceiling)
    stage.post("evt_off_1")
    assert stage.pipeline.deliver_once("standard") == 1
    # When an event's message waits on the queue while the endpoint is disabled, and deliver
    # takes it after its copy of the endpoint has expired
    second = stage.post("evt_off_2")
    with stage.db.connection() as conn:
        conn.execute("UPDATE endpoints SET enabled = false WHERE id = %s", (wants["id"],))
    time.sleep(0.4)
    assert stage.pipeline.deliver_once("standard") == 1
    # Then that event is not sent: its delivery fails for that reason
    assert [json.loads(r.body)["id"] for r in stage.sink.requests("/off")] == ["evt_off_1"]
    delivery = stage.pipeline.delivery(event_id=second)
    assert delivery["state"] == "failed" and delivery["last_error"] == "endpoint disabled"


def test_a_stale_message_sent_without_a_claim_does_not_finish_its_delivery(stage, sqs):
    # Given an endpoint that needs no claim, and an event whose delivery was queued again
    # under a new generation after its first message was sent (a send at receipt that half
    # failed, its deliveries put back and sent again by the fan-out)
    stage.endpoint("/stale", max_concurrency=stage.ceiling)
    event_id = stage.post("evt_stale_1")
    body = stage.take_message(sqs)
    with stage.db.connection() as conn:
        conn.execute("UPDATE deliveries SET enqueue_seq = enqueue_seq + 1")
    # When deliver handles the first message
    assert handle(body) == {"batchItemFailures": []}
    # Then it was sent (what a claim would have stopped: a duplicate, never a loss), its
    # attempt is in the log, and the delivery still waits for its new generation's message
    assert len(stage.sink.requests("/stale")) == 1
    delivery = stage.pipeline.delivery(event_id=event_id)
    assert delivery["state"] == "queued" and delivery["attempt_count"] == 0
    assert [a["status_code"] for a in stage.pipeline.attempts(delivery["id"])] == [200]
