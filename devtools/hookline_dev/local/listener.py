"""The cross-process fan-out nudge of the dev stack: Postgres LISTEN/NOTIFY.

On AWS a nudge is an asynchronous Lambda invoke, whoever sends it. Locally the process that
runs the fan-out schedule wakes it in-process, but an event published by another process (the
CLI, a producer service, the `front` role of `hookline dev --role`) used to wait for the
schedule. Such a process sends `NOTIFY hookline_fanout` (`hookline.nudge`), and the process
that runs the fan-out holds a `FanoutListener`: one dedicated connection on its own thread,
`LISTEN`ing on the channel, which wakes the runner on every notification (the runner coalesces
them). See docs/decisions/0022-local-nudge-over-listen-notify.md.

The listener survives Postgres restarts and terminated backends: it reconnects with backoff,
logs once when the connection is lost and once when it listens again, and wakes the runner
after each reconnect (a notification sent while nobody listened is gone). It never raises
into the dev stack.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import psycopg
from psycopg import sql

from hookline.nudge import LOCAL_NUDGE_CHANNEL

logger = logging.getLogger("hookline.local")

APPLICATION_NAME = "hookline-fanout-listener"  # how pg_stat_activity shows the connection


@dataclass(frozen=True)
class ListenerStats:
    """What a listener has done so far."""

    connects: int = 0  # successful LISTENs, the first one included
    notifications: int = 0
    outages: int = 0  # times the connection was lost (or could not be made)
    listening: bool = False


class FanoutListener:
    """LISTENs on `channel` on a connection of its own and calls `wake()` for each
    notification, reconnecting (with backoff) whenever the connection is lost."""

    def __init__(
        self,
        conninfo: str,
        wake: Callable[[], None],
        *,
        channel: str = LOCAL_NUDGE_CHANNEL,
        poll_seconds: float = 0.5,
        backoff_seconds: tuple[float, float] = (0.1, 2.0),
        connect_timeout: int = 3,
    ) -> None:
        """`wake` must not block (a `ScheduledRunner.nudge`); `poll_seconds` bounds how long
        `stop()` waits for the thread; `backoff_seconds` is the first and the longest wait
        between reconnection attempts (doubling in between)."""
        self.conninfo = conninfo
        self.channel = channel
        self._wake = wake
        self._poll = poll_seconds
        self._backoff = backoff_seconds
        self._connect_timeout = connect_timeout
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._stats = ListenerStats()
        self._thread = threading.Thread(target=self._loop, name="fanout-listener", daemon=True)

    @property
    def stats(self) -> ListenerStats:
        """A snapshot of the counters."""
        with self._lock:
            return self._stats

    def start(self) -> None:
        """Start listening on the listener's thread (returns at once)."""
        self._thread.start()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop listening; whether the thread ended within `timeout`."""
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _count(self, **changes: int | bool) -> None:
        with self._lock:
            s = self._stats
            self._stats = replace(
                s,
                connects=s.connects + int(changes.get("connects", 0)),
                notifications=s.notifications + int(changes.get("notifications", 0)),
                outages=s.outages + int(changes.get("outages", 0)),
                listening=bool(changes.get("listening", s.listening)),
            )

    def _loop(self) -> None:
        delay = self._backoff[0]
        lost_at: float | None = None  # when the current outage began; None: no outage
        while not self._stopping.is_set():
            try:
                conn = psycopg.connect(
                    self.conninfo,
                    autocommit=True,
                    connect_timeout=self._connect_timeout,
                    application_name=APPLICATION_NAME,
                )
            except Exception as err:  # never let the thread die: retry after a while
                lost_at = self._lost(lost_at, err)
                self._stopping.wait(delay)
                delay = min(delay * 2, self._backoff[1])
                continue
            try:
                conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))
                reconnected = self.stats.connects > 0
                self._count(connects=1, listening=True)
                delay = self._backoff[0]
                if lost_at is not None:
                    logger.info(
                        "fan-out listener: listening on %s again after %.1f s",
                        self.channel,
                        time.monotonic() - lost_at,
                    )
                    lost_at = None
                if reconnected:
                    self._wake()  # whatever was notified while nobody listened is gone
                self._listen(conn)
            except Exception as err:
                lost_at = self._lost(lost_at, err)
                self._stopping.wait(delay)
                delay = min(delay * 2, self._backoff[1])
            finally:
                self._count(listening=False)
                conn.close()

    def _listen(self, conn: psycopg.Connection[tuple[object, ...]]) -> None:
        while not self._stopping.is_set():
            for _ in conn.notifies(timeout=self._poll):
                self._count(notifications=1)
                self._wake()
                if self._stopping.is_set():
                    return

    def _lost(self, lost_at: float | None, err: BaseException) -> float:
        """Log the first failure of an outage only; when the outage began."""
        if lost_at is not None:
            return lost_at
        self._count(outages=1)
        logger.warning(
            "fan-out listener lost its Postgres connection (%s); reconnecting — until then "
            "events published by other processes wait for the fan-out schedule",
            str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__,
        )
        return time.monotonic()
