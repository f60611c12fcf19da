"""Connections to Postgres: one pool per process, built once, with driver errors
translated to domain errors at this edge."""

from __future__ import annotations

import json
import select
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from hookline.errors import DatabaseUnavailable
from hookline.settings import Settings, get_settings

Connection = psycopg.Connection[Any]
T = TypeVar("T")


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


class Credentials(Protocol):
    """Where a new connection's connection string comes from (docs/decisions/0033)."""

    # Behind RDS Proxy: no statement may pin the session (no automatic named prepares).
    proxied: bool

    def conninfo(self) -> str:
        """The connection string for the next new connection."""
        ...

    def refresh(self) -> None:
        """Re-read the credentials after an authentication failure."""
        ...


class StaticCredentials:
    """A fixed connection string (DATABASE_URL): nothing to re-read."""

    def __init__(self, conninfo: str, *, proxied: bool = False) -> None:
        self._conninfo = conninfo
        self.proxied = proxied

    def conninfo(self) -> str:
        """The one connection string."""
        return self._conninfo

    def refresh(self) -> None:
        """Nothing to re-read."""


class SecretCredentials:
    """A password kept in a Secrets Manager secret (RDS managed, rotated): read once, and
    again when Postgres refuses it — after a rotation, the next new connection re-reads
    the secret instead of failing until the container dies."""

    def __init__(
        self,
        read_secret: Callable[[], str],
        *,
        host: str | None = None,
        dbname: str = "postgres",
        sslmode: str = "require",
        proxied: bool = False,
    ) -> None:
        self._read = read_secret
        self._host = host
        # An RDS-managed secret holds the user and password only (decision 0062).
        self._dbname = dbname
        self._sslmode = sslmode
        self.proxied = proxied
        self._lock = threading.Lock()
        self._current: str | None = None

    def conninfo(self) -> str:
        """The connection string from the secret as last read."""
        with self._lock:
            if self._current is None:
                self._current = self._build()
            return self._current

    def refresh(self) -> None:
        """Read the secret again."""
        fresh = self._build()
        with self._lock:
            self._current = fresh

    def _build(self) -> str:
        secret = json.loads(self._read())
        if "url" in secret:
            return str(secret["url"])
        host = self._host or secret["host"]
        return (
            f"postgresql://{quote(secret['username'], safe='')}:"
            f"{quote(secret['password'], safe='')}@{host}:{secret.get('port', 5432)}/"
            f"{secret.get('dbname', self._dbname)}?sslmode={self._sslmode}"
        )


class IamCredentials:
    """RDS Proxy IAM authentication: a fresh token (`generate_db_auth_token`, signed locally,
    valid 15 minutes) for every new connection; no password in the function at all.

    The proxy's certificate is issued through ACM and chains to Amazon Trust Services' public
    roots (Amazon Root CA 1), which certifi's Mozilla bundle holds: `verify-full` checks the
    chain and the endpoint's name (a wildcard certificate), so a token is never handed to an
    impostor. The instance's own RDS CA is not involved (docs/operations.md)."""

    proxied = True

    def __init__(
        self, token: Callable[[], str], *, host: str, port: int, user: str, dbname: str
    ) -> None:
        import certifi  # httpx's dependency: already in the layer

        self._token = token
        self._host = host
        self._port = port
        self._user = user
        self._dbname = dbname
        self._rootcert = certifi.where()

    def conninfo(self) -> str:
        """A connection string whose password is a token signed now."""
        return psycopg.conninfo.make_conninfo(
            host=self._host,
            port=self._port,
            user=self._user,
            dbname=self._dbname,
            password=self._token(),
            sslmode="verify-full",
            sslrootcert=self._rootcert,
        )

    def refresh(self) -> None:
        """Every new connection signs a new token already: nothing to re-read."""


def is_authentication_failure(err: psycopg.OperationalError) -> bool:
    """Whether Postgres (or the proxy) refused the credentials, as opposed to being
    unreachable: only then is re-reading the secret worth a try."""
    if err.sqlstate in ("28P01", "28000"):  # invalid_password, invalid_authorization
        return True
    return "authentication failed" in str(err)


def connect_refreshing(credentials: Credentials, connect: Callable[[str], T]) -> T:
    """`connect(conninfo)`, and once more with re-read credentials if they were refused and
    are not the ones just refused (another connection may have re-read them meanwhile)."""
    used = credentials.conninfo()
    try:
        return connect(used)
    except psycopg.OperationalError as err:
        if not is_authentication_failure(err):
            raise
        credentials.refresh()
        fresh = credentials.conninfo()
        if fresh == used:
            raise
        return connect(fresh)


