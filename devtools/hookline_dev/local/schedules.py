"""EventBridge rate rules and the fan-out nudge, for the dev stack.

Locally nothing fires a schedule (moto's rules never fire; see TESTING-WITHOUT-DOCKER.md), so
a `ScheduledRunner` thread invokes a handler every `every` seconds, as a rate rule would. It
can also be nudged: the receiver's nudge after each accepted event (`hookline.nudge`) wakes
the fan-out at once. Runs never overlap, and nudges coalesce: a nudge during a run queues
exactly one more run, however many arrive, so a burst of accepted events costs one or two
runs, not one each (on AWS the fan-out's reserved concurrency plays that part).
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

logger = logging.getLogger("hookline.local")


@dataclass(frozen=True)
class RunnerStats:
    """What a runner has done so far."""

    runs: int = 0
    scheduled: int = 0  # runs started by the timer
    nudged: int = 0  # runs started by a nudge
    errors: int = 0  # runs whose handler raised
    running: bool = False
    last_duration_seconds: float = 0.0


class ScheduledRunner:
    """Calls `run(nudged)` every `every` seconds and whenever nudged, one run at a time."""

    def __init__(self, name: str, run: Callable[[bool], Any], every: float) -> None:
        """`run` is called on the runner's thread with whether a nudge (rather than the timer)
        started it; it may raise (logged, counted)."""
        if every <= 0:
            raise ValueError("the period must be positive")
        self.name = name
        self.every = every
        self._run = run
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._lock = threading.Lock()
        self._stats = RunnerStats()
        self._thread = threading.Thread(target=self._loop, name=f"schedule-{name}", daemon=True)
        self._first_tick = 0.0  # set by start()

    @property
    def stats(self) -> RunnerStats:
        """A snapshot of the counters."""
        with self._lock:
            return self._stats

    def start(self, run_now: bool = False) -> None:
        """Start the timer; with `run_now`, the first tick (a scheduled run) happens at once."""
        self._first_tick = time.monotonic() + (0.0 if run_now else self.every)
        self._thread.start()

    def nudge(self) -> None:
        """Ask for a run as soon as the current one (if any) ends. Never blocks."""
        self._wake.set()

    def stop(self, timeout: float | None = None) -> bool:
        """Stop after the current run (if any); whether the thread ended within `timeout`."""
        self._stopping.set()
        self._wake.set()
        if self._thread.is_alive():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self) -> None:
        next_tick = self._first_tick
        while not self._stopping.is_set():
            if self._wake.wait(max(0.0, next_tick - time.monotonic())):
                self._wake.clear()  # nudges from now on queue the next run
            if self._stopping.is_set():
                break
            # A rate rule fires on its own clock, nudges or not: a run that starts on or after
            # a tick is the tick's (a nudged fan-out run looks at the recent days only, so
            # nudges must not starve the scheduled run); one that overran skips missed ticks.
            ticked = next_tick <= time.monotonic()
            while next_tick <= time.monotonic():
                next_tick += self.every
            self._invoke(not ticked)

    def _invoke(self, nudged: bool) -> None:
        with self._lock:
            self._stats = replace(self._stats, running=True)
        began = time.monotonic()
        failed = False
        try:
            self._run(nudged)
        except Exception:
            failed = True
            logger.exception("scheduled %s run failed", self.name)
        with self._lock:
            s = self._stats
            self._stats = replace(
                s,
                runs=s.runs + 1,
                nudged=s.nudged + int(nudged),
                scheduled=s.scheduled + int(not nudged),
                errors=s.errors + int(failed),
                running=False,
                last_duration_seconds=time.monotonic() - began,
            )


def scheduled_event(rule: str, region: str = "us-east-1") -> dict[str, Any]:
    """The event an EventBridge rate rule delivers to its target function."""
    return {
        "version": "0",
        "id": str(uuid.uuid4()),
        "detail-type": "Scheduled Event",
        "source": "aws.events",
        "account": "000000000000",
        "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "region": region,
        "resources": [f"arn:aws:events:{region}:000000000000:rule/{rule}"],
        "detail": {},
    }
