"""Deliveries through the management API, in the caller's scope: read, list, their attempts,
resend one, and the status summary (another tenant's delivery is NotFound)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management.access import Caller
from hookline.management.paging import MAX_PAGE, check_window, decode_cursor, page_of, paged
from hookline.repositories import api as repo


def get_delivery(db: Database, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """One delivery in scope."""
    with db.connection() as conn:
        return repo.get_delivery(conn, caller.tenant, delivery_id)


def list_deliveries(
    db: Database, caller: Caller, *, filters: dict[str, Any], cursor: str | None, limit: int
) -> dict[str, Any]:
    """Deliveries in scope, newest first, by state, endpoint, event and time window."""
    check_window(filters)
    with db.connection() as conn:
        rows = repo.list_deliveries(conn, caller.tenant, page_of(cursor, limit), filters)
    return paged(rows, limit)


def list_attempts(
    db: Database, caller: Caller, delivery_id: str, *, cursor: str | None, limit: int
) -> dict[str, Any]:
    """Attempts of a delivery in scope, oldest first."""
    after = decode_cursor(cursor)
    if after is not None and not isinstance(after, int):
        raise BadRequest("cursor is not valid: pass next_cursor from the previous page")
    bounded = min(max(limit, 1), MAX_PAGE)
    with db.connection() as conn:
        repo.get_delivery(conn, caller.tenant, delivery_id)
        rows = repo.list_attempts(conn, caller.tenant, delivery_id, after, bounded + 1)
    return paged(rows, limit)


def resend_delivery(
    db: Database,
    caller: Caller,
    delivery_id: str,
    run_replay: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Send one delivery again (a replay by id: same webhook-id, new run, audited)."""
    get_delivery(db, caller, delivery_id)
    summary = run_replay(
        {
            "delivery_ids": [delivery_id],
            "requested_by": caller.principal,
            "reason": "resend through the API",
        }
    )
    return {
        "delivery_id": delivery_id,
        "enqueued": int(summary.get("enqueued", 0)),
        "skipped": dict(summary.get("skipped", {})),
        "audit_id": summary.get("audit_id"),
    }


def status(db: Database, caller: Caller) -> dict[str, Any]:
    """Deliveries per state, events of the last day, the outbox and endpoints, in scope."""
    with db.connection() as conn:
        summary = repo.status_summary(conn, caller.tenant)
    oldest = summary.get("outbox_oldest_seconds")
    summary["outbox_oldest_seconds"] = float(oldest) if oldest is not None else None
    return summary
