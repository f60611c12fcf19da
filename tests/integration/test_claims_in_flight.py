"""A deliverer's claim is a row of the unlogged `deliveries_in_flight` (decision 0085,
migration 0037): the claim writes nothing to the delivery, an endpoint's slots are its live
rows with a slot, the record ends the claim. The table is emptied by a crash or a fail-over;
then a claim with no row left still records, no slot is granted for one lease (the slots
taken before are unknown: the cap holds), and nothing is lost. Reconcile never requeues a
delivery a live claim holds, and forgets the claims whose lease ran out."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from hookline.config import HooklineConfig
from hookline.db import Connection, Database
from hookline.repositories import deliveries as delivery_repo
from hookline.repositories import reconcile as reconcile_repo
from hookline.repositories import replay as replay_repo
from hookline.repositories.deliveries import AttemptRecord, Finish
from hookline.repositories.delivery_batches import claim_batch_to_send, record_batch_delivered
from hookline.settings import get_settings
from hookline.sqlfiles import query
from tests.integration.test_hot_path_plans import (
    buffers_of,
    fan_out_all,
    publish,
    tenant_with_endpoints,
)
from tests.support import operator

pytestmark = pytest.mark.integration

LEASE = timedelta(minutes=5)


def old_event(db: Database, tenant: str, days_ago: int, key: str) -> str:
    """An event from `days_ago` days ago in its own day's partition (as a restore or a replay
    of an old event leaves its deliveries), not yet fanned out. Its id."""
    then = datetime.now(UTC) - timedelta(days=days_ago)
    with db.connection() as conn, conn.transaction():
        conn.execute("SELECT hookline_create_day_partitions(%s::date)", (then.date(),))
        event_id = conn.execute(
            "SELECT 'evt_' || hookline_ulid_time(%s) || upper(%s) AS id", (then, key)
        ).fetchone()["id"]
        conn.execute(query("insert_event"), {
            "id": event_id, "tenant_id": tenant, "source_id": None, "origin": "publish",
            "type": "order.paid", "dedupe_key": key, "payload": b"{}",
            "content_type": "application/json", "headers": Jsonb({}), "traceparent": None,
        })  # fmt: skip
    return event_id


def queued(db: Database, event_id: str) -> list[tuple[str, int]]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, enqueue_seq FROM deliveries WHERE event_id = %s ORDER BY endpoint_id",
            (event_id,),
        ).fetchall()
    return [(r["id"], r["enqueue_seq"]) for r in rows]


def old_and_todays(
    db: Database, name: str, *, cap: int, days_ago: int, today: int
) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """A tenant's endpoint with `cap` slots, the queued delivery of an event from `days_ago`
    days ago and those of `today` of today's events, by id."""
    tenant = operator.add_tenant(db, HooklineConfig(), name=name, group="standard")["id"]
    operator.add_endpoint(
        db, get_settings(), tenant_id=tenant, url="http://127.0.0.1:9/", max_concurrency=cap
    )
    old_id = old_event(db, tenant, days_ago, f"{name}{days_ago:03d}".ljust(16, "0"))
    publish(db, tenant, today)
    fan_out_all(db)
    with db.connection() as conn:
        todays = [
            (r["id"], r["enqueue_seq"])
            for r in conn.execute(
                "SELECT id, enqueue_seq FROM deliveries WHERE event_id <> %s ORDER BY id", (old_id,)
            )
        ]
    return queued(db, old_id), todays


def queued_batch(db: Database, *, endpoints: int, events: int) -> list[tuple[str, int]]:
    """A tenant's `events` fanned out to its `endpoints`: the queued deliveries (id,
    generation), by id."""
    publish(db, tenant_with_endpoints(db, endpoints=endpoints), events)
    fan_out_all(db)
    with db.connection() as conn:
        rows = conn.execute("SELECT id, enqueue_seq FROM deliveries ORDER BY id").fetchall()
    return [(r["id"], r["enqueue_seq"]) for r in rows]


def in_flight(db: Database) -> list[tuple[str, bool]]:
    """The claims on record: (delivery id, holds a slot), live or not."""
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, slot FROM deliveries_in_flight WHERE id <> '~reset' ORDER BY id"
        ).fetchall()
    return [(r["id"], r["slot"]) for r in rows]


def crash(db: Database) -> None:
    """What a crash or a fail-over does to the unlogged table: empties it."""
    with db.connection() as conn:
        conn.execute("TRUNCATE deliveries_in_flight")


