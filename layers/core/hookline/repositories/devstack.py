"""What only the local dev stack asks of the database: its lock, its start-up repair, and the
numbers of its status line."""

from __future__ import annotations

from typing import Any

from hookline.db import Connection
from hookline.records import frozen
from hookline.sqlfiles import query

# Any constant works; every dev stack takes the same one ("HookDev!").
DEV_STACK_LOCK_KEY = 0x486F6F6B44657621


@frozen
class StatusCounts:
    """Events and deliveries, for the status line."""

    received: int
    unfanned: int  # accepted events not fanned out yet
    delivered: int
    retrying: int  # unfinished deliveries with at least one failed attempt
    failed: int
    dead: int
    backlog: dict[str, int]  # unfinished deliveries per tenant group


def try_lock(conn: Connection) -> bool:
    """Take the one-dev-stack-per-database lock on this session; False if another holds it."""
    row = conn.execute(query("devstack_try_lock"), {"key": DEV_STACK_LOCK_KEY}).fetchone()
    return bool(row and row["locked"])


def requeue_in_progress(conn: Connection) -> int:
    """Put every queued or delivering delivery back to pending (freeing its endpoint slot);
    the number put back. Only safe while holding the dev stack lock."""
    row = conn.execute(query("devstack_requeue_in_progress")).fetchone()
    return int(row["requeued"]) if row else 0


def status_counts(conn: Connection) -> StatusCounts:
    """The status line's numbers, from two statements."""
    row = conn.execute(query("devstack_status")).fetchone()
    assert row is not None
    backlog = {
        r["tenant_group"]: int(r["backlog"]) for r in conn.execute(query("devstack_backlog"))
    }
    return StatusCounts(
        received=int(row["received"]),
        unfanned=int(row["unfanned"]),
        delivered=int(row["delivered"]),
        retrying=int(row["retrying"]),
        failed=int(row["failed"]),
        dead=int(row["dead"]),
        backlog=backlog,
    )


def event_deliveries(conn: Connection, event_id: str) -> list[dict[str, Any]]:
    """Every delivery of one event, with its endpoint's URL."""
    return [
        dict(r) for r in conn.execute(query("devstack_event_deliveries"), {"event_id": event_id})
    ]
