"""Replay's queries: selecting deliveries and ledger events, resetting deliveries for a new
run, and re-creating missing ones from the ledger."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from hookline.db import Connection
from hookline.sqlfiles import query


@dataclass(frozen=True)
class Window:
    """Events received in [since, until), optionally of one tenant and some event types."""

    since: datetime
    until: datetime
    tenant_id: str | None = None
    types: tuple[str, ...] = ()  # filter patterns (`*` wildcards); empty = every type


@dataclass(frozen=True)
class Reset:
    """What resetting one delivery came to: its new generation, or why it was skipped."""

    id: str
    skip: str | None
    endpoint_id: str | None = None
    tenant_group: str | None = None
    seq: int | None = None


def _ids(rows: Iterable[Any]) -> list[str]:
    return [str(r["id"]) for r in rows]


def deliveries_by_ids(
    conn: Connection, ids: Sequence[str], *, limit: int, after: str | None = None
) -> list[str]:
    """Those of `ids` that exist, oldest first (after the delivery `after`, if given: every
    selection here resumes after the last id a previous run dealt with)."""
    params = {"ids": list(ids), "limit": limit, "after": after}
    return _ids(conn.execute(query("replay_deliveries_by_ids"), params))


def deliveries_by_events(
    conn: Connection,
    event_ids: Sequence[str],
    states: Sequence[str],
    *,
    limit: int,
    after: str | None = None,
) -> list[str]:
    """Deliveries of the events, in the given states, oldest first."""
    params = {"event_ids": list(event_ids), "states": list(states), "limit": limit, "after": after}
    return _ids(conn.execute(query("replay_deliveries_by_events"), params))


def deliveries_by_endpoint(
    conn: Connection,
    endpoint_id: str,
    window: Window,
    states: Sequence[str],
    *,
    limit: int,
    after: str | None = None,
) -> list[str]:
    """Deliveries to one endpoint of events received in the window, oldest first."""
    params = {
        "after": after,
        "endpoint_id": endpoint_id,
        "since": window.since,
        "until": window.until,
        "states": list(states),
        "limit": limit,
    }
    return _ids(conn.execute(query("replay_deliveries_by_endpoint"), params))


def deliveries_by_window(
    conn: Connection,
    window: Window,
    states: Sequence[str],
    *,
    limit: int,
    after: str | None = None,
) -> list[str]:
    """Deliveries of events received in the window (of a tenant, of some types)."""
    params = {
        "after": after,
        "tenant_id": window.tenant_id,
        "since": window.since,
        "until": window.until,
        "types": list(window.types),
        "states": list(states),
        "limit": limit,
    }
    return _ids(conn.execute(query("replay_deliveries_by_window"), params))


def judge(conn: Connection, ids: Sequence[str]) -> dict[str, str | None]:
    """For each delivery, why a reset would skip it (None: it would be replayed)."""
    rows = conn.execute(query("replay_judge_deliveries"), {"ids": list(ids)}).fetchall()
    return {r["id"]: r["skip"] for r in rows}


def reset(
    conn: Connection, ids: Sequence[str], *, lease: timedelta, deadline: timedelta
) -> list[Reset]:
    """Reset deliveries for a new run (queued, new generation); one Reset per id found."""
    rows = conn.execute(
        query("replay_reset_deliveries"), {"ids": list(ids), "lease": lease, "deadline": deadline}
    ).fetchall()
    return [
        Reset(r["id"], r["skip"], r["endpoint_id"], r["tenant_group"], r["enqueue_seq"])
        for r in rows
    ]


def known_events(conn: Connection, event_ids: Sequence[str]) -> set[str]:
    """Those of `event_ids` that are in the ledger."""
    rows = conn.execute(query("replay_known_events"), {"event_ids": list(event_ids)}).fetchall()
    return {r["id"] for r in rows}


def events_by_window(
    conn: Connection, window: Window, *, limit: int, after: str | None = None
) -> list[str]:
    """Ledger events received in the window, oldest first."""
    params = {
        "after": after,
        "tenant_id": window.tenant_id,
        "since": window.since,
        "until": window.until,
        "types": list(window.types),
        "limit": limit,
    }
    return _ids(conn.execute(query("refanout_events_by_window"), params))


def events_for_endpoint(
    conn: Connection, endpoint_id: str, window: Window, *, limit: int, after: str | None = None
) -> list[str]:
    """The endpoint's tenant's events in the window that its filters match, oldest first."""
    params = {
        "after": after,
        "endpoint_id": endpoint_id,
        "since": window.since,
        "until": window.until,
        "limit": limit,
    }
    return _ids(conn.execute(query("refanout_events_for_endpoint"), params))


def count_missing(
    conn: Connection, event_ids: Sequence[str], endpoint_id: str | None
) -> tuple[int, int]:
    """(pairs a refanout considers, pairs without a delivery) for the events."""
    row = conn.execute(
        query("refanout_count_missing"), {"event_ids": list(event_ids), "endpoint_id": endpoint_id}
    ).fetchone()
    assert row is not None
    return int(row["pairs"]), int(row["missing"])


def create_missing(
    conn: Connection,
    event_ids: Sequence[str],
    endpoint_id: str | None,
    *,
    deadline: timedelta,
    hold: timedelta,
) -> tuple[int, list[str]]:
    """Create the deliveries the events lack; (pairs considered, ids created)."""
    row = conn.execute(
        query("refanout_create_deliveries"),
        {
            "event_ids": list(event_ids),
            "endpoint_id": endpoint_id,
            "deadline": deadline,
            "hold": hold,
        },
    ).fetchone()
    assert row is not None
    return int(row["pairs"]), list(row["created"])
