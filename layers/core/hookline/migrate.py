"""Numbered SQL migrations applied in order under a Postgres advisory lock.

Safe to run twice or concurrently: the lock serialises runners, and each migration is
recorded in `schema_migrations` in the same transaction that applies it.
"""

from __future__ import annotations

import re
from datetime import timedelta
from importlib import resources

import psycopg
from psycopg.rows import dict_row

from hookline.config import HooklineConfig
from hookline.db import Connection
from hookline.observability import logger
from hookline.records import frozen
from hookline.repositories.reconcile import receipt_lease, set_receipt_lease

# An arbitrary constant; every migrator takes the same lock.
_LOCK_KEY = 0x486F6F6B6C696E65  # "Hookline"
_FILE = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@frozen
class Migration:
    """One numbered migration file."""

    version: int
    name: str
    sql: str


def available_migrations() -> list[Migration]:
    """Every migration shipped with the package, in order."""
    found = []
    for entry in resources.files("hookline.migrations").iterdir():
        match = _FILE.match(entry.name)
        if match:
            found.append(Migration(int(match[1]), match[2], entry.read_text()))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise RuntimeError("two migrations share a version number")
    return found


def migrate(conninfo: str, config: HooklineConfig | None = None) -> list[int]:
    """Apply the migrations not yet applied; return the versions applied now. Given the
    deployment's `config`, the receipt lease is then kept at its queued lease
    (`keep_receipt_lease`)."""
    applied_now: list[int] = []
    with psycopg.connect(conninfo, autocommit=True, row_factory=dict_row) as conn:
        conn.execute("SELECT pg_advisory_lock(%s)", (_LOCK_KEY,))
        try:
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                " version integer PRIMARY KEY, name text NOT NULL,"
                " applied_at timestamptz NOT NULL DEFAULT now())"
            )
            done = {r["version"] for r in conn.execute("SELECT version FROM schema_migrations")}
            for migration in available_migrations():
                if migration.version in done:
                    continue
                with conn.transaction():
                    conn.execute(migration.sql.encode())
                    conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                applied_now.append(migration.version)
            if config is not None:
                keep_receipt_lease(conn, timedelta(seconds=config.delivery_queued_lease_seconds))
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (_LOCK_KEY,))
    return applied_now


def keep_receipt_lease(conn: Connection, lease: timedelta) -> int | None:
    """Make `lease` the receipt lease (decision 0111) unless it is: a delivery made at receipt
    then writes no lease of its own whatever the deployment's queued lease. Returns how many
    queued deliveries' leases were written to keep them as held, None when nothing changed.
    Setting it off for a rollback (docs/operations.md) is undone by the next deploy of a
    version with this step; the rollback's own version has none."""
    was = receipt_lease(conn)
    if was == lease:
        return None
    written = set_receipt_lease(conn, lease)
    logger.info(
        "receipt lease set",
        extra={"was": str(was), "now": str(lease), "leases_written": written},
    )
    return written


def current_version(conninfo: str) -> int:
    """The highest applied migration version (0 for an empty database)."""
    with psycopg.connect(conninfo, autocommit=True) as conn:
        exists = conn.execute("SELECT to_regclass('schema_migrations') IS NOT NULL").fetchone()
        if not exists or not exists[0]:
            return 0
        row = conn.execute("SELECT coalesce(max(version), 0) FROM schema_migrations").fetchone()
        return int(row[0]) if row else 0
