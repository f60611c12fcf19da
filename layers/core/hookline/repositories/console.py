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
