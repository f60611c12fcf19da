"""The console's own reads: per hour of the last 24 h the attempts, their latency and the
backlog (the status charts); the newest audit entries; when sources were last rotated."""

from __future__ import annotations

from typing import Any

from hookline.db import Connection
from hookline.sqlfiles import query


def attempts_by_hour(conn: Connection) -> list[dict[str, Any]]:
    """Attempts of the last 24 h per hour: hour, attempts, succeeded (hours with none absent)."""
    return [dict(r) for r in conn.execute(query("console_attempts_by_hour")).fetchall()]


def attempt_latency_by_hour(conn: Connection) -> list[dict[str, Any]]:
    """Attempts of the last 24 h per hour: hour, attempts, p50_ms, p99_ms (hours with none
    absent)."""
    return [dict(r) for r in conn.execute(query("console_attempt_latency_by_hour")).fetchall()]


def backlog_by_hour(conn: Connection) -> list[dict[str, Any]]:
    """Each of the last 24 hours (oldest first) with the deliveries unfinished at its end."""
    return [dict(r) for r in conn.execute(query("console_backlog_by_hour")).fetchall()]


def source_rotations(conn: Connection, source_ids: list[str]) -> dict[str, Any]:
    """Source id -> when its secret was last rotated (absent: never)."""
    rows = conn.execute(query("console_source_rotations"), {"ids": source_ids}).fetchall()
    return {r["source_id"]: r["rotated_at"] for r in rows}


def recent_audit(conn: Connection, limit: int) -> list[dict[str, Any]]:
    """The newest audit entries, newest first."""
    return [dict(r) for r in conn.execute(query("console_recent_audit"), {"limit": limit})]


def get_portal_settings(conn: Connection, tenant_id: str) -> dict[str, Any] | None:
    """A tenant's portal title, logo, accent colour and frame ancestors (None: defaults)."""
    row = conn.execute(query("console_get_portal_settings"), {"tenant_id": tenant_id}).fetchone()
    return dict(row) if row else None


def put_portal_settings(conn: Connection, tenant_id: str, values: dict[str, Any]) -> None:
    """Store a tenant's portal settings (all of them, replacing what was there)."""
    conn.execute(query("console_put_portal_settings"), {"tenant_id": tenant_id, **values})
