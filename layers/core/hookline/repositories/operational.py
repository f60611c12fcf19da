"""What the operational monitor reads and writes (decision 0068): attempt statistics per
endpoint, dead deliveries since a position, the endpoints' announced health, tenants'
notification targets, and one endpoint's health over a period."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from hookline.db import Connection
from hookline.sqlfiles import query

Row = dict[str, Any]


def endpoint_attempt_stats(
    conn: Connection,
    *,
    now: datetime,
    window: timedelta,
    max_window: timedelta,
    after_attempts: int,
    error_rate: float,
    operational_types: Sequence[str],
) -> list[Row]:
    """Per endpoint with attempts in its window since its last state change: counts, the
    streak of failures since its last success, and its last failure."""
    rows = conn.execute(
        query("endpoint_attempt_stats"),
        {
            "now": now,
            "window": window,
            "window_seconds": int(window.total_seconds()),
            "max_window": max_window,
            "after_attempts": after_attempts,
            "error_rate": error_rate,
            "operational_types": list(operational_types),
        },
    ).fetchall()
    return [dict(r) for r in rows]


def disabled_endpoints_to_announce(conn: Connection, *, now: datetime, limit: int) -> list[Row]:
    """Endpoints disabled in the last day whose disablement is not announced yet."""
    rows = conn.execute(
        query("disabled_endpoints_to_announce"), {"now": now, "limit": limit}
    ).fetchall()
    return [dict(r) for r in rows]


def reset_reenabled_endpoints(conn: Connection, *, now: datetime) -> int:
    """Endpoints enabled again become healthy; how many."""
    return len(conn.execute(query("reset_reenabled_endpoints"), {"now": now}).fetchall())


def lock_endpoint_health(conn: Connection, endpoint_id: str, tenant_id: str, now: datetime) -> Row:
    """The endpoint's health row (created healthy), locked in the caller's transaction."""
    row = conn.execute(
        query("lock_endpoint_health"),
        {"endpoint_id": endpoint_id, "tenant_id": tenant_id, "now": now},
    ).fetchone()
    assert row is not None
    return dict(row)


def set_state(conn: Connection, endpoint_id: str, state: str, now: datetime) -> None:
    """Record a state change."""
    conn.execute(
        query("set_endpoint_health_state"),
        {"endpoint_id": endpoint_id, "state": state, "now": now},
    )


def set_notified(conn: Connection, endpoint_id: str, state: str, now: datetime) -> None:
    """Record that people were told of `state` now (the quiet period starts)."""
    conn.execute(
        query("set_endpoint_notified"), {"endpoint_id": endpoint_id, "state": state, "now": now}
    )


def position(conn: Connection, name: str) -> datetime | None:
    """Where the scan `name` stopped, if it ever ran."""
    row = conn.execute(query("operational_position"), {"name": name}).fetchone()
    return None if row is None else row["position"]


def set_position(conn: Connection, name: str, at: datetime) -> None:
    """Move the scan `name` forward to `at` (never back)."""
    conn.execute(query("set_operational_position"), {"name": name, "position": at})


def dead_deliveries_since(
    conn: Connection, *, since: datetime, limit: int, operational_types: Sequence[str]
) -> list[Row]:
    """Deliveries that died after `since`, oldest first, with their event type."""
    rows = conn.execute(
        query("dead_deliveries_since"),
        {"since": since, "limit": limit, "operational_types": list(operational_types)},
    ).fetchall()
    return [dict(r) for r in rows]


def tenant_notifications(conn: Connection, tenant_id: str) -> Row | None:
    """A tenant's e-mail addresses and chat webhook, if it opted in."""
    row = conn.execute(query("tenant_notifications"), {"tenant_id": tenant_id}).fetchone()
    return None if row is None else dict(row)


def put_tenant_notifications(
    conn: Connection, tenant_id: str, emails: Sequence[str], chat_url: str | None
) -> Row:
    """Set a tenant's notification targets."""
    row = conn.execute(
        query("put_tenant_notifications"),
        {"tenant_id": tenant_id, "emails": list(emails), "chat_url": chat_url},
    ).fetchone()
    assert row is not None
    return dict(row)


def endpoint_health_row(conn: Connection, endpoint_id: str) -> Row | None:
    """The endpoint's announced state and thresholds, if the monitor has a row for it."""
    row = conn.execute(query("endpoint_health_row"), {"endpoint_id": endpoint_id}).fetchone()
    return None if row is None else dict(row)


def put_endpoint_thresholds(
    conn: Connection,
    endpoint_id: str,
    tenant_id: str,
    *,
    after_attempts: int | None,
    error_rate: float | None,
    window_seconds: int | None,
) -> None:
    """Set (None: reset to the default) an endpoint's failing thresholds."""
    conn.execute(
        query("put_endpoint_thresholds"),
        {
            "endpoint_id": endpoint_id,
            "tenant_id": tenant_id,
            "after_attempts": after_attempts,
            "error_rate": error_rate,
            "window_seconds": window_seconds,
        },
    )


def endpoint_health_summary(
    conn: Connection, endpoint_id: str, *, now: datetime, period: timedelta, deadline: timedelta
) -> Row:
    """One endpoint's attempts over the last `period`: rate, p50/p99, last success, streak."""
    row = conn.execute(
        query("endpoint_health_summary"),
        {"endpoint_id": endpoint_id, "now": now, "period": period, "deadline": deadline},
    ).fetchone()
    assert row is not None
    return dict(row)


def endpoint_health_buckets(
    conn: Connection, endpoint_id: str, *, now: datetime, deadline: timedelta
) -> list[Row]:
    """The endpoint's attempts and successes per hour of the last day."""
    rows = conn.execute(
        query("endpoint_health_buckets"),
        {"endpoint_id": endpoint_id, "now": now, "deadline": deadline},
    ).fetchall()
    return [dict(r) for r in rows]
