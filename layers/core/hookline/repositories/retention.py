"""Day partitions, retention deletes, the archive's selection, restore and erasure: the SQL of
bounded storage (sql/retention.sql, docs/decisions/0039-0041)."""

from __future__ import annotations

from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import DeliveryStillOpen, LedgerBusy
from hookline.records import frozen
from hookline.sqlfiles import query


@frozen
class DayBounds:
    """The partition-key ranges of one day: event ids [lo, hi), delivery ids [dlo, dhi)."""

    day: date
    lo: str
    hi: str
    dlo: str
    dhi: str

    def params(self) -> dict[str, Any]:
        """The bounds as query parameters."""
        return {"lo": self.lo, "hi": self.hi, "dlo": self.dlo, "dhi": self.dhi}

    def between(self, lo: str, hi: str) -> DayBounds:
        """A slice of the day: its event ids [lo, hi), both whole milliseconds (`evt_` and the
        id's ten time characters), and the delivery ids of the same milliseconds."""
        return DayBounds(self.day, lo, hi, "dlv_" + lo[4:], "dlv_" + hi[4:])


# A slice's count of what its archive objects hold: per tenant, [events, deliveries, attempts].
SliceCounts = dict[str, list[int]]


@frozen
class SliceRows:
    """How many events a slice holds, and rows of `attempts`: what says it changed."""

    events: int
    attempt_rows: int


@frozen
class ArchivedSlice:
    """A slice of a day whose archive objects are written (decision 0118): what they hold, and
    the slice's rows of `attempts` before it was read."""

    lo: str
    hi: str
    counts: SliceCounts
    attempt_rows: int
    changed: bool = False  # a replay reset or created a delivery of it since

    @property
    def rows(self) -> SliceRows:
        """What the slice held as archived."""
        return SliceRows(sum(c[0] for c in self.counts.values()), self.attempt_rows)


@frozen
class DayTenant:
    """One tenant's share of a day: events, those an unfinished delivery holds, its retention
    override, and whether a restore hold covers the day."""

    tenant_id: str
    events: int
    unfinished: int
    retention_days: int | None
    held: bool


DAY_PARTITIONED = ("events", "outbox", "deliveries", "attempts")


def create_day_partitions(conn: Connection, day: date) -> int:
    """Create the day's partition of every hot table that lacks one; returns how many. One
    statement per table: on an autocommit connection each commits, and so releases its
    parent's lock, before the next parent is locked (migration 0030); then deliver's functions
    for the day's `deliveries` partition (decision 0084), which hold no table's lock."""
    made = 0
    for table in DAY_PARTITIONED:
        row = conn.execute(query("create_day_partition"), {"day": day, "table": table}).fetchone()
        made += int(row["made"]) if row else 0
    conn.execute(query("make_day_functions"), {"day": day})
    return made


@contextmanager
def giving_way(conn: Connection, *, lock_wait: timedelta) -> Iterator[None]:
    """Within it, a statement waits at most `lock_wait` for a lock (for the rest of the
    transaction); one that waited longer, or that a deadlock chose, raises LedgerBusy for the
    caller to roll back (decision 0116)."""
    wait_ms = max(1, int(lock_wait.total_seconds() * 1000))
    try:
        conn.execute(query("set_lock_wait"), {"wait_ms": wait_ms})
        yield
    except (psycopg.errors.LockNotAvailable, psycopg.errors.DeadlockDetected) as err:
        raise LedgerBusy(f"the pipeline held the day's tables ({type(err).__name__})") from err


def drop_day_partitions(conn: Connection, day: date) -> int:
    """Drop the day's partitions (and its events' rows in the default partitions) and deliver's
    functions for them, the hot tables' parents locked first; in a transaction (a savepoint of
    the caller's, if it has one)."""
    try:
        with conn.transaction():
            conn.execute(query("lock_hot_parents"))
            row = conn.execute(query("drop_day_partitions"), {"day": day}).fetchone()
    except psycopg.errors.ObjectInUse as err:
        raise DeliveryStillOpen(f"day {day} has unfinished deliveries") from err
    return int(row["dropped"]) if row else 0


def list_day_partitions(conn: Connection) -> list[tuple[date, list[str]]]:
    """Each day that has partitions, oldest first, with the tables that have one."""
    return [(r["day"], list(r["tables"])) for r in conn.execute(query("list_day_partitions"))]


