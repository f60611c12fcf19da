"""An endpoint's health as data (decision 0068): its state (healthy, failing, disabled),
success rate, p50/p99 attempt duration, last success and consecutive failures over the last
hour and day, and its attempts per hour of the day (the portal's and console's chart)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.db import Connection
from hookline.operational_options import OperationalOptions
from hookline.repositories import operational as repo

PERIODS = {"last_hour": timedelta(hours=1), "last_day": timedelta(days=1)}


def endpoint_health(
    conn: Connection,
    endpoint: dict[str, Any],
    *,
    options: OperationalOptions,
    deadline: timedelta,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The health of `endpoint` (a row the caller may see: id, tenant_id, enabled, ...).
    `deadline` bounds how old a delivery still attempted can be."""
    now = now or datetime.now(UTC)
    row = repo.endpoint_health_row(conn, endpoint["id"])
    state = "disabled" if not endpoint["enabled"] else (row["state"] if row else "healthy")
    if state == "disabled" and endpoint["enabled"]:
        state = "healthy"  # enabled again; the monitor's next run agrees
    answer: dict[str, Any] = {
        "endpoint_id": endpoint["id"],
        "state": state,
        "state_since": row["changed_at"].isoformat() if row and row["state"] == state else None,
        "disabled_reason": None if endpoint["enabled"] else endpoint.get("disabled_reason"),
        "thresholds": thresholds(row, options),
    }
    for name, period in PERIODS.items():
        summary = repo.endpoint_health_summary(
            conn, endpoint["id"], now=now, period=period, deadline=deadline
        )
        attempts = int(summary["attempts"])
        answer[name] = {
            "attempts": attempts,
            "successes": int(summary["successes"]),
            "success_rate": round(summary["successes"] / attempts, 4) if attempts else None,
            "p50_ms": _ms(summary["p50_ms"]),
            "p99_ms": _ms(summary["p99_ms"]),
            "last_success_at": _iso(summary["last_success_at"]),
            "consecutive_failures": int(summary["consecutive_failures"]),
        }
    answer["hourly"] = hourly(conn, endpoint["id"], now=now, deadline=deadline)
    return answer


def hourly(
    conn: Connection, endpoint_id: str, *, now: datetime, deadline: timedelta
) -> list[dict[str, Any]]:
    """Attempts and successes per hour of the last 24 hours (hours without any included)."""
    found = {
        r["hour"]: r
        for r in repo.endpoint_health_buckets(conn, endpoint_id, now=now, deadline=deadline)
    }
    top = now.replace(minute=0, second=0, microsecond=0)
    hours = [top - timedelta(hours=h) for h in range(23, -1, -1)]
    return [
        {
            "hour": h.isoformat(),
            "attempts": int(found[h]["attempts"]) if h in found else 0,
            "successes": int(found[h]["successes"]) if h in found else 0,
        }
        for h in hours
    ]


def thresholds(row: dict[str, Any] | None, options: OperationalOptions) -> dict[str, Any]:
    """The endpoint's failing thresholds: its own where set, else the deployment's."""
    own = row or {}
    return {
        "failing_after_attempts": own.get("failing_after_attempts")
        or options.failing_after_attempts,
        "failing_error_rate": own.get("failing_error_rate") or options.failing_error_rate,
        "failing_window_seconds": own.get("failing_window_seconds")
        or options.failing_window_seconds,
    }


def _ms(value: float | None) -> int | None:
    return None if value is None else round(value)


def _iso(at: datetime | None) -> str | None:
    return None if at is None else at.isoformat()
