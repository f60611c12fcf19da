"""A busy endpoint's deliveries do not ride the queue forever (decision 0034).

Deferrals go back to the deliver function's own queue; Lambda stops such a chain after ~16
hops. A delivery deferred more than `max_deferrals_in_a_row` times in a row leaves the
queue: it becomes a due row in Postgres, which fan-out enqueues when due.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.delivery import Deliverer, Result
from hookline.queues import DeliveryMessage, DeliveryQueues
from hookline.runtime import delivery_options, delivery_queues, http_client, retry_policy
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration


class RecordingQueues(DeliveryQueues):
    """The real (moto) queues, remembering what was sent."""

    def __init__(self, real: DeliveryQueues) -> None:
        super().__init__(real.sqs, real.config, url_prefix=real.url_prefix)
        self.sent: list[DeliveryMessage] = []

    def send(
        self, messages: Sequence[DeliveryMessage], delay_seconds: float = 0
    ) -> list[DeliveryMessage]:
        self.sent += messages
        return super().send(messages, delay_seconds)


def test_a_delivery_deferred_too_often_in_a_row_is_parked_then_fanned_out_when_due(
    pipeline, db, sink
):
    # Given an endpoint with a cap of 1 whose only slot another delivery holds for long
    settings = get_settings()
    tenant = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    ep = operator.add_endpoint(
        db, settings, tenant_id=tenant, url=sink.url("/busy"), max_concurrency=1
    )
    held = pipeline.hold_slot(ep, seconds=3600)
    with db.connection() as conn, conn.transaction():
        hookline.publish(conn, tenant_id=tenant, type="order.created", payload={})
    pipeline.fanout()
    queued = pipeline.delivery(state="queued")
    queues = RecordingQueues(delivery_queues(settings))
    options = delivery_options(settings)
    deliverer = Deliverer(
        db, queues, http_client(settings), retry_policy(settings.config), options, settings=settings
    )
    # When its message is handled, and each deferral's message after it
    body = DeliveryMessage(queued["id"], queued["enqueue_seq"], ep["id"], "standard").body()
    results = []
    for _ in range(options.max_deferrals_in_a_row + 1):
        results.append(deliverer.handle(body).result)
        if queues.sent:
            body = queues.sent[-1].body()
    # Then it was deferred the allowed number of times, each message counting the streak,
    # and then parked: no further message, a pending row due later, no attempt counted
    n = options.max_deferrals_in_a_row
    assert results == [Result.DEFERRED] * n + [Result.PARKED]
    assert [m.deferrals for m in queues.sent] == list(range(1, n + 1))
    parked = pipeline.delivery(id=queued["id"])
    assert (parked["state"], parked["attempt_count"]) == ("pending", 0)
    assert parked["next_attempt_at"] > parked["updated_at"]
    # When the endpoint has room again and the due time has come
    with db.connection() as conn:
        conn.execute("DELETE FROM deliveries_in_flight WHERE id = %s", (held,))
        conn.execute("DELETE FROM deliveries WHERE id = %s", (held,))
        conn.execute("UPDATE deliveries SET next_attempt_at = now() WHERE id = %s", (queued["id"],))
    # Then fan-out enqueues it again (a new generation) and it is delivered
    assert pipeline.fanout()["enqueued"] == 1
    pipeline.run_until(lambda: pipeline.delivery(id=queued["id"])["state"] == "delivered")
    assert len(sink.requests("/busy")) == 1