def day_bounds(conn: Connection, day: date) -> DayBounds:
    """The id ranges of a day's partitions."""
    row = conn.execute(query("day_bounds"), {"day": day}).fetchone()
    assert row is not None
    return DayBounds(day, row["lo"], row["hi"], row["dlo"], row["dhi"])


def day_tenants(conn: Connection, bounds: DayBounds, *, as_of: datetime) -> list[DayTenant]:
    """Who has events in the day, and what keeps them."""
    start = datetime.combine(bounds.day, datetime.min.time(), tzinfo=as_of.tzinfo)
    params = {**bounds.params(), "as_of": as_of, "day_start": start,
              "day_end": start + timedelta(days=1)}  # fmt: skip
    return [
        DayTenant(r["tenant_id"], r["events"], r["unfinished"], r["retention_days"], r["held"])
        for r in conn.execute(query("day_tenants"), params)
    ]


def archive_selection(
    conn: Connection, bounds: DayBounds, tenants: Sequence[str] | None, *, with_ids: bool
) -> Generator[dict[str, Any], None, None]:
    """The day's events of `tenants` (all when None) that nothing unfinished holds, in tenant
    order, each as `tenant_id`, `id`, `line` (its archive line, JSON made by Postgres: decision
    0118), how many `deliveries` and `attempts` the line holds and, when `with_ids`, its
    `delivery_ids`. Streamed 500 rows at a time (decision 0117): no server-side cursor, whose
    plan would be made for its first tenth of rows and whose DECLARE pins an RDS Proxy session.
    The connection runs nothing else until the rows are read; closing the iterator early
    cancels the rest."""
    params = {**bounds.params(), "tenants": list(tenants) if tenants is not None else None,
              "with_ids": with_ids}  # fmt: skip
    yield from conn.cursor().stream(query("archive_selection"), params, size=500)


def slice_end(conn: Connection, bounds: DayBounds, lo: str, *, events: int, deliveries: int) -> str:
    """Where the slice of the day that begins at `lo` ends: after about `events` events or
    `deliveries` deliveries, whichever comes first, at a millisecond's start (past lo's), or at
    the day's end."""
    params = {"lo": lo, "hi": bounds.hi, "events": events, "deliveries": deliveries}
    row = conn.execute(query("slice_end"), params).fetchone()
    assert row is not None
    return str(row["hi"])


def record_slice(
    conn: Connection, bounds: DayBounds, counts: SliceCounts, *, attempt_rows: int
) -> None:
    """Note that the slice `bounds` is archived, what its objects hold and how many rows of
    `attempts` it had before it was read."""
    params = {"day": bounds.day, "lo": bounds.lo, "hi": bounds.hi, "counts": Jsonb(counts),
              "attempt_rows": attempt_rows}  # fmt: skip
    conn.execute(query("record_slice"), params)


def day_slices(conn: Connection, day: date) -> list[ArchivedSlice]:
    """The day's archived slices, in order."""
    rows = conn.execute(query("day_slices"), {"day": day})
    return [
        ArchivedSlice(r["lo"], r["hi"], r["counts"], r["attempt_rows"], r["changed"]) for r in rows
    ]


def forget_slices(conn: Connection, day: date) -> None:
    """Forget the day's slices (its partitions are dropped)."""
    conn.execute(query("forget_slices"), {"day": day})


def mark_slices_changed(conn: Connection, delivery_ids: Sequence[str]) -> None:
    """Mark the archived slices holding these deliveries (a replay reset or created them) to
    be written again at their day's drop."""
    if delivery_ids:
        conn.execute(query("mark_slices_changed"), {"ids": list(delivery_ids)})


def share_position(conn: Connection, day: date) -> str | None:
    """Where the share of a day that others keep goes on from, if a run stopped in it."""
    row = conn.execute(query("share_position"), {"day": day}).fetchone()
    return None if row is None else str(row["next_lo"])


def record_share_position(conn: Connection, day: date, next_lo: str) -> None:
    """Note that the day's share is done up to `next_lo`."""
    conn.execute(query("record_share_position"), {"day": day, "next_lo": next_lo})


def forget_share(conn: Connection, day: date) -> None:
    """Forget where the day's share stopped (it reached the day's end, or the day went)."""
    conn.execute(query("forget_share"), {"day": day})


def days_in_progress(conn: Connection) -> list[date]:
    """The days whose archive in slices has begun, or whose share a run stopped in."""
    return [r["day"] for r in conn.execute(query("days_in_progress"))]


