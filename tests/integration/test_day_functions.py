"""Deliver's claim and record update the day partition their batch lies in (decision 0084,
migration 0036): each day with a `deliveries` partition has its own copy of the two functions,
made and dropped with the partition; a batch whose ids share a day goes through that day's
copy, any other batch through the functions over the parent, and a copy given a batch outside
its partition hands it on. Which function ran is read from the server's function statistics."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

import pytest

from hookline.db import Database
from hookline.ids import ulid_day
from hookline.repositories import deliveries as deliveries_repo
from hookline.repositories import retention as retention_repo
from hookline.repositories.deliveries import AttemptRecord, Finish
from hookline.repositories.delivery_batches import (
    FailedRecord,
    claim_batch_to_send,
    record_batch_delivered,
    record_batch_failed,
)
from tests.integration.test_claims_in_flight import old_event, queued
from tests.integration.test_hot_path_plans import fan_out_all, publish, tenant_with_endpoints

pytestmark = pytest.mark.integration

LEASE = timedelta(minutes=5)
T = TypeVar("T")
CLAIM, RECORD = "hookline_claim_batch", "hookline_record_batch_delivered"
FAILED = "hookline_record_batch_failed"


def calls(conn: Any) -> dict[str, int]:
    """Calls so far of the claim and record functions and their day copies, by name (this
    connection's own, flushed first)."""
    conn.execute("SELECT pg_stat_force_next_flush()")
    rows = conn.execute(
        "SELECT funcname, calls FROM pg_stat_user_functions "
        "WHERE funcname ~ '^hookline_(claim_batch|record_batch_delivered|record_batch_failed)'"
    ).fetchall()
    return {r["funcname"]: r["calls"] for r in rows}


def counted(conn: Any, action: Callable[[], T]) -> tuple[T, dict[str, int]]:
    """What `action` returned, and which of the functions it ran how often."""
    conn.execute("SET track_functions = 'all'")
    before = calls(conn)
    result = action()
    after = calls(conn)
    conn.execute("RESET track_functions")
    return result, {k: n - before.get(k, 0) for k, n in after.items() if n != before.get(k, 0)}


def suffix(day: date) -> str:
    return f"_d{day:%Y%m%d}"


def deliver(conn: Any, batch: list[tuple[str, int]]) -> set[str]:
    """Claim `batch` and record every claim delivered; the ids recorded."""
    claims = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in claims.values()] == [0] * len(batch)
    attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
    return record_batch_delivered(conn, [(c.job, attempt) for c in claims.values()])


def states(db: Database, batch: list[tuple[str, int]]) -> list[str]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT hookline_shown_state(state, id) AS state FROM deliveries"
            " WHERE id = ANY(%s) ORDER BY id",
            ([i for i, _ in batch],),
        ).fetchall()
    return [r["state"] for r in rows]


def todays(db: Database, tenant: str, events: int) -> list[tuple[str, int]]:
    """`events` of today's events published and fanned out (with any event not yet fanned
    out); the tenant's queued deliveries of today."""
    publish(db, tenant, events)
    fan_out_all(db)
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, enqueue_seq FROM deliveries WHERE tenant_id = %s ORDER BY id", (tenant,)
        ).fetchall()
    today = datetime.now(UTC).date()
    return [(r["id"], r["enqueue_seq"]) for r in rows if ulid_day(r["id"]) == today]


def test_a_batch_of_todays_deliveries_goes_through_todays_copies(pipeline, db: Database) -> None:
    # Given three of today's deliveries, queued
    batch = todays(db, tenant_with_endpoints(db, 3), events=1)
    assert len(batch) == 3
    today = suffix(datetime.now(UTC).date())

    # When deliver claims and records them
    with db.connection() as conn:
        recorded, ran = counted(conn, lambda: deliver(conn, batch))

    # Then they are delivered, through today's claim and record, once each, and the
    # functions over the parent did not run
    assert recorded == {i for i, _ in batch}
    assert states(db, batch) == ["delivered"] * 3
    assert ran == {CLAIM + today: 1, RECORD + today: 1}


def test_one_message_of_today_goes_through_todays_copies(pipeline, db: Database) -> None:
    # Given one of today's deliveries, queued (a trickle: deliver handles a batch of one alone)
    [(delivery_id, seq)] = todays(db, tenant_with_endpoints(db, 1), events=1)
    today = suffix(datetime.now(UTC).date())

    # When deliver claims and records it on its own
    def alone(conn: Any) -> int | None:
        claim = deliveries_repo.claim_to_send(conn, delivery_id, seq, LEASE, datetime.now(UTC))
        assert claim is not None and claim.wait_seconds == 0
        attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
        return deliveries_repo.record_delivered(conn, claim.job, attempt)

    with db.connection() as conn:
        recorded, ran = counted(conn, lambda: alone(conn))
    assert recorded == seq

    # Then it is delivered, through today's claim and record
    assert states(db, [(delivery_id, seq)]) == ["delivered"]
    assert ran == {CLAIM + today: 1, RECORD + today: 1}