def _connection_class(credentials: Credentials) -> type[psycopg.Connection[Any]]:
    """A connection class whose `connect` (called by the pool for each new connection)
    takes its connection string from `credentials`, re-reading them once on refusal."""

    class RefreshingConnection(psycopg.Connection[Any]):
        @classmethod
        def connect(  # type: ignore[override]
            cls, conninfo: str = "", **kwargs: Any
        ) -> psycopg.Connection[Any]:
            def attempt(current: str) -> psycopg.Connection[Any]:
                return super(RefreshingConnection, cls).connect(current, **kwargs)

            return connect_refreshing(credentials, attempt)

    return RefreshingConnection


class Database:
    """A small pool of autocommit connections (rows as dicts).

    Statements run in autocommit unless the caller opens `conn.transaction()`; a single
    statement with CTEs is already atomic, which keeps the hot path to one round trip.
    Behind RDS Proxy, psycopg's automatic server-side prepares are off: a named prepared
    statement pins the session to one database connection (decision 0036).
    """

    def __init__(
        self,
        conninfo: str | Credentials,
        *,
        max_size: int = 4,
        timeout: float = 3.0,
    ) -> None:
        credentials = StaticCredentials(conninfo) if isinstance(conninfo, str) else conninfo
        self.credentials = credentials
        self._timeout = timeout
        kwargs: dict[str, Any] = {
            "autocommit": True,
            "row_factory": dict_row,
            "connect_timeout": 3,
        }
        if credentials.proxied:
            kwargs["prepare_threshold"] = None
        self.pool = ConnectionPool(
            "",
            connection_class=_connection_class(credentials),
            min_size=1,
            max_size=max(1, max_size),
            kwargs=kwargs,
            # A connection broken by a database restart is replaced before it is handed out.
            check=check_idle_connection,
            timeout=timeout,
            # A connection that fails is tried once more, then left to the next caller, who
            # gets a 503 meanwhile: no retry loop in the background against a database
            # that is down (each caller waiting for a connection starts a new attempt).
            reconnect_timeout=0,
            open=False,
            name="hookline",
        )
        self.pool.open(wait=False)

    @property
    def proxied(self) -> bool:
        """Whether connections go through RDS Proxy (no statement may pin a session)."""
        return self.credentials.proxied

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


def credentials_for(settings: Settings) -> Credentials:
    """How this process authenticates: DATABASE_URL; else IAM to RDS Proxy
    (HOOKLINE_DATABASE_IAM_USER); else the RDS managed secret, re-read after a rotation."""
    if settings.database_url:
        return StaticCredentials(settings.database_url, proxied=settings.database_proxied)
    from hookline.aws import client  # boto3 only when needed

    if settings.database_iam_user:
        if not settings.database_host:
            raise RuntimeError("HOOKLINE_DATABASE_IAM_USER needs HOOKLINE_DATABASE_HOST")
        host, port, user = (
            settings.database_host,
            settings.database_port,
            settings.database_iam_user,
        )
        rds = client("rds", settings)

        def token() -> str:
            return str(
                rds.generate_db_auth_token(
                    DBHostname=host, Port=port, DBUsername=user, Region=settings.aws_region
                )
            )

        return IamCredentials(token, host=host, port=port, user=user, dbname=settings.database_name)
    if not settings.database_secret_arn:
        raise RuntimeError(
            "set DATABASE_URL, HOOKLINE_DATABASE_IAM_USER or HOOKLINE_DATABASE_SECRET_ARN"
        )
    arn = settings.database_secret_arn

    def read_secret() -> str:
        answer = client("secretsmanager", settings).get_secret_value(SecretId=arn)
        return str(answer["SecretString"])

    return SecretCredentials(
        read_secret,
        host=settings.database_host,
        dbname=settings.database_name,
        sslmode=settings.database_sslmode,
        proxied=settings.database_proxied,
    )


def resolve_conninfo(settings: Settings) -> str:
    """A connection string for one-off connections (the CLI, migrations)."""
    return credentials_for(settings).conninfo()


_factory_lock = threading.Lock()


@lru_cache(maxsize=1)
def _database() -> Database:
    settings = get_settings()
    return Database(
        credentials_for(settings),
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
