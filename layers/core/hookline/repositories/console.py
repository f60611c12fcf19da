"""The console's own reads: attempts per hour for the status chart, the newest audit entries."""

from __future__ import annotations

from typing import Any

from hookline.db import Connection
from hookline.sqlfiles import query


def attempts_by_hour(conn: Connection) -> list[dict[str, Any]]:
    """Attempts of the last 24 h per hour: hour, attempts, succeeded (hours with none absent)."""
    return [dict(r) for r in conn.execute(query("console_attempts_by_hour")).fetchall()]


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
