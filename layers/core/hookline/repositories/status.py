"""Status queries: deliveries per state, the outbox, backlog per tenant group, the last
reconcile report, and deliveries listed with filters."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hookline.db import Connection
from hookline.sqlfiles import query


def deliveries_by_state(conn: Connection) -> dict[str, int]:
    """How many deliveries are in each state (states with none are absent)."""
    rows = conn.execute(query("status_deliveries_by_state")).fetchall()
    return {r["state"]: int(r["n"]) for r in rows}


def outbox(conn: Connection) -> dict[str, Any]:
    """Outbox rows not fanned out yet, and the age in seconds of the oldest."""
    row = conn.execute(query("status_outbox")).fetchone()
    assert row is not None
    return {"pending": int(row["pending"]), "oldest_pending_seconds": float(row["oldest_seconds"])}


def backlog_by_group(conn: Connection) -> dict[str, dict[str, int]]:
    """Unfinished deliveries per tenant group: pending, due, queued, delivering."""
    rows = conn.execute(query("status_backlog_by_group")).fetchall()
    return {
        r["tenant_group"]: {k: int(r[k]) for k in ("pending", "due", "queued", "delivering")}
        for r in rows
    }


def last_reconcile_run(conn: Connection) -> dict[str, Any] | None:
    """The newest reconcile report, whatever its columns; None when there is none, or no
    reconcile_runs table at all (a schema from before reconcile)."""
    columns = {
        r["column_name"]
        for r in conn.execute(query("status_table_columns"), {"table": "reconcile_runs"})
    }
    if "started_at" not in columns:
        return None
    row = conn.execute(query("status_last_reconcile_run")).fetchone()
    return dict(row["run"]) if row else None


def list_deliveries(
    conn: Connection,
    *,
    state: str | None = None,
    endpoint_id: str | None = None,
    event_id: str | None = None,
    since: datetime | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """Deliveries, newest first, filtered by state, endpoint, event and creation time."""
    params = {
        "state": state,
        "endpoint_id": endpoint_id,
        "event_id": event_id,
        "since": since,
        "limit": limit,
    }
    return [dict(r) for r in conn.execute(query("list_deliveries"), params).fetchall()]
