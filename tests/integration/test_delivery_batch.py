"""A deliver batch is claimed in one statement and its delivered attempts recorded in one
(decision 0066), with each message's outcome still its own: a copy of a message in the same
batch is skipped, an unreadable message fails alone. The real deliver handler, a loopback
sink, every statement read from the server's log."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.queues import DeliveryMessage
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.integration.test_claims_in_flight import old_event
from tests.integration.test_proxy_pinning import statement_log  # noqa: F401 - a fixture
from tests.support import operator

pytestmark = pytest.mark.integration


def sqs_event(bodies: list[str]) -> dict[str, Any]:
    """An SQS batch as Lambda's event source hands it over."""
    return {
        "Records": [
            {"messageId": f"m{n}", "receiptHandle": f"r{n}", "body": body,
             "attributes": {"ApproximateReceiveCount": "1"}, "messageAttributes": {},
             "eventSource": "aws:sqs", "awsRegion": "us-east-1",
             "eventSourceARN": "arn:aws:sqs:us-east-1:000000000000:hookline-deliver-standard"}
            for n, body in enumerate(bodies)
        ]
    }  # fmt: skip


def queued_messages(
    pipeline: Any, db: Any, sink: Any, count: int, days_ago: Sequence[int] = ()
) -> list[str]:
    """`count` events of a new tenant fanned out to one endpoint whose cap is far above
    `count` (this file is about statements and copies, not caps), and one event from each of
    `days_ago` days ago: their queue messages, by id (an earlier day's first, as a retry of
    it comes among today's)."""
    tenant = operator.add_tenant(db, HooklineConfig(), name="batch", group="standard")["id"]
    operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url=sink.url("/batch"), max_concurrency=100
    )
    for ago in days_ago:
        old_event(db, tenant, ago, f"daysago{ago:03d}".ljust(16, "0"))
    with db.connection() as conn, conn.transaction():
        for n in range(count):
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})
    pipeline.fanout()
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, enqueue_seq, endpoint_id, tenant_group FROM deliveries ORDER BY id"
        ).fetchall()
    return [
        DeliveryMessage(r["id"], r["enqueue_seq"], r["endpoint_id"], r["tenant_group"]).body()
        for r in rows
    ]


def test_a_batch_costs_one_claim_and_one_record_statement(
    pipeline,
    db,
    sink,
    statement_log,  # noqa: F811
):
    # Given ten queued deliveries to one endpoint, in one SQS batch with one message twice
    bodies = queued_messages(pipeline, db, sink, 10)
    from functions.deliver.handler import lambda_handler

    before = len(statement_log())
    # When the deliver function handles the batch
    answer = lambda_handler(sqs_event([*bodies, bodies[0]]), LocalContext(function_name="d"))
    statements = [text for _, text in statement_log()[before:]]
    # Then each delivery was sent once, the copy skipped: delivered, or queued for a retry
    # when the sink was too slow for the tests' short timeout on a loaded machine
    sent = [r.body for r in sink.requests("/batch")]
    states = pipeline.states()
    assert answer == {"batchItemFailures": []}
    assert len(sent) == len(set(sent)) and states.get("delivered", 0) <= len(sent) <= 10, states
    assert set(states) <= {"delivered", "queued"} and sum(states.values()) == 10, states
    # And the database saw one claim statement for the whole batch, and one record statement
    # for its delivered attempts
    claims = [s for s in statements if "hookline_claim_batch" in s]
    records = [s for s in statements if "hookline_record_batch_delivered" in s]
    assert (len(claims), len(records)) == (1, 1 if states.get("delivered") else 0), statements
    # And each delivered attempt keeps what the endpoint answered, headers included, as the
    # delivery pages show it
    with db.connection() as conn:
        answered = conn.execute(
            "SELECT count(*) AS n FROM attempt_log"
            " WHERE status_code = 200 AND response_headers ? 'content-type'"
        ).fetchone()
    assert answered["n"] == states.get("delivered", 0)


def test_an_unreadable_message_fails_alone(pipeline, db, sink):
    # Given a batch of two good messages and one that is not a delivery message
    bodies = queued_messages(pipeline, db, sink, 2)
    from functions.deliver.handler import lambda_handler

    # When the deliver function handles it
    answer = lambda_handler(
        sqs_event([bodies[0], "not a message", bodies[1]]), LocalContext(function_name="d")
    )
    # Then only that message is reported failed (SQS retries it), the others are delivered
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    assert pipeline.states() == {"delivered": 2}


def test_the_batch_claim_reads_every_column_the_single_claim_reads(db):
    # Given the per-message claim and the batch claim (migration 0022 and after), claiming
    # nothing
    from datetime import UTC, datetime, timedelta

    from hookline.sqlfiles import query

    now = datetime.now(UTC)
    with db.connection() as conn:
        single = conn.execute(
            query("claim_delivery_to_send"),
            {"id": "dlv_none", "seq": 0, "lease": timedelta(minutes=1), "now": now,
             "lease_seconds": 60.0},
        )  # fmt: skip
        single_columns = {c.name for c in single.description or []}
        batch = conn.execute(
            query("claim_deliveries_to_send"),
            {"ids": ["dlv_none"], "seqs": [0], "lease": timedelta(minutes=1), "now": now,
             "lease_seconds": 60.0},
        )  # fmt: skip
        batch_columns = {c.name for c in batch.description or []}
    # Then a delivery claimed in a batch knows everything one claimed alone does (a column
    # missed there, such as public_only, silently drops that endpoint's rule)
    assert single_columns and single_columns <= batch_columns, single_columns - batch_columns


def test_a_batch_keeps_each_answer_exactly_as_the_endpoint_gave_it(pipeline, db, sink):
    # Given an endpoint answering with the characters an array literal must escape: quotes,
    # backslashes, braces, commas, NULL spelled out, and more than ASCII, in the body and in
    # a header
    bodies = queued_messages(pipeline, db, sink, 3)
    awkward = 'He said "hi", {a,b} \\ NULL \\"x\\" \u00e9t\u00e9 ok \u2713'
    sink.behave("/batch", body=awkward.encode(), headers={"X-Note": '"quoted", {x}'})
    from functions.deliver.handler import lambda_handler

    # When the deliver function handles the three messages as one batch
    answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
    # Then every attempt recorded by the batch's one statement shows that body and header
    # as sent, as the delivery pages show them
    assert answer == {"batchItemFailures": []}
    assert pipeline.states() == {"delivered": 3}
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT response_excerpt, response_headers ->> 'x-note' AS note, status_code"
            " FROM attempt_log"
        ).fetchall()
    assert [(r["response_excerpt"], r["note"], r["status_code"]) for r in rows] == [
        (awkward, '"quoted", {x}', 200)
    ] * 3
