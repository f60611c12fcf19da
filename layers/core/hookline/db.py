"""Connections to Postgres: one pool per process, built once, with driver errors
translated to domain errors at this edge."""

from __future__ import annotations

import json
import select
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any
from urllib.parse import quote

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from hookline.errors import DatabaseUnavailable
from hookline.settings import Settings, get_settings

Connection = psycopg.Connection[Any]


def check_idle_connection(conn: Connection) -> None:
    """Pool check before a connection is handed out: raise if it is broken.

    An idle connection's socket has nothing to read unless the server spoke first, and
    a server that restarts or terminates the backend does exactly that (an error, then
    EOF). So a round trip (`ConnectionPool.check_connection`) is spent only when the
    socket is readable or the connection is already closed; a healthy idle connection
    costs one poll(2) instead of a query, which the receiver would pay on every request.
    """
    if conn.closed:
        raise psycopg.OperationalError("the connection is closed")
    poller = select.poll()
    poller.register(conn.fileno(), select.POLLIN)
    if poller.poll(0):
        ConnectionPool.check_connection(conn)


class Database:
    """A small pool of autocommit connections (rows as dicts).

    Statements run in autocommit unless the caller opens `conn.transaction()`; a single
    statement with CTEs is already atomic, which keeps the hot path to one round trip.
    """

    def __init__(self, conninfo: str, *, max_size: int = 4, timeout: float = 3.0) -> None:
        self.conninfo = conninfo
        self._timeout = timeout
        self.pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max(1, max_size),
            kwargs={"autocommit": True, "row_factory": dict_row, "connect_timeout": 3},
            # A connection broken by a database restart is replaced before it is handed out.
            check=check_idle_connection,
            timeout=timeout,
            reconnect_timeout=0,  # keep trying in the background; callers see 503 meanwhile
            open=False,
            name="hookline",
        )
        self.pool.open(wait=False)

    @contextmanager
    def connection(self) -> Iterator[Connection]:
        """A pooled connection; DatabaseUnavailable if Postgres cannot be reached."""
        try:
            with self.pool.connection(timeout=self._timeout) as conn:
                yield conn
        except PoolTimeout as err:
            raise DatabaseUnavailable("database unavailable") from err
        except psycopg.OperationalError as err:
            raise DatabaseUnavailable("database unavailable") from err

    def close(self) -> None:
        """Close every connection of the pool."""
        self.pool.close()


def resolve_conninfo(settings: Settings) -> str:
    """The connection string: DATABASE_URL, else built from the RDS managed secret."""
    if settings.database_url:
        return settings.database_url
    if not settings.database_secret_arn:
        raise RuntimeError("set DATABASE_URL or HOOKLINE_DATABASE_SECRET_ARN")
    from hookline.aws import client  # boto3 only when needed

    raw = client("secretsmanager", settings).get_secret_value(
        SecretId=settings.database_secret_arn
    )["SecretString"]
    secret = json.loads(raw)
    if "url" in secret:
        return str(secret["url"])
    host = settings.database_host or secret["host"]
    return (
        f"postgresql://{quote(secret['username'], safe='')}:{quote(secret['password'], safe='')}"
        f"@{host}:{secret.get('port', 5432)}/{secret.get('dbname', 'postgres')}?sslmode=require"
    )


_factory_lock = threading.Lock()


@lru_cache(maxsize=1)
def _database() -> Database:
    settings = get_settings()
    return Database(
        resolve_conninfo(settings),
        max_size=settings.db_pool_size,
        timeout=settings.db_connect_timeout_seconds,
    )


def get_database() -> Database:
    """The process-wide database, created on first use (once per Lambda container)."""
    with _factory_lock:  # threads of the local runner must not build two pools
        return _database()


def reset_database() -> None:
    """Close the process-wide pool and forget it and the settings (tests, local runner)."""
    with _factory_lock:
        if _database.cache_info().currsize:
            _database().close()
        _database.cache_clear()
    get_settings.cache_clear()
