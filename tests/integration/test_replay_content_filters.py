"""Re-fan-out from the ledger into content-filtered endpoints (decision 0056): each
endpoint's pattern is evaluated on each replayed event by the fan-out's own rule, so a
matching filtered endpoint gets the replayed delivery and a non-matching one does not; into a
queue destination, with the webhook-id the original delivery had. Real Postgres, moto SQS
and STS, the real fan-out, deliver and replay handlers."""

from __future__ import annotations

import json
from typing import Any

import pytest
from standardwebhooks.webhooks import Webhook

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.support import customer_aws, operator
from tests.support.customer_aws import ROLE, attributes

pytestmark = pytest.mark.integration

OPERATOR = {"requested_by": "ana@example.com", "reason": "the deliveries were lost"}
BIG = {"payload": {"amount": [{"numeric": [">", 100]}]}}
EU = {"payload": {"customer": {"region": [{"prefix": "eu-"}]}}}


def replay(**doc: Any) -> dict[str, Any]:
    from functions.replay.handler import lambda_handler

    return lambda_handler(doc, LocalContext(function_name="replay"))


def db_now(db: Database) -> str:
    with db.connection() as conn:
        return conn.execute("SELECT now() AS t").fetchone()["t"].isoformat()


def sqs_endpoint(db: Database, tenant_id: str, arn: str, **options: Any) -> dict[str, Any]:
    return operator.add_endpoint(
        db, get_settings(), tenant_id=tenant_id, url=None, kind="sqs", target=arn,
        role_arn=ROLE, **options,
    )  # fmt: skip


def pairs(db: Database) -> dict[tuple[str, str], str]:
    with db.connection() as conn:
        rows = conn.execute("SELECT id, event_id, endpoint_id FROM deliveries").fetchall()
    return {(r["event_id"], r["endpoint_id"]): r["id"] for r in rows}


def lose_every_delivery(db: Database) -> None:
    with db.connection() as conn, conn.transaction():
        conn.execute("DELETE FROM attempts")
        conn.execute("DELETE FROM deliveries")


def drain(sqs: Any, url: str) -> list[dict[str, Any]]:
    messages = customer_aws.received(sqs, url)
    for m in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return messages


@pytest.fixture
def customer_sqs(moto_endpoint: str) -> Any:
    return customer_aws.client(moto_endpoint, "sqs")


def test_a_window_refanout_reaches_filtered_queues_only_with_the_events_they_match(
    pipeline, db, customer_sqs
):
    # Given a queue for big amounts, one for EU customers and one without a content filter
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    queues = {name: customer_aws.queue(customer_sqs, name) for name in ("big", "eu", "all")}
    big = sqs_endpoint(db, t, queues["big"][1], content_filter=BIG)
    eu = sqs_endpoint(db, t, queues["eu"][1], content_filter=EU)
    everything = sqs_endpoint(db, t, queues["all"][1])
    since = db_now(db)
    payloads = {
        "small-eu": {"amount": 5, "customer": {"region": "eu-west-1"}},
        "big-us": {"amount": 500, "customer": {"region": "us-east-1"}},
        "as-string": {"amount": "500"},
    }
    with db.connection() as conn, conn.transaction():
        ids = {
            name: hookline.publish(conn, tenant_id=t, type="order.paid", payload=p).id
            for name, p in payloads.items()
        }
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 5})
    original = pairs(db)
    for url, _ in queues.values():
        drain(customer_sqs, url)
    # And every delivery of the window is lost
    lose_every_delivery(db)
    # When the window is re-fanned out from the ledger (a dry run first)
    dry = replay(since=since, refanout=True, dry_run=True, **OPERATOR)
    result = replay(since=since, refanout=True, **OPERATOR)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 5})
    # Then each filtered queue got exactly the events its pattern matches, the other all three
    assert dry["would_enqueue"] == 5
    assert (result["events"], result["created"], result["enqueued"]) == (3, 5, 5)
    expected = {
        (ids["big-us"], big["id"]), (ids["small-eu"], eu["id"]),
        *((ids[n], everything["id"]) for n in payloads),
    }  # fmt: skip
    assert set(pairs(db)) == expected
    for name, ep in (("big", big), ("eu", eu), ("all", everything)):
        messages = drain(customer_sqs, queues[name][0])
        got = sorted(json.dumps(json.loads(m["Body"]), sort_keys=True) for m in messages)
        want = sorted(
            json.dumps(payloads[n], sort_keys=True) for n in payloads
            if (ids[n], ep["id"]) in expected
        )  # fmt: skip
        assert got == want, name
        # And each replayed message is signed, with the webhook-id of the lost delivery
        for m in messages:
            headers = attributes(m)
            Webhook(ep["secret"]).verify(m["Body"].encode(), headers)
            assert headers["webhook-id"] in original.values()
    assert pairs(db) == original
    # And running it again creates nothing more
    again = replay(since=since, refanout=True, **OPERATOR)
    assert (again["created"], again["enqueued"]) == (0, 0)


def test_an_endpoint_refanout_sends_a_new_filtered_queue_only_matching_history(
    pipeline, db, customer_sqs
):
    # Given three events delivered to an unfiltered endpoint
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    _, old_arn = customer_aws.queue(customer_sqs, "old")
    sqs_endpoint(db, t, old_arn)
    amounts = (50, 150, 250)
    with db.connection() as conn, conn.transaction():
        for amount in amounts:
            hookline.publish(conn, tenant_id=t, type="order.paid", payload={"amount": amount})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    # When a filtered queue added later is sent its history
    url, arn = customer_aws.queue(customer_sqs, "new-big")
    new = sqs_endpoint(db, t, arn, content_filter=BIG)
    result = replay(endpoint_id=new["id"], since="1h", refanout=True, **OPERATOR)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 5})
    # Then it receives the two big ones, signed
    assert (result["events"], result["created"], result["enqueued"]) == (3, 2, 2)
    messages = drain(customer_sqs, url)
    assert sorted(json.loads(m["Body"])["amount"] for m in messages) == [150, 250]
    for m in messages:
        Webhook(new["secret"]).verify(m["Body"].encode(), attributes(m))
