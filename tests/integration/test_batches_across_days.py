"""A deliver batch whose deliveries lie in two to four days (retries of earlier days'
deliveries among today's) is claimed and recorded per day, each part through its day's copies
of the two functions; one spanning more days goes through the functions over the parent in
one statement (decision 0103). A part that fails is its own messages' failure only. The real
deliver handler, a loopback sink, every statement read from the server's log."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest

from hookline_dev.local.apigw import LocalContext
from tests.integration.test_delivery_batch import queued_messages, sqs_event
from tests.integration.test_proxy_pinning import statement_log  # noqa: F401 - a fixture

pytestmark = pytest.mark.integration

CLAIM, RECORD = "hookline_claim_batch", "hookline_record_batch_delivered"


def day(days_ago: int) -> str:
    return f"{datetime.now(UTC) - timedelta(days=days_ago):%Y%m%d}"


def functions_called(statements: list[str], function: str) -> list[str]:
    """The copies of `function` the statements called, in order: a day (YYYYMMDD), or
    "parent" for the function over the parent."""
    found = re.findall(rf"\b{function}(_d\d{{8}})?\(", " ".join(statements))
    return [suffix.removeprefix("_d") or "parent" for suffix in found]


def test_a_batch_spanning_two_days_goes_through_each_days_copies(
    pipeline,
    db,
    sink,
    statement_log,  # noqa: F811
):
    # Given a delivery of yesterday's event (a retry) and three of today's, in one SQS batch
    bodies = queued_messages(pipeline, db, sink, 3, days_ago=[1])
    from functions.deliver.handler import lambda_handler

    before = len(statement_log())
    # When the deliver function handles the batch
    answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
    statements = [text for _, text in statement_log()[before:]]
    # Then all four are delivered, each once
    assert answer == {"batchItemFailures": []}
    assert pipeline.states() == {"delivered": 4}
    sent = [r.body for r in sink.requests("/batch")]
    assert len(sent) == len(set(sent)) == 4
    # And each day's deliveries were claimed and recorded through that day's copies, the
    # functions over the parent (which open every day's partition) never called
    assert sorted(functions_called(statements, CLAIM)) == sorted([day(1), day(0)])
    assert sorted(functions_called(statements, RECORD)) == sorted([day(1), day(0)])


def test_a_batch_spanning_five_days_goes_through_the_parents_functions_once(
    pipeline,
    db,
    sink,
    statement_log,  # noqa: F811
):
    # Given deliveries of four earlier days' events and two of today's, in one SQS batch
    bodies = queued_messages(pipeline, db, sink, 2, days_ago=[4, 3, 2, 1])
    from functions.deliver.handler import lambda_handler

    before = len(statement_log())
    # When the deliver function handles the batch
    answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
    statements = [text for _, text in statement_log()[before:]]
    # Then all six are delivered, claimed and recorded in one statement each, through the
    # functions over the parent (five days' statements would cost more)
    assert answer == {"batchItemFailures": []}
    assert pipeline.states() == {"delivered": 6}
    assert functions_called(statements, CLAIM) == ["parent"]
    assert functions_called(statements, RECORD) == ["parent"]


def test_a_days_claim_that_fails_fails_only_that_days_messages(pipeline, db, sink):
    # Given a delivery of yesterday's event and two of today's in one SQS batch, and
    # yesterday's claim failing (its copy made to raise, as a timed-out statement would)
    bodies = queued_messages(pipeline, db, sink, 2, days_ago=[1])
    with db.connection() as conn:
        function = conn.execute(
            "SELECT pg_get_function_identity_arguments(p.oid) AS args,"
            " pg_get_function_result(p.oid) AS result FROM pg_proc p WHERE proname = %s",
            (f"{CLAIM}_d{day(1)}",),
        ).fetchone()
        conn.execute(
            f"CREATE OR REPLACE FUNCTION {CLAIM}_d{day(1)}({function['args']})"
            f" RETURNS {function['result']} LANGUAGE plpgsql AS"
            " $$ BEGIN RAISE EXCEPTION 'this claim fails'; END $$"
        )
    from functions.deliver.handler import lambda_handler

    # When the deliver function handles the batch
    answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
    # Then today's two are delivered, and only yesterday's message is reported failed, for
    # SQS to hand out again: nothing is lost, and one day's failure is not the batch's
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m0"}]}
    assert pipeline.states() == {"delivered": 2, "queued": 1}
    assert len(sink.requests("/batch")) == 2