def while_a_claim_is_made(
    db: Database, claimed: list[tuple[str, int]], *steps: Callable[[Connection], Any]
) -> list[Any]:
    """Run each step on its own connection while a deliverer's claim of `claimed` is being
    made (its transaction open for a while, then committed); their results. A step that
    waits for the claim finishes after the commit."""
    with ThreadPoolExecutor(len(steps)) as pool:
        with db.connection() as claimer, claimer.transaction():
            claimer.execute(
                "SELECT * FROM hookline_claim_batch(%s, %s, %s, now(), 300, true)",
                ([i for i, _ in claimed], [seq for _, seq in claimed], LEASE),
            )

            def run(step: Callable[[Connection], Any]) -> Any:
                with db.connection() as conn:
                    return step(conn)

            running = [pool.submit(run, step) for step in steps]
            time.sleep(0.3)  # (a step that did not wait for the claim has run by now)
        return [r.result(timeout=30) for r in running]


def test_a_claim_leaves_the_delivery_row_as_it_was_and_shows_it_delivering(
    pipeline, db: Database
) -> None:
    # Given a tenant's queued delivery
    queued_batch(db, endpoints=1, events=1)
    row = "SELECT *, xmin::text AS version, xmax::text AS locker FROM deliveries"
    with db.connection() as conn:
        before = conn.execute(row).fetchone()

    # When a deliverer claims it
    with db.connection() as conn:
        claims = claim_batch_to_send(
            conn, [(before["id"], before["enqueue_seq"])], LEASE, datetime.now(UTC)
        )
    assert [c.wait_seconds for c in claims.values()] == [0]

    # Then the delivery row is the version fan-out wrote, not even locked (no new row version,
    # no lock in its header, no WAL for it: decision 0092), the claim is an in-flight row
    # holding a slot, and the API shows it being delivered
    with db.connection() as conn:
        after = conn.execute(row).fetchone()
    assert after == before and after["locker"] == "0"
    assert in_flight(db) == [(before["id"], True)]
    assert pipeline.delivery()["state"] == "delivering"

    # And once recorded, the claim is gone and the delivery delivered
    with db.connection() as conn:
        attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
        done = record_batch_delivered(conn, [(c.job, attempt) for c in claims.values()])
    assert list(done) == [before["id"]]
    assert in_flight(db) == []
    assert pipeline.delivery()["state"] == "delivered"


def test_claims_emptied_by_a_crash_still_record_their_attempts(pipeline, db: Database) -> None:
    # Given two claimed deliveries of one event (two endpoints)
    batch = queued_batch(db, endpoints=2, events=1)
    with db.connection() as conn:
        claims = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    delivered_job, failed_job = (c.job for c in claims.values())

    # When the database crashes while both are being sent, emptying the in-flight table
    crash(db)

    # Then the success is still recorded as delivered, and the failure is scheduled for its
    # retry: neither worker's outcome is lost
    attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
    with db.connection() as conn:
        assert list(record_batch_delivered(conn, [(delivered_job, attempt)])) == [delivered_job.id]
        retry_at = datetime.now(UTC) + timedelta(minutes=1)
        seq = delivery_repo.finish(
            conn, failed_job, Finish("pending", True, 503, "HTTP 503", next_attempt_at=retry_at)
        )
    assert seq == failed_job.seq
    assert pipeline.delivery(id=delivered_job.id)["state"] == "delivered"
    failed = pipeline.delivery(id=failed_job.id)
    assert (failed["state"], failed["attempt_count"], failed["last_status"]) == (
        "pending", 1, 503)  # fmt: skip


def test_a_claim_taken_over_after_its_lease_cannot_record(pipeline, db: Database) -> None:
    # Given a delivery claimed under a lease that ran out, and claimed again by a second worker
    batch = queued_batch(db, endpoints=1, events=1)
    with db.connection() as conn:
        first = claim_batch_to_send(conn, batch, timedelta(milliseconds=1), datetime.now(UTC))
    time.sleep(0.01)
    with db.connection() as conn:
        second = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    assert len(first) == len(second) == 1

    # When the first worker records its success late
    attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
    with db.connection() as conn:
        late = record_batch_delivered(conn, [(c.job, attempt) for c in first.values()])

    # Then its attempt is kept but the second worker's claim stands, slot and all
    assert list(late) == []
    assert pipeline.delivery()["state"] == "delivering"
    assert in_flight(db) == [(batch[0][0], True)]
    with db.connection() as conn:
        assert list(record_batch_delivered(conn, [(c.job, attempt) for c in second.values()]))
    assert pipeline.delivery()["state"] == "delivered"


