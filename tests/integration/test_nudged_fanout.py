"""A fan-out run nudged after an accept looks at the last day's outbox rows and due
deliveries only (decision 0101, migration 0046): what an older day holds (an event restored
into its own day, a retry of an older event's delivery) is the next scheduled run's, which
reads every day. Real Postgres, moto SQS, the fan-out handler."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.ids import ulid
from hookline.settings import get_settings
from tests.support import operator
from tests.support.pipeline import Pipeline
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

BIG = {"payload": {"amount": [{"numeric": [">", 100]}]}}


def old_event(db: Database, tenant_id: str, days_ago: int) -> str:
    """An event of `days_ago` days before today, in its own day's partition, with its outbox
    row waiting (as a restore from the archive leaves it)."""
    at = datetime.now(UTC) - timedelta(days=days_ago)
    event_id = "evt_" + ulid(int(at.timestamp() * 1000), os.urandom(10))
    with db.connection() as conn, conn.transaction():
        conn.execute("SELECT hookline_create_day_partitions(%s::date)", (at.date(),))
        conn.execute(
            "INSERT INTO events (id, tenant_id, origin, type, dedupe_key, payload)"
            " VALUES (%s, %s, 'publish', 'order.paid', %s, %s)",
            (event_id, tenant_id, event_id, b'{"amount": 500}'),
        )
        conn.execute(
            "INSERT INTO outbox (event_id, tenant_id, created_at) VALUES (%s, %s, now())",
            (event_id, tenant_id),
        )
    return event_id


def waiting(db: Database, event_ids: list[str]) -> set[str]:
    """Those of the events whose outbox row is not fanned out yet."""
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT event_id FROM outbox WHERE event_id = ANY(%s) AND fanned_out_at IS NULL",
            (event_ids,),
        ).fetchall()
    return {r["event_id"] for r in rows}


def due_again(db: Database, event_ids: list[str]) -> None:
    """The events' deliveries pending and due now, as a failed attempt's retry leaves them."""
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries SET state = 'pending', next_attempt_at = now(),"
            " lease_expires_at = NULL WHERE event_id = ANY(%s)",
            (event_ids,),
        )


def states(db: Database, event_ids: list[str]) -> dict[str, str]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT event_id, state FROM deliveries WHERE event_id = ANY(%s)", (event_ids,)
        ).fetchall()
    return {r["event_id"]: r["state"] for r in rows}


@pytest.mark.parametrize("content_filter", [None, BIG], ids=["plain", "content-filtered"])
def test_a_nudged_run_leaves_an_older_days_rows_to_the_scheduled_run(
    pipeline: Pipeline, db: Database, sink: Sink, content_filter: dict | None
) -> None:
    # Given a tenant's endpoint (content-filtered: its events go through fan_out_batch), an
    # event of three days ago waiting in the outbox, and one published now
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    operator.add_endpoint(
        db, get_settings(), tenant_id=t, url=sink.url("/hook"),
        content_filter=content_filter,
    )  # fmt: skip
    old = old_event(db, t, days_ago=3)
    with db.connection() as conn, conn.transaction():
        new = hookline.publish(conn, tenant_id=t, type="order.paid", payload={"amount": 500}).id
    # When a nudged run goes
    pipeline.fanout(nudged=True)
    # Then it fanned out and sent today's event, and left the older day's waiting
    assert waiting(db, [old, new]) == {old}
    assert states(db, [old, new]) == {new: "queued"}
    # And the scheduled run fans the older one out
    pipeline.fanout()
    assert waiting(db, [old, new]) == set()
    assert states(db, [old, new]) == {new: "queued", old: "queued"}

    # Given both deliveries due again (a retry), and another event published
    due_again(db, [old, new])
    with db.connection() as conn, conn.transaction():
        another = hookline.publish(conn, tenant_id=t, type="order.paid", payload={"amount": 9})
    # When a nudged run goes, it sends today's retry; the scheduled run then the older one
    pipeline.fanout(nudged=True)
    assert waiting(db, [another.id]) == set()
    assert states(db, [old, new]) == {new: "queued", old: "pending"}
    pipeline.fanout()
    assert states(db, [old, new]) == {new: "queued", old: "queued"}
