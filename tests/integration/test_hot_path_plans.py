"""The hot path's functions reach their rows by key (decision 0072, migration 0031): what a
batch claim or a fan-out round reads does not grow with the backlog queued behind it or with
the tenant's history, even when the partitions' statistics were taken while they were empty
(a fresh day, a fresh deployment, a backlog that built up after the last analyze). The
`pipeline` fixture only sets the environment (loopback endpoints allowed).

What a statement reads is taken from the server itself: `auto_explain` (loaded into the test's
own session) reports the shared buffers each call of the function touched."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from psycopg.types.json import Jsonb

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import deliveries as repo
from hookline.repositories.delivery_batches import claim_batch_to_send
from hookline.settings import get_settings
from hookline.sqlfiles import query
from tests.support import operator

pytestmark = pytest.mark.integration

LEASE = timedelta(minutes=5)
DEADLINE = timedelta(hours=72)


def buffers_of(conn: Any, function: str, call: Callable[[], Any]) -> int:
    """Shared buffers (hit + read) the call of `function` touched, per the server's plan."""
    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary or ""))
    conn.execute("LOAD 'auto_explain'")
    conn.execute("SET auto_explain.log_min_duration = 0")
    conn.execute("SET auto_explain.log_analyze = on")
    conn.execute("SET auto_explain.log_buffers = on")
    conn.execute("SET client_min_messages = log")
    try:
        call()
    finally:
        conn.execute("SET client_min_messages = warning")
        conn.execute("SET auto_explain.log_min_duration = -1")
    plans = [n for n in notices if f"Function Scan on {function}" in n]
    assert plans, notices
    found = re.search(r"Buffers: shared hit=(\d+)(?: read=(\d+))?", plans[-1])
    assert found, plans[-1]
    return int(found.group(1)) + int(found.group(2) or 0)


def tenant_with_endpoints(db: Database, endpoints: int) -> str:
    """A tenant with `endpoints` endpoints taking every event; statistics taken now, empty."""
    tenant = operator.add_tenant(db, HooklineConfig(), name="plans", group="standard")["id"]
    for n in range(endpoints):
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=f"http://127.0.0.1:9/{n}",
            max_concurrency=1000,
        )  # fmt: skip
    with db.connection() as conn:
        conn.execute("ANALYZE")
    return tenant


def publish(db: Database, tenant: str, count: int) -> None:
    with db.connection() as conn, conn.transaction():
        for n in range(count):
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})


def fan_out_all(db: Database) -> None:
    with db.connection() as conn:
        while repo.fan_out_and_claim(
            conn, limit=500, deadline=DEADLINE, lease=LEASE, due_limit=0
        ).to_send:
            pass


def test_a_batch_claim_reads_the_same_with_a_backlog_of_thousands(pipeline, db: Database) -> None:
    # Given ten queued deliveries, statistics taken while the tables were empty
    tenant = tenant_with_endpoints(db, endpoints=2)
    publish(db, tenant, 5)
    fan_out_all(db)
    with db.connection() as conn:
        batch = [
            (r["id"], r["enqueue_seq"])
            for r in conn.execute("SELECT id, enqueue_seq FROM deliveries ORDER BY id").fetchall()
        ]
    assert len(batch) == 10

    def claim_and_put_back() -> int:
        with db.connection() as conn:
            cost = buffers_of(conn, "hookline_claim_batch", lambda: claim_batch_to_send(
                conn, batch, LEASE, datetime.now(UTC)))  # fmt: skip
            ids = [b[0] for b in batch]
            conn.execute("UPDATE deliveries SET state = 'queued' WHERE id = ANY(%s)", (ids,))
        return cost

    # (PL/pgSQL plans a statement afresh five times, then may keep a generic plan for good)
    alone = [claim_and_put_back() for _ in range(7)][-1]

    # When 6,000 more deliveries queue up behind them (no analyze since)
    publish(db, tenant, 3000)
    fan_out_all(db)
    behind = [claim_and_put_back() for _ in range(3)][-1]

    # Then claiming the same ten reads about what it read before, not the backlog
    assert behind < alone * 1.5 + 20, (alone, behind)


def test_a_fan_out_round_reads_the_same_for_a_tenant_with_a_long_history(
    pipeline, db: Database
) -> None:
    # Given a tenant whose events so far were all fanned out, statistics taken empty
    tenant = tenant_with_endpoints(db, endpoints=1)

    def one_round_of_one_event() -> int:
        publish(db, tenant, 1)
        with db.connection() as conn:
            return buffers_of(conn, "hookline_fan_out_round", lambda: repo.fan_out_and_claim(
                conn, limit=100, deadline=DEADLINE, lease=LEASE, due_limit=100))  # fmt: skip

    publish(db, tenant, 10)
    fan_out_all(db)
    young = [one_round_of_one_event() for _ in range(7)][-1]

    # When the tenant has 3,000 more events behind it
    publish(db, tenant, 3000)
    fan_out_all(db)
    old = [one_round_of_one_event() for _ in range(3)][-1]

    # Then fanning out one more event reads about what it read before
    assert old < young * 1.5 + 20, (young, old)


