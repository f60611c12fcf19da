"""Ordered delivery through a real `hookline dev` (decision 0069): a flaky receiver gets each
key's events one at a time, in the order they were published."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest

from tests.e2e.conftest import Stack, wait_until
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e

# Every third request fails: heads of every key are retried.
FLAKY = [500 if i % 3 == 0 else 200 for i in range(60)] + [200]


def test_a_flaky_receiver_gets_each_keys_events_in_order(stack: Stack, sink: Sink) -> None:
    # Given an endpoint ordered by customer, whose receiver fails every third request
    sink.behave("/ordered", statuses=FLAKY)
    tenant = stack.tenant(name="ordered")
    endpoint = stack.endpoint(tenant, sink.url("/ordered"), ordering={"key": "$.payload.customer"})
    # When five events of each of three customers are published, interleaved
    for n in range(1, 6):
        for customer in ("a", "b", "c"):
            answer = httpx.post(
                stack.url + "/v1/events",
                json={"tenant_id": tenant, "type": "order.updated",
                      "payload": {"customer": customer, "n": n}},
                headers={"Idempotency-Key": str(uuid.uuid4()), **stack.auth},
            )  # fmt: skip
            assert answer.status_code == 200, answer.text
    # Then all fifteen are delivered
    wait_until(
        lambda: [d["state"] for d in stack.deliveries(endpoint_id=endpoint["id"])]
        == ["delivered"] * 15,
        timeout=60, what="every ordered delivery delivered",
    )  # fmt: skip
    # And each customer's requests came one at a time, in order: each is for the oldest event
    # not yet accepted, so none arrived before the one ahead of it was accepted
    seen = [
        (body["customer"], body["n"], FLAKY[min(i, len(FLAKY) - 1)])
        for i, body in enumerate(json.loads(r.body) for r in sink.requests("/ordered"))
    ]
    assert any(status == 500 for _, _, status in seen)
    for customer in ("a", "b", "c"):
        accepted: list[int] = []
        for c, n, status in seen:
            if c != customer:
                continue
            assert n == len(accepted) + 1, (customer, seen)
            if status < 300:
                accepted.append(n)
        assert accepted == [1, 2, 3, 4, 5], (customer, seen)
