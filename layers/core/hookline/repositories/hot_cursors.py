"""The deliverer's per-message statements on cursors kept per connection (decision 0078)."""

from __future__ import annotations

from typing import Any

from psycopg import Cursor

from hookline.db import Connection

# The deliverer's statements run on a cursor kept per connection and statement (decision
# 0078): psycopg keeps a cursor's adaptation state while it runs the same statement again,
# which a new cursor per execute builds anew (~50 µs of ~250 per claim on this machine). The
# cursors hang on their connection, so they go with it when the pool replaces it.
_CURSORS = "_hookline_cursors"


def hot_execute(conn: Connection, sql: str, params: dict[str, Any]) -> Cursor[Any]:
    """Run one of the deliverer's per-message statements on `conn`'s cursor for it (a
    connection serves one thread at a time, so its cursors do too)."""
    cursors: dict[str, Cursor[Any]] | None = getattr(conn, _CURSORS, None)
    if cursors is None:
        cursors = {}
        setattr(conn, _CURSORS, cursors)
    cursor = cursors.get(sql)
    if cursor is None or cursor.closed:
        cursor = cursors[sql] = conn.cursor()
    return cursor.execute(sql, params)