def test_reconcile_never_requeues_a_delivery_a_live_claim_holds(pipeline, db: Database) -> None:
    # Given a queued delivery whose own lease ran out (its message sat in the queue)
    queued_batch(db, endpoints=1, events=1)
    with db.connection() as conn:
        row = conn.execute(
            "UPDATE deliveries SET lease_expires_at = now() - interval '1 minute'"
            " RETURNING id, enqueue_seq"
        ).fetchone()

    # When reconcile sweeps while a deliverer's claim is being made, and after it committed
    [during] = while_a_claim_is_made(
        db,
        [(row["id"], row["enqueue_seq"])],
        lambda conn: reconcile_repo.requeue_expired_leases(conn, limit=10),
    )
    with db.connection() as conn:
        after = reconcile_repo.requeue_expired_leases(conn, limit=10)
        counted = reconcile_repo.count_expired_leases(conn)

    # Then neither sweep requeued it, nor counts it as expired: the claim stands
    assert (during, after, counted) == ([], [], 0)
    assert pipeline.delivery()["state"] == "delivering"

    # And once the claim's lease runs out too (the worker died), reconcile requeues it as a
    # crashed delivery and forgets the claim
    with db.connection() as conn:
        conn.execute("UPDATE deliveries_in_flight SET lease_expires_at = now() - interval '1s'")
        requeued = reconcile_repo.requeue_expired_leases(conn, limit=10)
    assert [(r.id, r.was) for r in requeued] == [(row["id"], "delivering")]
    assert in_flight(db) == []
    assert pipeline.delivery()["state"] == "pending"


def test_a_claim_being_made_keeps_the_deadline_sweep_and_a_replay_off_its_delivery(
    pipeline, db: Database
) -> None:
    # Given two queued deliveries whose own leases ran out, one of them past its deadline too
    batch = queued_batch(db, endpoints=2, events=1)
    late, stale = batch
    with db.connection() as conn:
        conn.execute("UPDATE deliveries SET lease_expires_at = now() - interval '1 minute'")
        conn.execute(
            "UPDATE deliveries SET deadline_at = now() - interval '1 second' WHERE id = %s",
            (late[0],),
        )

    # When reconcile's deadline sweep and an operator's replay run while a deliverer's claim
    # of both is being made
    killed, replayed = while_a_claim_is_made(
        db,
        batch,
        lambda conn: reconcile_repo.kill_past_deadline(conn, limit=10),
        lambda conn: replay_repo.reset(conn, [stale[0]], lease=LEASE, deadline=timedelta(hours=1)),
    )

    # Then neither touched them: the sweep killed nothing, the replay skipped the delivery as
    # in flight, and both are still queued in the claim's generation
    assert killed == []
    assert [(r.id, r.skip) for r in replayed] == [(stale[0], "in_flight")]
    with db.connection() as conn:
        rows = conn.execute("SELECT id, state, enqueue_seq FROM deliveries ORDER BY id").fetchall()
    assert [(r["id"], r["state"], r["enqueue_seq"]) for r in rows] == [
        (late[0], "queued", late[1]),
        (stale[0], "queued", stale[1]),
    ]


def test_reconcile_requeues_a_crashed_claim_before_the_delivery_lease_runs_out(
    pipeline, db: Database
) -> None:
    # Given a claimed delivery whose worker died: its claim's lease ran out, the delivery's
    # own (fan-out's, minutes long) has not
    batch = queued_batch(db, endpoints=1, events=1)
    with db.connection() as conn:
        claim_batch_to_send(conn, batch, timedelta(milliseconds=1), datetime.now(UTC))
    time.sleep(0.01)

    # When reconcile sweeps the leases, then prunes the claims
    with db.connection() as conn:
        requeued = reconcile_repo.requeue_expired_leases(conn, limit=10)
        pruned = reconcile_repo.prune_expired_claims(conn)

    # Then the delivery is due again now, as a crashed worker's, and no claim is left
    assert [(r.id, r.was) for r in requeued] == [(batch[0][0], "delivering")]
    assert pruned == 0 and in_flight(db) == []
    assert pipeline.delivery()["state"] == "pending"


