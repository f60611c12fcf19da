"""A deliver batch goes to its endpoint one message at a time when the container has seen that
endpoint answer fast, and at once when it has not, or once the batch has taken longer than
`deliver_in_sequence_ms` (decision 0093). The real deliver handler, a loopback sink that
counts the requests it holds at once."""

from __future__ import annotations

import time
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.queues import DeliveryMessage
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.integration.test_delivery_batch import sqs_event
from tests.support import operator

pytestmark = pytest.mark.integration


class Endpoint:
    """One endpoint on the sink with events to send it, a batch at a time."""

    def __init__(self, pipeline: Any, db: Any, sink: Any, path: str) -> None:
        self.pipeline, self.db, self.sink, self.path = pipeline, db, sink, path
        tenant = operator.add_tenant(db, HooklineConfig(), name="pace", group="standard")["id"]
        self.tenant = tenant
        self.id = operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=sink.url(path), max_concurrency=100
        )["id"]

    def batch(self, count: int, *, delay: float) -> tuple[float, int]:
        """Send `count` new events in one SQS batch to an endpoint answering after `delay`:
        how long the batch took, and the most requests the endpoint held at once."""
        with self.db.connection() as conn, conn.transaction():
            for n in range(count):
                hookline.publish(conn, tenant_id=self.tenant, type="order.paid", payload={"n": n})
        self.pipeline.fanout()
        with self.db.connection() as conn:
            rows = conn.execute(
                "SELECT id, enqueue_seq, endpoint_id, tenant_group FROM deliveries"
                " WHERE endpoint_id = %s AND state = 'queued' ORDER BY id",
                (self.id,),
            ).fetchall()
        bodies = [
            DeliveryMessage(r["id"], r["enqueue_seq"], r["endpoint_id"], r["tenant_group"]).body()
            for r in rows
        ]
        assert len(bodies) == count
        behaviour = self.sink.behave(self.path, delay=delay)
        from functions.deliver.handler import lambda_handler

        began = time.monotonic()
        answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
        took = time.monotonic() - began
        assert answer == {"batchItemFailures": []}
        return took, behaviour.max_in_flight


def test_an_endpoint_seen_answering_fast_gets_a_batch_one_message_at_a_time(
    make_pipeline, db, sink
):
    # Given an endpoint this deliver container has not sent to yet, answering in 0.2 s
    pipeline = make_pipeline(deliver_in_sequence_ms=2000)
    endpoint = Endpoint(pipeline, db, sink, "/fast")
    # When a batch of six goes to it, it gets them at once
    took, at_once = endpoint.batch(6, delay=0.2)
    assert at_once > 1 and took < 1.0, (at_once, took)
    # And once it has answered at once (no delay), the next batch of six comes to it one
    # message at a time, each after the last was answered
    endpoint.batch(6, delay=0)
    _, at_once = endpoint.batch(6, delay=0)
    assert at_once == 1
    assert pipeline.states() == {"delivered": 18}


def test_a_batch_that_takes_longer_than_the_budget_sends_the_rest_at_once(make_pipeline, db, sink):
    # Given an endpoint seen answering fast, with one second of in-turn budget
    pipeline = make_pipeline(deliver_in_sequence_ms=1000)
    endpoint = Endpoint(pipeline, db, sink, "/slowing")
    endpoint.batch(6, delay=0)
    endpoint.batch(6, delay=0)
    # When it turns slow (0.6 s an answer) and a batch of six goes to it
    took, at_once = endpoint.batch(6, delay=0.6)
    # Then the batch starts in turn, and past the budget the four messages left go at once:
    # it takes about three answers' time (1.8 s), not six (3.6 s)
    assert at_once > 1 and took < 2.7, (at_once, took)
    # And the next batch goes at once from the start, the endpoint now known to be slow
    took, at_once = endpoint.batch(6, delay=0.6)
    assert at_once > 2 and took < 1.2, (at_once, took)
    assert pipeline.states() == {"delivered": 24}