def test_a_batch_mixing_a_forty_day_old_event_with_todays_claims_them_all(pipeline, db: Database):
    # Given a delivery of an event from 40 days ago (its day's partition, as a replay or a
    # restore leaves it) queued beside ten of today's
    tenant = tenant_with_endpoints(db, endpoints=2)
    publish(db, tenant, 5)
    then = datetime.now(UTC) - timedelta(days=40)
    with db.connection() as conn, conn.transaction():
        conn.execute("SELECT hookline_create_day_partitions(%s::date)", (then.date(),))
        old_id = conn.execute(
            "SELECT 'evt_' || hookline_ulid_time(%s) || 'OLDEVENT00000000' AS id", (then,)
        ).fetchone()["id"]
        conn.execute(query("insert_event"), {
            "id": old_id, "tenant_id": tenant, "source_id": None, "origin": "publish",
            "type": "order.paid", "dedupe_key": "forty-days-ago", "payload": b'{"n": -1}',
            "content_type": "application/json", "headers": Jsonb({}), "traceparent": None,
        })  # fmt: skip
    fan_out_all(db)
    with db.connection() as conn:
        batch = [
            (r["id"], r["enqueue_seq"])
            for r in conn.execute("SELECT id, enqueue_seq FROM deliveries ORDER BY id").fetchall()
        ]
        old_day = conn.execute(
            "SELECT count(*) AS n FROM deliveries WHERE event_id = %s", (old_id,)
        ).fetchone()["n"]
    assert len(batch) == 12 and old_day == 2

    # When one batch claims them all
    with db.connection() as conn:
        claimed = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))

    # Then every one is claimed with its slot, the old event's payload with it
    assert sorted(claimed) == sorted(batch)
    assert all(c.wait_seconds == 0 for c in claimed.values())
    old = [c for c in claimed.values() if c.job.event_id == old_id]
    assert len(old) == 2 and all(c.job.payload == b'{"n": -1}' for c in old)


def test_the_lease_sweeps_read_the_expired_leases_not_the_queue_behind_them(
    pipeline, db: Database
) -> None:
    # Given a queued delivery and one in flight whose leases ran out (their worker or message
    # lost), statistics taken while the tables were empty
    tenant = tenant_with_endpoints(db, endpoints=2)
    publish(db, tenant, 1)
    fan_out_all(db)
    with db.connection() as conn:
        lost = [r["id"] for r in conn.execute("SELECT id FROM deliveries ORDER BY id").fetchall()]
        conn.execute("UPDATE deliveries SET lease_expires_at = now() - interval '1 minute'")
        conn.execute(
            "INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at,"
            " slot) SELECT id, endpoint_id, enqueue_seq, now() - interval '1 minute', true"
            " FROM deliveries WHERE id = %s",
            (lost[0],),
        )

    def sweep() -> tuple[int, int, list[tuple[str, str]]]:
        """What counting and requeueing the expired leases read, and what the sweep found
        (rolled back, so each sweep finds the same)."""
        with db.connection() as conn, conn.transaction(force_rollback=True):
            count = query("count_expired_leases")
            requeue = query("requeue_expired_leases")
            counted = conn.execute(count).fetchone()["n"]
            read = explained_buffers(conn, count, {}) + explained_buffers(
                conn, requeue, {"limit": 100}
            )
        with db.connection() as conn, conn.transaction(force_rollback=True):
            found = conn.execute(requeue, {"limit": 100}).fetchall()
        return read, counted, sorted((r["id"], r["was"]) for r in found)

    alone, counted, found = sweep()
    assert counted == 2
    assert found == sorted([(lost[0], "delivering"), (lost[1], "queued")])

    # When 6,000 deliveries queue up behind them under live leases (no analyze since)
    publish(db, tenant, 3000)
    fan_out_all(db)
    behind, counted, found = sweep()

    # Then the sweep finds the same two, reading about what it read before
    assert counted == 2
    assert found == sorted([(lost[0], "delivering"), (lost[1], "queued")])
    assert behind < alone * 1.5 + 20, (alone, behind)


def explained_buffers(conn: Any, statement: str, params: dict[str, Any]) -> int:
    """Shared buffers (hit + read) one run of `statement` touched, per EXPLAIN ANALYZE."""
    plan = conn.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + statement, params)
    top = plan.fetchone()["QUERY PLAN"][0]["Plan"]
    return int(top["Shared Hit Blocks"]) + int(top["Shared Read Blocks"])