def test_an_expired_claim_is_pruned_and_a_live_one_kept(pipeline, db: Database) -> None:
    # Given two endpoints' deliveries: one claimed under a lease that ran out, the other live
    batch = queued_batch(db, endpoints=2, events=1)
    with db.connection() as conn:
        claim_batch_to_send(conn, batch[:1], timedelta(milliseconds=1), datetime.now(UTC))
        claim_batch_to_send(conn, batch[1:], LEASE, datetime.now(UTC))
    time.sleep(0.01)

    # When reconcile prunes the claims
    with db.connection() as conn:
        pruned = reconcile_repo.prune_expired_claims(conn)

    # Then only the expired one is gone
    assert pruned == 1
    assert in_flight(db) == [(batch[1][0], True)]


def test_after_a_crash_no_slot_is_granted_until_one_lease_has_passed(
    pipeline, db: Database
) -> None:
    # Given an endpoint with one slot, taken by a claim whose worker is still sending
    first, second = queued_batch(db, endpoints=1, events=2)
    with db.connection() as conn:
        conn.execute("UPDATE endpoints SET max_concurrency = 1")
        sending = claim_batch_to_send(conn, [first], LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in sending.values()] == [0]

    # When a crash empties the in-flight table, and the next delivery is claimed
    crash(db)
    with db.connection() as conn:
        waiting = claim_batch_to_send(conn, [second], LEASE, datetime.now(UTC))

    # Then it gets no slot (the one taken before the crash is unknown), and waits about a lease
    [wait] = [c.wait_seconds for c in waiting.values()]
    assert wait is not None and LEASE.total_seconds() - 5 < wait <= LEASE.total_seconds()

    # And once a lease has passed since, the endpoint's slot is granted again
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries_in_flight SET lease_expires_at = now() - interval '1 second'"
            " WHERE id = '~reset'"
        )
        granted = claim_batch_to_send(conn, [second], LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in granted.values()] == [0]
    assert in_flight(db) == [(second[0], True)]


def test_a_slot_held_from_a_forty_day_old_partition_counts_until_it_is_freed(
    pipeline, db: Database
) -> None:
    # Given an endpoint with one slot, and deliveries of a 40-day-old event and of today's
    old, today = old_and_todays(db, "old", cap=1, days_ago=40, today=1)
    assert len(old) == 1 and len(today) == 1

    # When the old delivery takes the slot
    with db.connection() as conn:
        taken = claim_batch_to_send(conn, old, LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in taken.values()] == [0]

    # Then today's waits for it, holding its claim without a slot
    with db.connection() as conn:
        waiting = claim_batch_to_send(conn, today, LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in waiting.values()] == [1]
    assert in_flight(db) == sorted([(old[0][0], True), (today[0][0], False)])

    # And once the old one is delivered, today's next claim takes the slot over
    with db.connection() as conn:
        attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
        record_batch_delivered(conn, [(c.job, attempt) for c in taken.values()])
        granted = claim_batch_to_send(conn, today, LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in granted.values()] == [0]
    assert in_flight(db) == [(today[0][0], True)]


def test_a_claim_reads_the_same_with_a_month_of_day_partitions(pipeline, db: Database) -> None:
    # Given today's ten queued deliveries to two endpoints
    batch = queued_batch(db, endpoints=2, events=5)

    def claim_and_put_back() -> int:
        with db.connection() as conn:
            cost = buffers_of(conn, "hookline_claim_batch", lambda: claim_batch_to_send(
                conn, batch, LEASE, datetime.now(UTC)))  # fmt: skip
            conn.execute(
                "DELETE FROM deliveries_in_flight WHERE id = ANY(%s)", ([b[0] for b in batch],)
            )
        return cost

    few = [claim_and_put_back() for _ in range(7)][-1]

    # When the ledger has a month of day partitions behind today's
    with db.connection() as conn, conn.transaction():
        for days_ago in range(1, 31):
            conn.execute(
                "SELECT hookline_create_day_partitions((now() - make_interval(days => %s))::date)",
                (days_ago,),
            )
    month = [claim_and_put_back() for _ in range(7)][-1]

    # Then the claim reads today's partition, not each of the month's (two endpoints x
    # 30 partitions x 2 buffers would be 120 more)
    assert month < few + 40, (few, month)