@pytest.mark.parametrize("days", [1, 2])
def test_a_batch_of_failures_goes_through_its_days_copy_or_the_parents(
    pipeline, db: Database, days: int
) -> None:
    # Given three of today's deliveries, claimed, whose attempts failed, and with two days a
    # delivery of a three-day-old event among them
    tenant = tenant_with_endpoints(db, 3)
    old_id = old_event(db, tenant, 3, "threedaysago0000") if days == 2 else None
    batch = todays(db, tenant, events=1) + (queued(db, old_id)[:1] if old_id else [])
    assert len(batch) == 2 + days
    today = suffix(datetime.now(UTC).date())
    with db.connection() as conn:
        claims = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    failed = AttemptRecord(datetime.now(UTC), 5, 503, "busy", None)
    later = datetime.now(UTC) + timedelta(seconds=5)
    retry = Finish("queued", True, 503, "HTTP 503", later, later + LEASE, True)

    # When deliver records them
    with db.connection() as conn:
        recorded, ran = counted(conn, lambda: record_batch_failed(
            conn, [FailedRecord(c.job, failed, retry) for c in claims.values()]))  # fmt: skip

    # Then each is queued again under a new generation, through today's copy of the function,
    # or the function over the parent for a batch of two days (split by day, decision 0103,
    # only when deliver records a batch: this calls the statement once)
    assert recorded.stood == {i: seq + 1 for i, seq in batch}
    assert states(db, batch) == ["queued"] * len(batch)
    assert ran == ({FAILED + today: 1} if days == 1 else {FAILED: 1})


def test_a_batch_spanning_two_days_goes_through_the_parents_functions(
    pipeline, db: Database
) -> None:
    # Given a delivery of a three-day-old event and one of today's, in one batch
    tenant = tenant_with_endpoints(db, 1)
    old_id = old_event(db, tenant, 3, "threedaysago0000")
    batch = todays(db, tenant, events=1) + queued(db, old_id)
    assert len(batch) == 2

    # When deliver claims and records them
    with db.connection() as conn:
        recorded, ran = counted(conn, lambda: deliver(conn, batch))

    # Then both are delivered, through the functions over the parent only
    assert recorded == {i for i, _ in batch}
    assert states(db, batch) == ["delivered"] * 2
    assert ran == {CLAIM: 1, RECORD: 1}


def test_a_day_without_its_copies_is_still_delivered(pipeline, db: Database) -> None:
    # Given a five-day-old event's queued delivery, and that day's copies gone
    tenant = tenant_with_endpoints(db, 1)
    then = datetime.now(UTC).date() - timedelta(days=5)
    old_id = old_event(db, tenant, 5, "fivedaysago00000")
    fan_out_all(db)
    batch = queued(db, old_id)
    with db.connection() as conn:
        assert conn.execute("SELECT hookline_drop_day_functions(%s)", (then,)).fetchone() == {
            "hookline_drop_day_functions": 3
        }

    # When deliver claims and records it
    with db.connection() as conn:
        recorded, ran = counted(conn, lambda: deliver(conn, batch))

    # Then it is delivered, through the functions over the parent
    assert recorded == {batch[0][0]}
    assert states(db, batch) == ["delivered"]
    assert ran == {CLAIM: 1, RECORD: 1}


def test_a_days_copy_hands_a_batch_outside_its_partition_to_the_parents(
    pipeline, db: Database
) -> None:
    # Given a two-day-old event's queued delivery
    tenant = tenant_with_endpoints(db, 1)
    old_id = old_event(db, tenant, 2, "twodaysago000000")
    fan_out_all(db)
    batch = queued(db, old_id)
    today = suffix(datetime.now(UTC).date())

    # When today's claim copy is called with it (as a wrong reading of its day would)
    with db.connection() as conn:
        rows, ran = counted(conn, lambda: conn.execute(
            f"SELECT id, wait_seconds FROM {CLAIM}{today}(%s::text[], %s::integer[], "
            "'5 minutes'::interval, now(), 300, true)",
            ([i for i, _ in batch], [s for _, s in batch]),
        ).fetchall())  # fmt: skip

    # Then the delivery is claimed all the same, by the function over the parent
    assert [(r["id"], r["wait_seconds"]) for r in rows] == [(batch[0][0], 0)]
    assert states(db, batch) == ["delivering"]
    assert ran == {CLAIM + today: 1, CLAIM: 1}


def test_a_days_copies_are_made_and_dropped_with_its_partitions(pipeline, db: Database) -> None:
    def copies(conn: Any, day: date) -> list[str]:
        rows = conn.execute(
            "SELECT proname FROM pg_proc WHERE proname IN (%s, %s, %s) ORDER BY 1",
            (CLAIM + suffix(day), RECORD + suffix(day), FAILED + suffix(day)),
        ).fetchall()
        return [r["proname"] for r in rows]

    later = datetime.now(UTC).date() + timedelta(days=30)
    with db.connection() as conn:
        # Given a day a month ahead, without partitions or copies
        assert copies(conn, later) == []
        # When its partitions are made, it has the three copies
        assert retention_repo.create_day_partitions(conn, later) == 4
        assert copies(conn, later) == [CLAIM + suffix(later)] + [
            f + suffix(later) for f in (RECORD, FAILED)
        ]
        # And when its partitions are dropped, none
        assert retention_repo.drop_day_partitions(conn, later) == 4
        assert copies(conn, later) == []

    # Given an old day with a delivery not yet delivered
    tenant = tenant_with_endpoints(db, 1)
    then = datetime.now(UTC).date() - timedelta(days=4)
    old_event(db, tenant, 4, "fourdaysago00000")
    fan_out_all(db)
    with db.connection() as conn:
        # When retention tries to drop it, it refuses, and the day keeps its copies
        with pytest.raises(retention_repo.DeliveryStillOpen):
            retention_repo.drop_day_partitions(conn, then)
        assert copies(conn, then) == [CLAIM + suffix(then)] + [
            f + suffix(then) for f in (RECORD, FAILED)
        ]
