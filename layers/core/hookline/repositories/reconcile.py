"""What the reconciler reads and repairs: late outbox rows, expired leases, deadlines,
missing deliveries, the report rows, and the provider catch-up state of sources."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.ids import ulid_time
from hookline.records import frozen
from hookline.repositories.content_matching import content_match_arrays
from hookline.repositories.deliveries import hold_new_ordered
from hookline.sqlfiles import query


@frozen
class Repaired:
    """A delivery a repair moved, and the state it was found in."""

    id: str
    was: str


def receipt_lease(conn: Connection) -> timedelta | None:
    """The lease a delivery made at receipt holds without writing it (None: every receipt
    writes its lease)."""
    row = conn.execute(query("receipt_lease")).fetchone()
    return row["lease"] if row else None


def set_receipt_lease(conn: Connection, lease: timedelta | None) -> int:
    """Set the receipt lease (None: off), writing the queued deliveries' implied leases
    first; how many were written."""
    row = conn.execute(query("set_receipt_lease"), {"lease": lease}).fetchone()
    return int(row["written"]) if row else 0


def lock_late_outbox(conn: Connection, *, age: timedelta, limit: int) -> list[str]:
    """Lock (in the caller's transaction) outbox rows waiting longer than `age`."""
    rows = conn.execute(query("lock_late_outbox"), {"age": age, "limit": limit}).fetchall()
    return [r["event_id"] for r in rows]


def count_fanned_out(conn: Connection, event_ids: Sequence[str]) -> int:
    """How many of these outbox rows are now fanned out."""
    return _count(conn, "count_fanned_out", {"ids": list(event_ids)})


def count_late_outbox(conn: Connection, *, age: timedelta) -> int:
    """Outbox rows still waiting for fan-out after `age`."""
    return _count(conn, "count_late_outbox", {"age": age})


def kill_past_deadline(conn: Connection, *, limit: int) -> list[Repaired]:
    """Declare dead up to `limit` unheld deliveries whose deadline passed."""
    rows = conn.execute(query("kill_past_deadline"), {"limit": limit}).fetchall()
    return [Repaired(r["id"], r["was"]) for r in rows]


def requeue_expired_leases(conn: Connection, *, limit: int) -> list[Repaired]:
    """Make up to `limit` deliveries whose lease expired due again now."""
    rows = conn.execute(query("requeue_expired_leases"), {"limit": limit}).fetchall()
    return [Repaired(r["id"], r["was"]) for r in rows]


def advance_lease_floor(conn: Connection) -> datetime:
    """Move the lease floor up to the first lease that ran out on a still-queued delivery
    (decision 0097); where it stands now."""
    row = conn.execute(query("advance_lease_floor")).fetchone()
    assert row is not None  # an upsert returns its row
    floor: datetime = row["after_at"]
    return floor


def count_expired_leases(conn: Connection) -> int:
    """Deliveries whose lease, or whose claim's, has run out, with no live claim."""
    return _count(conn, "count_expired_leases", {})


def prune_expired_claims(conn: Connection) -> int:
    """Forget the claims whose lease ran out; how many (decision 0085)."""
    return _count(conn, "prune_expired_claims", {})


# Events the missing-delivery walk reads per event it may return: each step reads at most
# `limit * SCAN_PER_EVENT` events of the window, in id order, and after a full page (events
# lacking a pair are dense there, as behind a content filter that matches none of them)
# `limit * SCAN_WHEN_DENSE`: a step checks all it reads, so it should not read far past
# where a full page stops it (decision 0090).
SCAN_PER_EVENT = 20
SCAN_WHEN_DENSE = 2
# The walk's floor is computed here, early by this much: this clock may run ahead of the
# database's, and the statement keeps to the window by `received_at` anyway.
FLOOR_MARGIN = timedelta(minutes=1)


@frozen
class MissingPage:
    """One step of the missing-delivery repair: what it created, and where the next starts."""

    created: list[str]
    last: str | None  # the last event id this step read; None: it read none
    more: bool  # the window may hold more events after `last`
    full: bool = False  # it stopped at `limit` events lacking a pair: pass `dense` next


def create_missing_deliveries(
    conn: Connection,
    *,
    window: timedelta,
    deadline: timedelta,
    limit: int,
    after: str | None = None,
    dense: bool = False,
) -> MissingPage:
    """One step of the walk over the window's events after event `after`: create the
    deliveries the fan-out should have created for up to `limit` of them, to a
    content-filtered endpoint only where its pattern matches the event (the fan-out's rule,
    `content_matches`; decision 0056). `dense`: the last step came back full, so this one
    reads fewer events."""
    start = "evt_" + ulid_time(datetime.now(UTC) - window - FLOOR_MARGIN)
    params = {
        "window": window,
        "limit": limit,
        "scan": limit * (SCAN_WHEN_DENSE if dense else SCAN_PER_EVENT),
        "floor": max(after or "", start),
    }
    rows = conn.execute(query("missing_deliveries_page"), params).fetchall()
    events = [r["event_id"] for r in rows if r["event_id"] is not None]
    created: list[str] = []
    if events:
        params = {
            "event_ids": events,
            "deadline": deadline,
            **content_match_arrays(conn, rows, stage="reconcile"),
        }
        with conn.transaction():  # an ordered endpoint's are held in key order (0069)
            created = [r["id"] for r in conn.execute(query("create_missing_deliveries"), params)]
            hold_new_ordered(conn, created)
    head = rows[0]
    return MissingPage(created, head["last"], bool(head["more"]), bool(head["full"]))


@frozen
class WalkPosition:
    """Where a walk kept between runs resumes (decision 0056)."""

    cycle: int  # full walks made so far; a write of an older cycle is dropped
    after: str | None  # the last event id read; None: the window's start
    lapsed: bool  # `after` fell out of the window: events were never checked this cycle
    resting_until: datetime | None = None  # a finished cycle's rest: no walk before then


def walk_position(
    conn: Connection, name: str, *, window: timedelta, rest: timedelta = timedelta(0)
) -> WalkPosition:
    """The stored position of walk `name` (the window's start before its first run); a walk
    that finished a cycle less than `rest` ago rests until `rest` has passed."""
    params = {"name": name, "window": window, "rest": rest}
    row = conn.execute(query("reconcile_position"), params).fetchone()
    if row is None:
        return WalkPosition(0, None, False)
    return WalkPosition(
        int(row["cycle"]), row["after_id"], bool(row["lapsed"]), row["resting_until"]
    )


def advance_walk(conn: Connection, name: str, *, cycle: int, after: str) -> None:
    """Store that walk `name`, in `cycle`, read up to event `after`: only forward, and not
    once another run has finished that cycle."""
    conn.execute(
        query("advance_reconcile_position"), {"name": name, "cycle": cycle, "after": after}
    )


def finish_walk_cycle(conn: Connection, name: str, *, cycle: int) -> None:
    """Walk `name` reached the window's end in `cycle`: the next run starts at its start."""
    conn.execute(query("finish_reconcile_cycle"), {"name": name, "cycle": cycle})


def never_attempted(
    conn: Connection, *, age: timedelta, exclude: Sequence[str], sample: int
) -> tuple[int, list[str]]:
    """(count, oldest ids) of unfinished deliveries older than `age` never tried."""
    params = {"age": age, "exclude": list(exclude), "limit": sample}
    count = _count(conn, "count_never_attempted", params)
    ids = [r["id"] for r in conn.execute(query("never_attempted_deliveries"), params)]
    return count, ids


def deliveries_by_state(conn: Connection) -> dict[str, int]:
    """Deliveries per unfinished or unhappy state."""
    return {r["state"]: int(r["n"]) for r in conn.execute(query("count_deliveries_by_state"))}


def insert_run(
    conn: Connection,
    *,
    run_id: str,
    trigger: str,
    started_at: datetime,
    finished_at: datetime,
    repairs: dict[str, Any],
    findings: dict[str, Any],
    unreconciled: int,
) -> None:
    """Store the report of one run."""
    conn.execute(
        query("insert_reconcile_run"),
        {
            "id": run_id,
            "trigger": trigger,
            "started_at": started_at,
            "finished_at": finished_at,
            "repairs": Jsonb(repairs),
            "findings": Jsonb(findings),
            "unreconciled": unreconciled,
        },
    )


def last_run(conn: Connection) -> dict[str, Any] | None:
    """The newest reconcile report, or None before the first run."""
    row = conn.execute(query("last_reconcile_run")).fetchone()
    return dict(row) if row else None


def prune_runs(conn: Connection, *, keep: timedelta) -> None:
    """Forget reports older than `keep`."""
    conn.execute(query("prune_reconcile_runs"), {"keep": keep})


def claim_catchup_sources(
    conn: Connection, *, lease: timedelta, limit: int
) -> list[tuple[str, dict[str, Any]]]:
    """Lease the sources due for catch-up to this run: (source id, position)."""
    conn.execute(query("enroll_catchup_sources"))
    rows = conn.execute(query("claim_catchup_sources"), {"lease": lease, "limit": limit}).fetchall()
    return [(r["source_id"], dict(r["position"])) for r in rows]


def finish_catchup_source(
    conn: Connection, source_id: str, *, position: dict[str, Any] | None, error: str | None
) -> None:
    """Release a source's lease, keeping its new position (None keeps the old one)."""
    conn.execute(
        query("finish_catchup_source"),
        {
            "source_id": source_id,
            "position": Jsonb(position) if position is not None else None,
            "error": error,
        },
    )


def known_dedupe_keys(
    conn: Connection, *, tenant_id: str, origin: str, keys: Sequence[str]
) -> set[str]:
    """Which of `keys` the ledger already holds for this tenant and origin."""
    if not keys:
        return set()
    rows = conn.execute(
        query("known_dedupe_keys"), {"tenant_id": tenant_id, "origin": origin, "keys": list(keys)}
    )
    return {r["dedupe_key"] for r in rows}


def redelivery_requests(
    conn: Connection, source_id: str, keys: Sequence[str]
) -> dict[str, tuple[int, datetime]]:
    """Earlier redelivery requests of these provider deliveries: key -> (count, last time)."""
    if not keys:
        return {}
    rows = conn.execute(query("redelivery_requests"), {"source_id": source_id, "keys": list(keys)})
    return {r["delivery_key"]: (int(r["requests"]), r["last_requested_at"]) for r in rows}


def record_redelivery_request(conn: Connection, source_id: str, key: str) -> None:
    """Remember that a redelivery of `key` was asked for now."""
    conn.execute(query("record_redelivery_request"), {"source_id": source_id, "key": key})


def _count(conn: Connection, name: str, params: dict[str, Any]) -> int:
    row = conn.execute(query(name), params).fetchone()
    return int(row["n"]) if row else 0
