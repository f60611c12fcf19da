"""The dev stack's schedules: rate rules fire on their clock, nudges coalesce, no overlap."""

from __future__ import annotations

import threading
import time

import pytest

from hookline_dev.local.schedules import ScheduledRunner, scheduled_event

pytestmark = pytest.mark.unit


class SlowRun:
    """A run that takes `seconds` and records overlaps."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.calls: list[bool] = []
        self.active = 0
        self.max_active = 0
        self.started = threading.Event()
        self.lock = threading.Lock()

    def __call__(self, nudged: bool) -> None:
        with self.lock:
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            self.calls.append(nudged)
        self.started.set()
        time.sleep(self.seconds)
        with self.lock:
            self.active -= 1


def test_nudges_during_a_run_coalesce_into_one_more_run() -> None:
    # Given a fan-out run in progress (the timer is far away)
    run = SlowRun(0.3)
    runner = ScheduledRunner("fanout", run, every=3600)
    runner.start(run_now=True)
    assert run.started.wait(2)
    # When fifty accepted events nudge it meanwhile
    for _ in range(50):
        runner.nudge()
    time.sleep(1.0)
    runner.stop(timeout=5)
    # Then exactly one more run followed, and no two runs overlapped (the first was the
    # timer's, started at once)
    assert run.calls == [False, True]
    assert run.max_active == 1
    assert runner.stats.runs == 2 and runner.stats.nudged == 1


def test_the_timer_fires_every_period_without_nudges() -> None:
    run = SlowRun(0.0)
    runner = ScheduledRunner("reconcile", run, every=0.1)
    runner.start()
    time.sleep(0.55)
    runner.stop(timeout=5)
    assert 4 <= len(run.calls) <= 6
    assert not any(run.calls)  # all started by the timer


def test_a_stream_of_nudges_does_not_starve_the_timers_runs() -> None:
    # Given a runner whose period is 0.2 s
    run = SlowRun(0.01)
    runner = ScheduledRunner("fanout", run, every=0.2)
    began = time.monotonic()
    runner.start()
    # When it is nudged every 10 ms for a second
    for _ in range(100):
        runner.nudge()
        time.sleep(0.01)
    runner.stop(timeout=5)
    periods = (time.monotonic() - began) / 0.2
    # Then most runs were nudged ones, and the timer's still came once a period (a nudged
    # fan-out run looks at the recent days only: the scheduled one reads every day)
    assert run.calls.count(True) > 20
    assert periods - 2 <= run.calls.count(False) <= periods + 1


def test_a_failing_run_is_counted_and_the_schedule_goes_on() -> None:
    calls: list[bool] = []

    def broken(nudged: bool) -> None:
        calls.append(nudged)
        raise RuntimeError("boom")

    runner = ScheduledRunner("fanout", broken, every=0.05)
    runner.start()
    time.sleep(0.3)
    runner.stop(timeout=5)
    assert len(calls) >= 3
    assert runner.stats.errors == len(calls)


def test_stop_waits_for_the_current_run() -> None:
    run = SlowRun(0.4)
    runner = ScheduledRunner("fanout", run, every=3600)
    runner.start(run_now=True)
    assert run.started.wait(2)
    began = time.monotonic()
    assert runner.stop(timeout=5)
    assert time.monotonic() - began >= 0.3
    assert run.active == 0


def test_scheduled_events_look_like_eventbridge_ones() -> None:
    event = scheduled_event("hookline-fanout", "eu-west-1")
    assert event["source"] == "aws.events" and event["detail-type"] == "Scheduled Event"
    assert event["resources"] == ["arn:aws:events:eu-west-1:000000000000:rule/hookline-fanout"]
