"""Restores recorded by the management API (sql/restores.sql, docs/decisions/0051)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.sqlfiles import query


def insert_restore(
    conn: Connection,
    *,
    id: str,
    tenant_id: str,
    requested_by: str,
    reason: str,
    request: dict[str, Any],
) -> dict[str, Any]:
    """Record an accepted restore."""
    row = conn.execute(
        query("insert_restore"),
        {
            "id": id,
            "tenant_id": tenant_id,
            "requested_by": requested_by,
            "reason": reason,
            "request": Jsonb(request),
        },
    ).fetchone()
    assert row is not None
    return dict(row)


def get_restore(conn: Connection, restore_id: str) -> dict[str, Any]:
    """One restore, or NotFound."""
    row = conn.execute(query("get_restore"), {"id": restore_id}).fetchone()
    if row is None:
        raise NotFound(f"no restore {restore_id}")
    return dict(row)


def list_restores(
    conn: Connection, *, tenant_id: str | None, after: str | None, limit: int
) -> list[dict[str, Any]]:
    """Restores, newest first, optionally of one tenant."""
    params = {"tenant_id": tenant_id, "after": after, "limit": limit}
    return [dict(r) for r in conn.execute(query("list_restores"), params)]


def claim_restore(conn: Connection, restore_id: str) -> dict[str, Any] | None:
    """Take an accepted restore to run it; None when it is not (any longer) accepted."""
    row = conn.execute(query("claim_restore"), {"id": restore_id}).fetchone()
    return None if row is None else dict(row)


def finish_restore(
    conn: Connection,
    restore_id: str,
    *,
    state: str,
    result: dict[str, Any],
    audit_id: int | None,
) -> dict[str, Any] | None:
    """The final state and result of a restore (None if it had already finished)."""
    row = conn.execute(
        query("finish_restore"),
        {"id": restore_id, "state": state, "result": Jsonb(result), "audit_id": audit_id},
    ).fetchone()
    return None if row is None else dict(row)


def fail_stale_restores(
    conn: Connection, *, running_quiet: timedelta, accepted_quiet: timedelta
) -> list[dict[str, Any]]:
    """Fail the restores whose run died or never started; the rows failed."""
    params = {"running_quiet": running_quiet, "accepted_quiet": accepted_quiet}
    return [dict(r) for r in conn.execute(query("fail_stale_restores"), params)]


def set_audit_id(conn: Connection, restore_id: str, audit_id: int) -> None:
    """The audit entry of a restore failed by the sweep."""
    conn.execute(query("set_restore_audit_id"), {"id": restore_id, "audit_id": audit_id})
