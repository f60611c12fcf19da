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

from hookline.db import reset_database
from hookline.local.listener import APPLICATION_NAME, FanoutListener
from hookline.nudge import LOCAL_NUDGE_CHANNEL, nudge_fanout, set_local_nudger
from hookline.settings import Settings

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
    with psycopg.connect(admin_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
            (dbname, APPLICATION_NAME),
        ).fetchall()
    return [r[0] for r in rows]


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
