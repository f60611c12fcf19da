"""A day's claim reads each delivery's event from the day's partition of events (decision 0100,
migration 0045), so what a claim costs does not grow with the days the ledger keeps; a
delivery whose event lies in another day's partition (a test event's delivery made before
decision 0087 carries a moment after its event, maybe the next day) is still claimed with its
event, read through the parent."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta
from typing import Any

import pytest
from psycopg.types.json import Jsonb

from hookline.db import Database
from hookline.repositories import deliveries as deliveries_repo
from hookline.repositories.delivery_batches import claim_batch_to_send
from hookline.sqlfiles import query
from tests.integration.test_day_functions import todays
from tests.integration.test_hot_path_plans import tenant_with_endpoints

pytestmark = pytest.mark.integration

LEASE = timedelta(minutes=5)
KEPT_DAYS = 40


def events_partitions_locked(conn: Any, claim: str, batch: list[tuple[str, int]]) -> int:
    """How many partitions of `events` the claim function `claim` locks, called once on
    `batch` inside a transaction (rolled back: nothing is claimed)."""
    with conn.transaction(force_rollback=True):
        conn.execute(
            f"SELECT * FROM {claim}(%s::text[], %s::integer[], %s::interval, %s::timestamptz,"
            " %s::double precision, false)",
            ([i for i, _ in batch], [s for _, s in batch], LEASE, datetime.now(UTC),
             LEASE.total_seconds()),
        ).fetchall()  # fmt: skip
        row = conn.execute(
            "SELECT count(*) AS n FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
            " JOIN pg_inherits i ON i.inhrelid = c.oid"
            " WHERE l.pid = pg_backend_pid() AND i.inhparent = 'events'::regclass"
        ).fetchone()
    return int(row["n"])


def test_a_days_claim_reads_one_partition_of_events_however_many_days_are_kept(
    pipeline, db: Database
) -> None:
    # Given a ledger that keeps forty earlier days, and two of today's deliveries, queued
    with db.connection() as conn:
        conn.execute(
            "SELECT hookline_create_day_partitions(current_date - d)"
            " FROM generate_series(1, %s) AS d",
            (KEPT_DAYS,),
        )
    batch = todays(db, tenant_with_endpoints(db, 2), events=1)
    assert len(batch) == 2
    day = datetime.now(UTC).strftime("%Y%m%d")

    # When today's claim function claims them (and, for comparison, the one over the parent)
    with db.connection() as conn:
        by_day = events_partitions_locked(conn, f"hookline_claim_batch_d{day}", batch)
        by_parent = events_partitions_locked(conn, "hookline_claim_batch", batch)

    # Then today's reads the day's partition of events alone; the parent's plans every day kept
    assert by_day == 1
    assert by_parent > KEPT_DAYS


def test_a_delivery_whose_event_lies_in_the_day_before_is_claimed_with_its_event(
    pipeline, db: Database
) -> None:
    # Given a delivery of today made a moment after its event of yesterday (as a test event's
    # delivery was made before decision 0087), queued
    tenant = tenant_with_endpoints(db, 1)
    midnight = datetime.combine(datetime.now(UTC).date(), time(), UTC)
    with db.connection() as conn, conn.transaction():
        endpoint_id = conn.execute(
            "SELECT id FROM endpoints WHERE tenant_id = %s", (tenant,)
        ).fetchone()["id"]
        conn.execute("SELECT hookline_create_day_partitions(%s::date)", (midnight.date(),))
        conn.execute(
            "SELECT hookline_create_day_partitions(%s::date)", ((midnight - timedelta(1)).date(),)
        )
        event_id = conn.execute(
            "SELECT 'evt_' || hookline_ulid_time(%s) || 'LATEEVENT0000000' AS id",
            (midnight - timedelta(milliseconds=2),),
        ).fetchone()["id"]
        conn.execute(query("insert_event"), {
            "id": event_id, "tenant_id": tenant, "source_id": None, "origin": "test",
            "type": "order.paid", "dedupe_key": event_id, "payload": b'{"late": true}',
            "content_type": "application/json", "headers": Jsonb({}), "traceparent": None,
        })  # fmt: skip
        delivery_id = conn.execute(
            "SELECT 'dlv_' || hookline_ulid_time(%s) || '0123456789abcdef' AS id",
            (midnight + timedelta(milliseconds=3),),
        ).fetchone()["id"]
        conn.execute(
            "INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, state,"
            " deadline_at, lease_expires_at, enqueue_seq)"
            " SELECT %s, %s, %s, t.id, t.tenant_group, 'queued', now() + interval '1 day',"
            " now() + interval '15 minutes', 1 FROM tenants t WHERE t.id = %s",
            (delivery_id, event_id, endpoint_id, tenant),
        )

    # When deliver claims it, in a batch and on its own
    with db.connection() as conn:
        batch = claim_batch_to_send(conn, [(delivery_id, 1)], LEASE, datetime.now(UTC))
        conn.execute("DELETE FROM deliveries_in_flight WHERE id = %s", (delivery_id,))
        alone = deliveries_repo.claim_to_send(conn, delivery_id, 1, LEASE, datetime.now(UTC))

    # Then each claim holds its slot and carries the event it is to send
    for claim in (batch[(delivery_id, 1)], alone):
        assert claim is not None and claim.wait_seconds == 0
        assert (claim.job.event_id, claim.job.event_type) == (event_id, "order.paid")
        assert claim.job.payload == b'{"late": true}'
