"""Failed attempts are recorded in one statement per batch (decision 0105): each attempt, each
delivery's next state while its claim stands, and its endpoint's failure streak, which only the
first failure writes (decision 0104), so a failing endpoint's failures never wait for one
another's row lock. Then what follows: retries sent on their delay, an endpoint that answered
410 disabled and its tenant told once. The real deliver handler on a loopback sink, moto's
queues, every statement read from the server's log."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories.deliveries import AttemptRecord, Finish, Job
from hookline.repositories.delivery_batches import (
    FailedRecord,
    FailuresRecorded,
    claim_batch_to_send,
    record_batch_failed,
)
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.integration.test_claims_in_flight import LEASE, queued_batch
from tests.integration.test_delivery_batch import queued_messages, sqs_event
from tests.integration.test_proxy_pinning import statement_log  # noqa: F401 - a fixture
from tests.support import operator

pytestmark = pytest.mark.integration

# The failure statement's mark in the server's log (the function it calls, or its day's copy)
FAILURE_STATEMENT = "hookline_record_batch_failed"


def claimed_jobs(db: Database, deliveries: int) -> list[Job]:
    """`deliveries` queued deliveries of one endpoint, claimed as deliver claims them."""
    batch = queued_batch(db, endpoints=1, events=deliveries)
    with db.connection() as conn:
        claims = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    return [claims[m].job for m in batch]


def a_503(job: Job) -> FailedRecord:
    """`job`'s attempt answered 503, and its delivery queued again for a retry in a second."""
    retry_at = datetime.now(UTC) + timedelta(seconds=1)
    finish = Finish("queued", True, 503, "HTTP 503", retry_at, retry_at + LEASE, True)
    return FailedRecord(job, AttemptRecord(datetime.now(UTC), 7, 503, "busy", None), finish)


def record(conn: Any, *failed: FailedRecord) -> FailuresRecorded:
    return record_batch_failed(conn, list(failed))


def test_the_first_failure_starts_the_streak_and_later_ones_keep_its_start(
    pipeline, db: Database
) -> None:
    # Given two claimed deliveries of an endpoint that has not failed
    first_job, second_job = claimed_jobs(db, 2)
    endpoint_id = first_job.endpoint_id
    # When one's attempt fails, and later the other's
    with db.connection() as conn:
        first = record(conn, a_503(first_job))
    with db.connection() as conn:
        second = record(conn, a_503(second_job))
        stored = conn.execute(
            "SELECT failing_since FROM endpoints WHERE id = %s", (endpoint_id,)
        ).fetchone()
    # Then the streak started at the first failure and still dates from it
    assert first.failing_since[endpoint_id] is not None
    assert second.failing_since == first.failing_since == {endpoint_id: stored["failing_since"]}


def test_a_failing_endpoints_failures_do_not_wait_for_one_another(
    pipeline, db: Database, database_url: str
) -> None:
    # Given an endpoint already failing, and one deliver worker recording a failure of it in
    # a transaction that has not committed yet (its commit waits for the disk)
    started_job, first_job, second_job = claimed_jobs(db, 3)
    with db.connection() as conn:
        started = record(conn, a_503(started_job)).failing_since
    with (
        psycopg.connect(database_url, row_factory=dict_row) as first,
        psycopg.connect(database_url, row_factory=dict_row, autocommit=True) as second,
    ):
        assert record(first, a_503(first_job)).failing_since == started
        # When another worker records a failure of the same endpoint meanwhile
        second.execute("SET lock_timeout = '2s'")
        streak = record(second, a_503(second_job)).failing_since
        first.rollback()
    # Then it reads the same streak at once instead of waiting for the first's row lock (a
    # wait would end in lock_timeout's error)
    assert streak == started