def slice_rows(conn: Connection, piece: DayBounds) -> SliceRows:
    """How many events the slice `piece` holds now, and rows of `attempts`."""
    row = conn.execute(query("slice_rows"), piece.params()).fetchone()
    assert row is not None
    return SliceRows(row["events"], row["attempt_rows"])


def delete_events(
    conn: Connection, bounds: DayBounds, event_ids: list[str], delivery_ids: list[str]
) -> dict[str, int]:
    """Delete events of a day with their outbox rows, deliveries and attempts (children
    first); counts per table. Raises DeliveryStillOpen, for the caller to roll back, if a
    delivery of them is left (one became unfinished since they were selected)."""
    ids = {"delivery_ids": delivery_ids}
    counts = {
        "attempts": conn.execute(query("delete_attempts"), ids).rowcount,
        "deliveries": conn.execute(query("delete_deliveries"), ids).rowcount,
    }
    left = conn.execute(
        query("count_deliveries_left"), {**bounds.params(), "event_ids": event_ids}
    ).fetchone()
    if left and left["n"]:
        raise DeliveryStillOpen(f"{left['n']} deliveries of the day became unfinished")
    counts["outbox"] = conn.execute(query("delete_outbox"), {"event_ids": event_ids}).rowcount
    counts["events"] = conn.execute(query("delete_events"), {"event_ids": event_ids}).rowcount
    return counts


def prune_event_keys(conn: Connection, *, before: datetime, dry_run: bool) -> int:
    """Remove (or count) dedupe keys older than `before` whose event has left the ledger."""
    if dry_run:
        row = conn.execute(query("count_event_keys_to_prune"), {"before": before}).fetchone()
        return int(row["n"]) if row else 0
    return conn.execute(query("prune_event_keys"), {"before": before}).rowcount


def shortest_override(conn: Connection) -> int | None:
    """The shortest per-tenant retention in days, or None when no tenant overrides it."""
    row = conn.execute(query("retention_overrides")).fetchone()
    return int(row["shortest"]) or None if row else None


def set_tenant_retention(conn: Connection, tenant_id: str, days: int | None) -> bool:
    """Set (or clear, with None) a tenant's retention override; False if no such tenant."""
    row = conn.execute(query("set_tenant_retention"), {"id": tenant_id, "days": days}).fetchone()
    return row is not None


def restore_event(conn: Connection, event: dict[str, Any]) -> bool:
    """Put an archived event back with its original id and a pending outbox row; False when it
    was already in the ledger."""
    params = {**event, "headers": Jsonb(event["headers"])}
    row = conn.execute(query("restore_event"), params).fetchone()
    return bool(row and row["restored"])


def insert_retention_hold(
    conn: Connection,
    *,
    tenant_id: str,
    since: datetime,
    until: datetime,
    expires_at: datetime,
    reason: str,
) -> None:
    """Keep a tenant's window from retention until `expires_at`."""
    conn.execute(
        query("insert_retention_hold"),
        {"tenant_id": tenant_id, "since": since, "until": until,
         "expires_at": expires_at, "reason": reason},
    )  # fmt: skip


def tenant_exists(conn: Connection, tenant_id: str) -> bool:
    """Whether the tenant exists."""
    return conn.execute(query("tenant_exists"), {"tenant_id": tenant_id}).fetchone() is not None


def erase_tenant_rows(conn: Connection, tenant_id: str) -> dict[str, int]:
    """Delete a tenant's ledger rows and secrets; counts per kind."""
    counts = {}
    for kind in ("attempts", "deliveries", "quarantine", "outbox", "events", "keys", "slices",
                 "endpoint_secrets", "source_secrets", "endpoints"):  # fmt: skip
        counts[kind] = conn.execute(
            query(f"erase_tenant_{kind}"), {"tenant_id": tenant_id}
        ).rowcount
    return counts


def tenant_source_ids(conn: Connection, tenant_id: str) -> set[str]:
    """The ids of every source of the tenant, deleted ones included."""
    rows = conn.execute(query("tenant_source_ids"), {"tenant_id": tenant_id}).fetchall()
    return {str(r["id"]) for r in rows}


def events_outside_days(conn: Connection) -> int:
    """How many events sit in the default partition, outside every day partition."""
    row = conn.execute(query("events_outside_days")).fetchone()
    return int(row["n"]) if row else 0


def table_sizes(conn: Connection) -> dict[str, int]:
    """Bytes on disk of every table (a partitioned one: all its partitions), by name."""
    return {r["table_name"]: int(r["bytes"]) for r in conn.execute(query("table_sizes"))}
