"""The dev stack's cross-process nudge (decision 0022): a process that does not run the
fan-out NOTIFYs after an accept, and the fan-out process's listener wakes its runner — through
terminated connections and outages."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql

import hookline
from hookline.db import Database, reset_database
from hookline.nudge import LOCAL_NUDGE_CHANNEL, nudge_fanout, set_local_nudger
from hookline.settings import Settings, get_settings
from hookline_dev.local.listener import APPLICATION_NAME, FanoutListener
from tests.support.postgres import backend_pids

pytestmark = pytest.mark.integration


class Wakes:
    """Counts wake-ups, as a ScheduledRunner's nudge would receive them."""

    def __init__(self) -> None:
        self.count = 0
        self._changed = threading.Condition()

    def __call__(self) -> None:
        with self._changed:
            self.count += 1
            self._changed.notify_all()

    def wait_for(self, count: int, timeout: float = 5.0) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: self.count >= count, timeout)


def wait_until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.fixture
def listening(database_url: str) -> Iterator[tuple[FanoutListener, Wakes]]:
    """A listener on this test's database, listening."""
    wakes = Wakes()
    listener = FanoutListener(database_url, wakes, backoff_seconds=(0.05, 0.2))
    listener.start()
    try:
        wait_until(lambda: listener.stats.listening)
        yield listener, wakes
    finally:
        assert listener.stop(timeout=5), "the listener did not stop"


def notify(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT pg_notify(%s, '')", (LOCAL_NUDGE_CHANNEL,))


def listener_pids(admin_url: str, dbname: str) -> list[int]:
    return backend_pids(admin_url, dbname, APPLICATION_NAME)


def test_a_local_process_without_the_fanout_nudges_it_through_postgres(
    database_url: str,
    listening: tuple[FanoutListener, Wakes],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a listener, and a local process (the CLI, a front role) that runs no fan-out
    _, wakes = listening
    monkeypatch.setenv("DATABASE_URL", database_url)
    reset_database()
    set_local_nudger(None)
    try:
        # When that process nudges after an accept
        nudge_fanout(Settings(database_url=database_url, local_mode=True))
        # Then the listener is woken at once
        assert wakes.wait_for(1, timeout=3), "the NOTIFY did not reach the listener"
        # And a process that is not local (on AWS: no fan-out function means no nudge at
        # all; with one, the Lambda invoke) sends no NOTIFY
        nudge_fanout(Settings(database_url=database_url, local_mode=False))
        time.sleep(0.5)
        assert wakes.count == 1
    finally:
        reset_database()


def test_the_listener_comes_back_after_its_connection_is_terminated(
    pg_admin_url: str, database_url: str, listening: tuple[FanoutListener, Wakes]
) -> None:
    # Given a listening listener
    listener, wakes = listening
    dbname = str(psycopg.conninfo.conninfo_to_dict(database_url)["dbname"])
    [first] = listener_pids(pg_admin_url, dbname)
    # When an operator (or a Postgres restart) ends its connection
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(%s)", (first,))
    # Then it listens again on a new connection, and wakes the runner once for whatever was
    # notified while nobody listened
    wait_until(lambda: listener.stats.connects == 2 and listener.stats.listening)
    assert wakes.wait_for(1)
    assert listener_pids(pg_admin_url, dbname) not in ([], [first])
    # And a later notification wakes it again
    notify(database_url)
    assert wakes.wait_for(2), "no wake-up after the reconnect"


def test_an_outage_is_logged_once_and_never_stops_the_listener(
    pg_admin_url: str,
    database_url: str,
    listening: tuple[FanoutListener, Wakes],
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Given a listening listener
    listener, wakes = listening
    dbname = str(psycopg.conninfo.conninfo_to_dict(database_url)["dbname"])
    ident = sql.Identifier(dbname)
    caplog.set_level(logging.INFO, logger="hookline.local")
    # When its database refuses every connection for a while (many reconnection attempts)
    with psycopg.connect(pg_admin_url, autocommit=True) as admin:
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(ident))
        try:
            for pid in listener_pids(pg_admin_url, dbname):
                admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
            time.sleep(1.5)  # backoff 0.05..0.2 s: several attempts fail meanwhile
            assert not listener.stats.listening
        finally:
            admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(ident))
    # Then once it is back the listener listens again and wakes the runner
    wait_until(lambda: listener.stats.listening)
    assert wakes.wait_for(1)
    notify(database_url)
    assert wakes.wait_for(2)
    # And the outage was one warning (and one line when it ended), not one per attempt
    lost = [r for r in caplog.records if "lost its Postgres connection" in r.message]
    back = [r for r in caplog.records if "listening on" in r.message and "again" in r.message]
    assert len(lost) == 1 and len(back) == 1, [r.message for r in caplog.records]
    assert listener.stats.outages == 1


@pytest.fixture
def local_settings(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process as a local producer (the dev stack's `--print-env`): local mode, no
    fan-out function, no fan-out of its own."""
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.delenv("HOOKLINE_FANOUT_FUNCTION", raising=False)
    get_settings.cache_clear()
    set_local_nudger(None)
    yield
    get_settings.cache_clear()


def test_publishing_in_the_producers_transaction_wakes_the_fanout_when_it_commits(
    db: Database, tenant: dict[str, str], listening: tuple[FanoutListener, Wakes], local_settings
) -> None:
    # Given a producer writing an event inside its own transaction (the outbox pattern)
    _, wakes = listening
    with db.connection() as conn:
        with conn.transaction():
            hookline.publish(conn, tenant_id=tenant["id"], type="order.paid", payload={"n": 1})
            # Then nothing wakes the fan-out while the transaction is open (nothing to find)
            time.sleep(0.5)
            assert wakes.count == 0
        # And it is woken once the transaction commits
        assert wakes.wait_for(1, timeout=3), "the commit did not wake the fan-out"


def test_a_rolled_back_publish_wakes_nothing(
    db: Database, tenant: dict[str, str], listening: tuple[FanoutListener, Wakes], local_settings
) -> None:
    # Given a producer whose transaction publishes and then fails
    _, wakes = listening
    with pytest.raises(RuntimeError), db.connection() as conn, conn.transaction():
        hookline.publish(conn, tenant_id=tenant["id"], type="order.paid", payload={"n": 1})
        raise RuntimeError("the business write failed")
    # Then the event never existed, and the fan-out was not woken for it
    time.sleep(0.5)
    assert wakes.count == 0
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM events").fetchone()["n"] == 0


def test_hookline_nudge_fanout_wakes_the_fanout_from_a_producer(
    database_url: str,
    listening: tuple[FanoutListener, Wakes],
    local_settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Given a producer process pointed at the dev stack's database
    _, wakes = listening
    monkeypatch.setenv("DATABASE_URL", database_url)
    get_settings.cache_clear()
    reset_database()
    try:
        # When it calls the public nudge after its own commit
        hookline.nudge_fanout()
        # Then the fan-out is woken
        assert wakes.wait_for(1, timeout=3)
    finally:
        reset_database()