def test_a_failure_whose_claim_was_taken_over_keeps_its_attempt_and_changes_nothing_else(
    pipeline, db: Database
) -> None:
    # Given a delivery claimed under a lease that ran out and claimed again by another worker,
    # and a second delivery whose claim stands
    batch = queued_batch(db, endpoints=1, events=2)
    with db.connection() as conn:
        late = claim_batch_to_send(conn, batch[:1], timedelta(milliseconds=1), datetime.now(UTC))
    time.sleep(0.01)
    with db.connection() as conn:
        again = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    # When the first worker records its failure late, with the second delivery's
    with db.connection() as conn:
        recorded = record(conn, a_503(late[batch[0]].job), a_503(again[batch[1]].job))
    # Then only the claim that stood moved its delivery on (a new generation for its retry);
    # the taken-over one is still the other worker's, though both attempts are on record
    assert recorded.stood == {batch[1][0]: batch[1][1] + 1}
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT d.id, d.state, d.attempt_count, d.enqueue_seq, count(a.*) AS attempts"
            " FROM deliveries d LEFT JOIN attempt_log a ON a.delivery_id = d.id"
            " GROUP BY d.id ORDER BY d.id"
        ).fetchall()
    assert [(r["state"], r["attempt_count"], r["enqueue_seq"], r["attempts"]) for r in rows] == [
        ("queued", 0, batch[0][1], 1),
        ("queued", 1, batch[1][1] + 1, 1),
    ]
    assert hookline_in_flight(db, batch[0][0]) and not hookline_in_flight(db, batch[1][0])


def hookline_in_flight(db: Database, delivery_id: str) -> bool:
    with db.connection() as conn:
        row = conn.execute("SELECT hookline_in_flight(%s) AS live", (delivery_id,)).fetchone()
    return bool(row["live"])


def test_a_batch_of_failures_is_one_statement_and_each_retry_comes_back_on_its_delay(
    pipeline,
    db,
    sink,
    statement_log,  # noqa: F811
):
    # Given ten queued deliveries to an endpoint that answers 503 ten times, then 200
    sink.behave("/batch", statuses=[503] * 10 + [200])
    bodies = queued_messages(pipeline, db, sink, 10)
    from functions.deliver.handler import lambda_handler

    pipeline.sqs.purge_queue(QueueUrl=pipeline.queues["standard"].url)  # fan-out's copies
    before = len(statement_log())
    # When the deliver function handles them in one batch
    answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
    statements = [text for _, text in statement_log()[before:]]
    # Then every failure was recorded by one statement after the batch's claim, and nothing
    # else wrote an attempt or the endpoint's streak
    assert answer == {"batchItemFailures": []}
    assert len([s for s in statements if FAILURE_STATEMENT in s]) == 1, statements
    assert not [
        s for s in statements if any(w in s for w in ("INSERT INTO", "UPDATE ", "BEGIN"))
    ], statements
    # And each delivery waits for its retry under a new generation, its 503 on record, and
    # its endpoint's failure streak has begun
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT d.state, d.attempt_count, d.enqueue_seq, d.last_error, a.status_code,"
            " e.failing_since IS NOT NULL AS failing"
            " FROM deliveries d JOIN attempt_log a ON a.delivery_id = d.id"
            " JOIN endpoints e ON e.id = d.endpoint_id"
        ).fetchall()
    first_seqs = {json.loads(b)["seq"] for b in bodies}
    assert len(rows) == 10 and first_seqs == {1}
    assert {tuple(r.values()) for r in rows} == {("queued", 1, 2, "HTTP 503", 503, True)}
    # And the retries come back from the queue after their one-second delay, not before, each
    # sent with its first attempt's webhook-id
    assert pipeline.deliver_once() == 0
    time.sleep(1.2)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 10}, timeout=30)
    ids = [r.headers["webhook-id"] for r in sink.requests("/batch")]
    assert len(ids) == 20 and all(ids.count(i) == 2 for i in ids)


def test_a_batch_of_delivered_and_failed_attempts_records_each_kind_once(
    pipeline,
    db,
    sink,
    statement_log,  # noqa: F811
):
    # Given an event to an endpoint that answers and one that is down, five times over
    sink.behave("/down", statuses=[500])
    tenant = operator.add_tenant(db, HooklineConfig(), name="mixed", group="standard")["id"]
    for path in ("/up", "/down"):
        operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url(path))
    with db.connection() as conn, conn.transaction():
        for n in range(5):
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})
    pipeline.fanout()
    bodies = [b for b, _ in pipeline_messages(db)]
    from functions.deliver.handler import lambda_handler

    before = len(statement_log())
    # When deliver handles the ten in one batch
    answer = lambda_handler(sqs_event(bodies), LocalContext(function_name="d"))
    statements = [text for _, text in statement_log()[before:]]
    # Then one statement recorded the delivered ones and one the failed ones
    assert answer == {"batchItemFailures": []}
    assert len([s for s in statements if "hookline_record_batch_delivered" in s]) == 1
    assert len([s for s in statements if FAILURE_STATEMENT in s]) == 1
    with db.connection() as conn:
        states = conn.execute(
            "SELECT e.url, d.state, d.last_error FROM deliveries d"
            " JOIN endpoints e ON e.id = d.endpoint_id"
        ).fetchall()
    assert sorted({tuple(r.values()) for r in states}) == [
        (sink.url("/down"), "queued", "HTTP 500"),
        (sink.url("/up"), "delivered", None),
    ]


