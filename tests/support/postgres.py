"""Looking at a test database's server from outside: which backends are connected."""

from __future__ import annotations

import psycopg


def backend_pids(admin_url: str, dbname: str, application_name: str) -> list[int]:
    """The server pids of the connections to `dbname` that gave `application_name`."""
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
            (dbname, application_name),
        ).fetchall()
    return [r[0] for r in rows]
