"""The audit log: who did what to which object, with parameters."""

from __future__ import annotations

from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.sqlfiles import query


def write_audit(
    conn: Connection,
    *,
    actor: str,
    action: str,
    object_type: str,
    object_id: str | None,
    params: dict[str, Any],
) -> int:
    """Append an audit entry; returns its id."""
    row = conn.execute(
        query("insert_audit_entry"),
        {
            "actor": actor,
            "action": action,
            "object_type": object_type,
            "object_id": object_id,
            "params": Jsonb(params),
        },
    ).fetchone()
    assert row is not None
    return int(row["id"])


def list_audit_entries(
    conn: Connection, *, action: str | None = None, limit: int = 50
) -> list[dict[str, Any]]:
    """The newest audit entries first, optionally of one action."""
    rows = conn.execute(query("list_audit_entries"), {"action": action, "limit": limit})
    return [dict(r) for r in rows]