def pipeline_messages(db: Database) -> list[tuple[str, str]]:
    """Every delivery's queue message and its id, by id."""
    from hookline.queues import DeliveryMessage

    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, enqueue_seq, endpoint_id, tenant_group FROM deliveries ORDER BY id"
        ).fetchall()
    return [
        (DeliveryMessage(r["id"], r["enqueue_seq"], r["endpoint_id"], r["tenant_group"]).body(),
         r["id"])
        for r in rows
    ]  # fmt: skip


def test_when_a_batchs_failure_record_fails_each_failure_is_recorded_alone(pipeline, db, sink):
    # Given three deliveries to an endpoint that answers 503, and a database that refuses to
    # store one of their attempts
    sink.behave("/batch", statuses=[503])
    queued_messages(pipeline, db, sink, 3)
    messages = pipeline_messages(db)
    refused = messages[1][1]
    with db.connection() as conn:
        conn.execute(
            "CREATE FUNCTION refuse_attempt() RETURNS trigger LANGUAGE plpgsql AS $$"
            f" BEGIN IF NEW.delivery_id = '{refused}' THEN RAISE EXCEPTION 'refused'; END IF;"
            " RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse_attempt BEFORE INSERT ON attempts"
            " FOR EACH ROW EXECUTE FUNCTION refuse_attempt()"
        )
    from functions.deliver.handler import lambda_handler

    # When deliver handles the three in one batch
    answer = lambda_handler(sqs_event([b for b, _ in messages]), LocalContext(function_name="d"))
    # Then only that message fails (SQS brings it back); the other two are recorded and wait
    # for their retry
    assert answer == {"batchItemFailures": [{"itemIdentifier": "m1"}]}
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT d.id, d.attempt_count, count(a.*) AS attempts FROM deliveries d"
            " LEFT JOIN attempt_log a ON a.delivery_id = d.id GROUP BY d.id"
        ).fetchall()
    assert {r["id"]: (r["attempt_count"], r["attempts"]) for r in rows} == {
        messages[0][1]: (1, 1),
        refused: (0, 0),
        messages[2][1]: (1, 1),
    }


def test_410s_in_one_batch_disable_the_endpoint_and_tell_the_tenant_once(pipeline, db, sink):
    # Given three deliveries to an endpoint that answers 410 Gone, its tenant subscribed to
    # endpoint.disabled on another endpoint
    sink.behave("/gone", statuses=[410])
    tenant = operator.add_tenant(db, HooklineConfig(), name="gone", group="standard")["id"]
    gone = operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url=sink.url("/gone"), event_types=["order.*"]
    )
    operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url=sink.url("/ops"),
        event_types=["endpoint.disabled"],
    )  # fmt: skip
    with db.connection() as conn, conn.transaction():
        for n in range(3):
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})
    pipeline.fanout()
    from functions.deliver.handler import lambda_handler

    # When deliver handles the three in one batch
    bodies = [b for b, _ in pipeline_messages(db)]
    assert lambda_handler(sqs_event(bodies), LocalContext(function_name="d")) == {
        "batchItemFailures": []
    }
    # Then each delivery failed for the 410, the endpoint is disabled, and the tenant is told
    # once
    assert pipeline.states() == {"failed": 3}
    pipeline.run_until(lambda: len(sink.requests("/ops")) >= 1, timeout=30)
    with db.connection() as conn:
        row = conn.execute(
            "SELECT enabled, disabled_reason FROM endpoints WHERE id = %s", (gone["id"],)
        ).fetchone()
        told = conn.execute(
            "SELECT count(*) AS n FROM events WHERE type = 'endpoint.disabled'"
        ).fetchone()
    assert row == {"enabled": False, "disabled_reason": "the endpoint answered 410 Gone"}
    assert told["n"] == 1 and len(sink.requests("/ops")) == 1
