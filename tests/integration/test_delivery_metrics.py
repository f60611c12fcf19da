"""Delivery metrics carry the destination kind (decision 0057): the deliver function prints
one EMF document per kind in a batch, with the one dimension set [kind, service], so
CloudWatch can show success and failure per kind while `SUM(x)` stays the total. The real
deliver handler, an https sink on loopback and SQS destinations on moto."""

from __future__ import annotations

import json
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.settings import get_settings
from tests.support import customer_aws, operator
from tests.support.aws import REGION
from tests.support.customer_aws import ACCOUNT, ROLE

pytestmark = pytest.mark.integration

DELIVERY_METRICS = {
    "DeliverySucceeded", "DeliveryFailed", "DeliveryRetried", "DeliveryDead",
    "DeliveryDeferred", "DeliveryParked", "DeliverySkipped", "DeliveryLatencyMs",
}  # fmt: skip


def emf_documents(out: str) -> list[dict[str, Any]]:
    documents = []
    for line in out.splitlines():
        if line.startswith("{") and '"_aws"' in line:
            documents.append(json.loads(line))
    return documents


def values_by_kind(documents: list[dict[str, Any]]) -> dict[tuple[str, str], int]:
    """{(kind, metric): how many} over the documents that carry delivery metrics: a count's
    sum, a latency's number of values."""
    counts: dict[tuple[str, str], int] = {}
    for doc in documents:
        [directive] = doc["_aws"]["CloudWatchMetrics"]
        names = {m["Name"] for m in directive["Metrics"]}
        if not names & DELIVERY_METRICS:
            continue
        # The delivery metrics are published under [kind, service] only
        assert [sorted(d) for d in directive["Dimensions"]] == [["kind", "service"]], doc
        for name in names:
            values = doc[name] if isinstance(doc[name], list) else [doc[name]]
            # counts are summed per batch (decision 0065); latencies are one value per attempt
            n = len(values) if name == "DeliveryLatencyMs" else int(sum(values))
            counts[(doc["kind"], name)] = counts.get((doc["kind"], name), 0) + n
    return counts


def test_outcomes_and_latency_are_counted_per_destination_kind(
    pipeline, db, sink, moto_endpoint, capsys
):
    # Given an https endpoint, an SQS queue, and an SQS endpoint whose queue does not exist
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    settings = get_settings()
    operator.add_endpoint(db, settings, tenant_id=t, url=sink.url("/hook"))
    _, arn = customer_aws.queue(customer_aws.client(moto_endpoint, "sqs"), "orders")
    for target in (arn, f"arn:aws:sqs:{REGION}:{ACCOUNT}:gone"):
        operator.add_endpoint(
            db, settings, tenant_id=t, url=None, kind="sqs", target=target, role_arn=ROLE
        )
    capsys.readouterr()
    # When two events are published and delivered
    with db.connection() as conn, conn.transaction():
        for n in range(2):
            hookline.publish(conn, tenant_id=t, type="order.paid", payload={"n": n})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 4, "failed": 2})
    counts = values_by_kind(emf_documents(capsys.readouterr().out))
    # Then https and sqs are counted apart, each attempt with its latency
    assert counts == {
        ("https", "DeliverySucceeded"): 2,
        ("https", "DeliveryLatencyMs"): 2,
        ("sqs", "DeliverySucceeded"): 2,
        ("sqs", "DeliveryFailed"): 2,
        ("sqs", "DeliveryLatencyMs"): 4,
    }
