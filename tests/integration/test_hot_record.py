"""The delivery's record is a HOT update (decision 0097): no index names a column the hot
path's record changes, the slow states are found through marker columns, and queued
deliveries through their lease above the floor reconcile moves. Real Postgres, moto SQS, the
real receiver, fan-out, deliver and reconcile handlers."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from hookline.db import Database
from hookline.repositories.deliveries import AttemptRecord, claim_to_send, record_delivered
from tests.integration.test_reconcile import (
    drain_queue,
    endpoint,
    publish,
    reconcile,
    sql,
    tenant,
)
from tests.support.pipeline import Pipeline

pytestmark = pytest.mark.integration


@pytest.fixture
def pipeline(make_pipeline) -> Pipeline:
    # A failed attempt waits an hour for its retry: a due row in Postgres.
    return make_pipeline(retry_schedule_seconds=[0, 3600])


# The columns a delivered attempt's record writes (hookline_make_hot_function's `record`), and
# what its WAL record holds besides them: the record's header and block reference (~44 bytes),
# the update's own fields (~14), the tuple's header and null bitmap (~14) and alignment.
RECORDED = (
    "state", "attempt_count", "last_status", "first_duration_ms", "first_status", "updated_at",
    "finished_at", "first_attempt_id", "first_attempted_at", "last_error", "first_excerpt",
    "first_headers",
)  # fmt: skip
RECORD_OVERHEAD = 88


def markers(db: Database, delivery_id: str) -> dict:
    [row] = sql(
        db,
        "SELECT state, due_at, next_attempt_at, failed_at, updated_at, ordering_open"
        " FROM deliveries WHERE id = %s",
        (delivery_id,),
    )
    return row


def test_recording_a_first_try_writes_no_index_entry_and_no_row_lock(pipeline, db, sink):
    # Given a queued delivery, claimed as the deliverer claims it
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/hot"))
    publish(db, t)
    pipeline.fanout()
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    with db.connection() as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        claim = claim_to_send(
            conn, delivery["id"], delivery["enqueue_seq"], timedelta(minutes=1), datetime.now(UTC)
        )
        assert claim is not None
        [before] = conn.execute("SELECT pg_current_wal_insert_lsn() AS lsn").fetchall()
        # When its successful attempt is recorded (a durable commit)
        with conn.transaction():
            attempt = AttemptRecord(datetime.now(UTC), 12, 200, "ok", None)
            assert record_delivered(conn, claim.job, attempt) == claim.job.seq
            [counts] = conn.execute(
                "SELECT pg_stat_get_xact_tuples_updated(d.tableoid) AS updated,"
                " pg_stat_get_xact_tuples_hot_updated(d.tableoid) AS hot,"
                " pg_relation_filenode(d.tableoid) AS filenode"
                " FROM deliveries d WHERE d.id = %s",
                (delivery["id"],),
            ).fetchall()
        [after] = conn.execute("SELECT pg_current_wal_insert_lsn() AS lsn").fetchall()
        # (the suite's server may commit without waiting for the disk: read once flushed)
        for _ in range(100):
            flushed = "SELECT pg_current_wal_flush_lsn() >= %s AS done"
            if conn.execute(flushed, (after["lsn"],)).fetchone()["done"]:
                break
            time.sleep(0.05)
        # Then the delivery's new version went on its page without entering any index
        assert (counts["updated"], counts["hot"]) == (1, 1)
        # And the WAL has one record for the delivery's table, that update: no row lock
        # (a BEFORE UPDATE trigger would take and log one before its WHEN is looked at)
        records = conn.execute(
            "SELECT record_type, record_length FROM pg_get_wal_records_info(%s, %s)"
            " WHERE block_ref LIKE '%%/' || %s || ' %%'",
            (before["lsn"], after["lsn"], counts["filenode"]),
        ).fetchall()
        [recorded] = conn.execute(
            f"SELECT {' + '.join(f'coalesce(pg_column_size({c}), 0)' for c in RECORDED)} AS n"
            " FROM deliveries WHERE id = %s",
            (delivery["id"],),
        ).fetchall()
    assert [r["record_type"] for r in records] == ["HOT_UPDATE"]
    # And that record carries what the record wrote, not the columns it left as they were
    # (the partition keeps them first, decision 0110): beyond the recorded columns' bytes,
    # only the record's headers and the columns' alignment
    assert records[0]["record_length"] - recorded["n"] <= RECORD_OVERHEAD
    # And it shows as delivered, its one attempt listed
    assert pipeline.delivery(endpoint_id=ep["id"])["state"] == "delivered"
    attempts = sql(
        db, "SELECT status_code FROM attempt_log WHERE delivery_id = %s", (delivery["id"],)
    )
    assert attempts == [{"status_code": 200}]


def test_a_retry_and_a_failure_carry_their_markers(pipeline, db, sink):
    # Given an endpoint that answers 500
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/down"))
    sink.behave("/down", statuses=[500])
    publish(db, t)
    # When its delivery fails a first time: pending for its retry in an hour
    pipeline.run_until(lambda: pipeline.states() == {"pending": 1})
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    pending = markers(db, delivery["id"])
    # Then the due index knows it by its retry time, and nothing else marks it
    assert pending["due_at"] == pending["next_attempt_at"] > datetime.now(UTC)
    assert pending["failed_at"] is None and pending["ordering_open"] is None
    # And once its deadline passes, reconcile finds it through that index and it is dead,
    # found again through the failed index by when it died
    sql(
        db,
        "UPDATE deliveries SET deadline_at = now() - interval '1 second' WHERE id = %s",
        (delivery["id"],),
    )
    assert reconcile()["repairs"]["deadline_dead"] == 1
    dead = markers(db, delivery["id"])
    assert dead["state"] == "dead" and dead["due_at"] is None
    assert dead["failed_at"] == dead["updated_at"]


def test_the_lease_floor_passes_delivered_leases_and_waits_for_a_claimed_delivery(
    pipeline, db, sink
):
    # Given a delivery delivered long ago (its lease, kept by the record, ran out 20 minutes
    # ago), and one whose message was lost and whose lease ran out 10 minutes ago while a
    # claim (a deferral's, without a slot) still holds it
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/floor"))
    publish(db, t, n=1)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    sql(db, "UPDATE deliveries SET lease_expires_at = now() - interval '20 minutes'")
    publish(db, t, n=2)
    pipeline.fanout()
    assert drain_queue(pipeline) == 1
    [held] = sql(db, "SELECT id, enqueue_seq FROM deliveries WHERE state = 'queued'")
    sql(
        db,
        "UPDATE deliveries SET lease_expires_at = now() - interval '10 minutes' WHERE id = %(id)s",
        {"id": held["id"]},
    )
    sql(
        db,
        "INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)"
        " VALUES (%(id)s, %(ep)s, %(seq)s, now() + interval '1 hour', false)",
        {"id": held["id"], "ep": ep["id"], "seq": held["enqueue_seq"]},
    )
    # When reconcile runs, it leaves the claimed one queued, and the floor moves past the
    # delivered lease to the claimed one's, no further
    report = reconcile()
    assert report["repairs"]["lost_messages_requeued"] == 0
    [lease] = sql(db, "SELECT lease_expires_at AS at FROM deliveries WHERE id = %s", (held["id"],))
    assert datetime.fromisoformat(report["findings"]["lease_floor"]) == lease["at"]
    # And once the claim's lease has run out too, the next run requeues it and it arrives
    sql(db, "UPDATE deliveries_in_flight SET lease_expires_at = now() - interval '1 second'")
    report = reconcile()
    assert report["repairs"]["lost_messages_requeued"] == 1
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    assert len(sink.requests("/floor")) == 2
    # Then the floor is a minute behind: no lease that ran out is read again
    floor = datetime.fromisoformat(reconcile()["findings"]["lease_floor"])
    assert floor > lease["at"] + timedelta(minutes=8)


def test_a_delivery_is_refused_a_state_outside_the_set_and_takes_every_one_in_it(
    pipeline, db, sink
):
    # Given a delivery, queued by fan-out
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/states"))
    publish(db, t)
    pipeline.fanout()
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    # When a statement moves it to a state no delivery has, Then it is refused by name
    with db.connection() as conn, pytest.raises(psycopg.errors.CheckViolation) as refused:
        conn.execute("UPDATE deliveries SET state = 'Delivered' WHERE id = %s", (delivery["id"],))
    assert refused.value.diag.constraint_name == "deliveries_state_check"
    assert markers(db, delivery["id"])["state"] == "queued"
    # And a new row in such a state is refused too, whatever else it carries
    for state, ordering_key in (("sent", None), ("", "k")):
        with db.connection() as conn, pytest.raises(psycopg.errors.CheckViolation):
            conn.execute(
                "INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group,"
                " deadline_at, state, ordering_key)"
                " SELECT hookline_delivery_id(event_id, 'end_other'), event_id, endpoint_id,"
                " tenant_id, tenant_group, deadline_at, %s, %s FROM deliveries WHERE id = %s",
                (state, ordering_key, delivery["id"]),
            )
    assert len(sql(db, "SELECT id FROM deliveries")) == 1
    # And a new row in any state of the set is taken, with its markers
    insert = (
        "INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group,"
        " deadline_at, state, ordering_key)"
        " SELECT hookline_delivery_id(event_id, %s), event_id, endpoint_id, tenant_id,"
        " tenant_group, deadline_at, %s, %s FROM deliveries WHERE id = %s RETURNING id"
    )
    states = ("pending", "held", "queued", "delivering", "delivered", "failed", "dead")
    for n, (state, key) in enumerate([(s, None) for s in states] + [("queued", "k")]):
        [made] = sql(db, insert, (f"end_{n}", state, key, delivery["id"]))
        row = markers(db, made["id"])
        assert row["state"] == state
        assert (row["due_at"] is not None) == (state == "pending"), state
        assert (row["failed_at"] is not None) == (state in ("failed", "dead")), state
        assert row["ordering_open"] == (True if key and state == "queued" else None), state
    # And every state of the set is taken by an update, with its markers
    for state in ("pending", "held", "delivering", "delivered", "failed", "dead", "queued"):
        sql(db, "UPDATE deliveries SET state = %s WHERE id = %s", (state, delivery["id"]))
        row = markers(db, delivery["id"])
        assert row["state"] == state
        assert (row["due_at"] is not None) == (state == "pending"), state
        assert (row["failed_at"] is not None) == (state in ("failed", "dead")), state


def test_a_deliverys_write_compiles_one_trigger_condition_and_no_check(db):
    # Postgres reads a CHECK constraint and a trigger's WHEN back from their stored text and
    # compiles them in every statement writing the table (decision 0114): the receipt's
    # insert and deliver's record each pay for one condition, and for no CHECK.
    tables = (
        "SELECT 'deliveries'::regclass UNION ALL SELECT inhrelid FROM pg_inherits"
        " WHERE inhparent = 'deliveries'::regclass"
    )
    assert sql(db, f"SELECT conname FROM pg_constraint WHERE contype = 'c'"
                   f" AND conrelid IN ({tables})") == []  # fmt: skip
    # tgtype: 4 is INSERT, 16 UPDATE
    [conditions] = sql(
        db,
        "SELECT count(*) FILTER (WHERE tgtype & 4 <> 0) AS on_insert,"
        " count(*) FILTER (WHERE tgtype & 16 <> 0) AS on_update"
        " FROM pg_trigger WHERE tgrelid = 'deliveries'::regclass AND tgqual IS NOT NULL",
    )
    assert conditions == {"on_insert": 1, "on_update": 1}
