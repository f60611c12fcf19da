"""The slot count reads only the day partitions that can hold slots (decision 0082, migration
0035): a claim records the spans of its deliveries' ids before they take slots and counts an
endpoint's `delivering` rows only between the first and the last span on record; reconcile
forgets the spans with no `delivering` row left. The cap still holds for a delivery sent from
an old day's partition (a retry, a replay, a restore), and a prune never forgets a span whose
slot a claim is granting."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from psycopg.types.json import Jsonb

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import reconcile as reconcile_repo
from hookline.repositories.deliveries import AttemptRecord
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


def spans(db: Database) -> list[str]:
    with db.connection() as conn:
        return [r["prefix"] for r in conn.execute("SELECT prefix FROM slot_spans ORDER BY 1")]


def deliver(db: Database, batch: list[tuple[str, int]]) -> None:
    """Claim and record `batch` as delivered, each with its slot."""
    with db.connection() as conn:
        claims = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
        assert [c.wait_seconds for c in claims.values()] == [0] * len(batch)
        attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
        record_batch_delivered(conn, [(c.job, attempt) for c in claims.values()])


def test_a_slot_held_from_a_forty_day_old_partition_counts_until_it_is_freed(
    pipeline, db: Database
) -> None:
    # Given an endpoint with one slot, and deliveries of a 40-day-old event and of today's
    old, today = old_and_todays(db, "spans", cap=1, days_ago=40, today=1)
    assert len(old) == 1 and len(today) == 1

    # When the old delivery takes the slot
    with db.connection() as conn:
        taken = claim_batch_to_send(conn, old, LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in taken.values()] == [0]

    # Then today's waits for it, and reconcile keeps the old day's span while it is held
    with db.connection() as conn:
        waiting = claim_batch_to_send(conn, today, LEASE, datetime.now(UTC))
        assert [c.wait_seconds for c in waiting.values()] == [1]
        conn.execute("UPDATE deliveries SET state = 'queued' WHERE id = %s", (today[0][0],))
        assert reconcile_repo.prune_slot_spans(conn) == 1  # today's, which holds no slot
    assert spans(db) == [old[0][0][:9]]

    # And once it is delivered, reconcile forgets that span and today's claim takes the slot
    with db.connection() as conn:
        attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
        record_batch_delivered(conn, [(c.job, attempt) for c in taken.values()])
        assert reconcile_repo.prune_slot_spans(conn) == 1
    assert spans(db) == []
    with db.connection() as conn:
        granted = claim_batch_to_send(conn, today, LEASE, datetime.now(UTC))
    assert [c.wait_seconds for c in granted.values()] == [0]
    assert spans(db) == [today[0][0][:9]]


def test_a_prune_waits_for_the_claim_granting_a_slot_in_its_span(pipeline, db: Database) -> None:
    # Given an old event's two deliveries (two endpoints of one slot each), the first
    # delivered, so the old span is on record and holds no slot
    tenant = operator.add_tenant(db, HooklineConfig(), name="race", group="standard")["id"]
    for n in range(2):
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=f"http://127.0.0.1:9/{n}",
            max_concurrency=1,
        )  # fmt: skip
    old_id = old_event(db, tenant, 20, "twentydaysago000")
    fan_out_all(db)
    first, second = queued(db, old_id)
    deliver(db, [first])
    assert spans(db) == [first[0][:9]]

    # When a claim grants the second its slot, and a prune starts before the claim commits
    pruned: list[int] = []
    with db.connection() as claimer, claimer.transaction():
        claimer.execute(
            "SELECT * FROM hookline_claim_batch(%s, %s, %s, now(), 300, true)",
            ([second[0]], [second[1]], LEASE),
        )

        def prune() -> None:
            with db.connection() as conn:
                pruned.append(reconcile_repo.prune_slot_spans(conn))

        pruner = threading.Thread(target=prune)
        pruner.start()
        waiting_on_the_claim(db)

    # Then the prune ran after the commit and kept the span, whose slot counts for the cap
    pruner.join(timeout=30)
    assert pruned == [0]
    assert spans(db) == [first[0][:9]]
    with db.connection() as conn:
        assert (
            conn.execute(
                "SELECT count(*) AS n FROM deliveries WHERE state = 'delivering'"
                " AND id BETWEEN (SELECT min(prefix) FROM slot_spans)"
                " AND (SELECT max(prefix) || '~' FROM slot_spans)"
            ).fetchone()["n"]
            == 1
        )


def waiting_on_the_claim(db: Database) -> None:
    """Until another session waits for an advisory lock (the prune, behind the claim)."""
    for _ in range(300):
        with db.connection() as conn:
            if conn.execute(
                "SELECT 1 FROM pg_stat_activity"
                " WHERE wait_event_type = 'Lock' AND wait_event = 'advisory'"
            ).fetchone():
                return
        time.sleep(0.01)
    raise AssertionError("the prune never waited for the claim")


def test_a_claim_reads_the_same_with_a_month_of_day_partitions(pipeline, db: Database) -> None:
    # Given today's ten queued deliveries to two endpoints
    tenant = tenant_with_endpoints(db, endpoints=2)
    publish(db, tenant, 5)
    fan_out_all(db)
    with db.connection() as conn:
        batch = [
            (r["id"], r["enqueue_seq"])
            for r in conn.execute("SELECT id, enqueue_seq FROM deliveries ORDER BY id").fetchall()
        ]

    def claim_and_put_back() -> int:
        with db.connection() as conn:
            cost = buffers_of(conn, "hookline_claim_batch", lambda: claim_batch_to_send(
                conn, batch, LEASE, datetime.now(UTC)))  # fmt: skip
            ids = [b[0] for b in batch]
            conn.execute("UPDATE deliveries SET state = 'queued' WHERE id = ANY(%s)", (ids,))
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

    # Then the slot count reads today's partition, not each of the month's (two endpoints x
    # 30 partitions x 2 buffers would be 120 more)
    assert month < few + 40, (few, month)


def test_a_batch_spanning_two_days_records_both_spans(pipeline, db: Database) -> None:
    # Given an old event's delivery and two of today's, today's span on record
    old, today = old_and_todays(db, "mixed", cap=5, days_ago=3, today=2)
    deliver(db, today[:1])
    assert spans(db) == [today[0][0][:9]]

    # When one batch claims the old delivery and today's other
    deliver(db, old + today[1:])

    # Then both spans are on record
    assert spans(db) == sorted({old[0][0][:9], today[0][0][:9]})
