"""The retry policy: schedule, jitter, Retry-After, deadline and classification — of the policy
the deliver function runs, as the runtime builds it from the deployment configuration."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hookline.config import HooklineConfig
from hookline.retry import (
    DEFAULT_SCHEDULE,
    Outcome,
    RetryPolicy,
    classify,
    parse_retry_after,
)
from hookline.runtime import retry_policy

pytestmark = pytest.mark.unit

NOW = datetime(2025, 3, 1, 12, 0, 0, tzinfo=UTC)


def runtime_policy(config: HooklineConfig | None = None, **changes: Any) -> RetryPolicy:
    """The policy production runs: built by the runtime from a deployment's configuration
    (the default one unless given), with `changes` (a pinned random source) applied."""
    return replace(retry_policy(config or HooklineConfig()), **changes)


def no_jitter() -> RetryPolicy:
    # random() == 0.5 puts the jitter factor at exactly 1.
    return runtime_policy(random=lambda: 0.5)


# --- schedule -------------------------------------------------------------------------


def test_the_schedule_is_the_standard_webhooks_one() -> None:
    # Given a policy without jitter
    policy = no_jitter()
    # When the delays after 0..9 attempts are asked for
    delays = [policy.next_delay(n) for n in range(10)]
    # Then they follow immediately, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h
    assert delays == [
        timedelta(0),
        timedelta(seconds=5),
        timedelta(minutes=5),
        timedelta(minutes=30),
        timedelta(hours=2),
        timedelta(hours=5),
        timedelta(hours=10),
        timedelta(hours=14),
        timedelta(hours=20),
        timedelta(hours=24),
    ]


def test_after_the_schedule_runs_out_the_last_step_repeats() -> None:
    policy = no_jitter()
    assert policy.next_delay(10) == timedelta(hours=24)
    assert policy.next_delay(50) == timedelta(hours=24)


def test_jitter_stays_within_twenty_percent_over_many_draws() -> None:
    # Given a policy with real (seeded) randomness
    policy = runtime_policy(random=random.Random(7).random)
    for attempts, step in enumerate(DEFAULT_SCHEDULE[1:], start=1):
        # When the delay is drawn many times
        draws = [policy.next_delay(attempts) for _ in range(500)]
        # Then every draw is within ±20 % of the step
        assert all(step * 0.8 <= d <= step * 1.2 for d in draws)
        # And the draws actually spread (receivers are not hit in lockstep)
        assert max(draws) - min(draws) > step * 0.3


def test_jitter_bounds_are_reached_at_the_extremes_of_random() -> None:
    step = timedelta(minutes=5)
    assert runtime_policy(random=lambda: 0.0).next_delay(2) == step * 0.8
    assert runtime_policy(random=lambda: 0.999999).next_delay(2) == pytest.approx(
        step * 1.2, rel=1e-5
    )


def test_a_negative_attempt_number_is_a_bug() -> None:
    with pytest.raises(ValueError):
        no_jitter().next_delay(-1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"schedule": ()},
        {"schedule": (timedelta(seconds=-1),)},
        {"jitter": 1.0},
        {"jitter": -0.1},
        {"deadline": timedelta(0)},
        {"retry_after_max_factor": 0.5},
    ],
)
def test_a_nonsensical_policy_is_refused(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**kwargs)  # type: ignore[arg-type]


# --- Retry-After ----------------------------------------------------------------------


def test_retry_after_within_the_window_is_honoured_exactly() -> None:
    # Given the scheduled delay after 2 attempts is 5 min
    # When the endpoint asks for 7 minutes
    delay = no_jitter().next_delay(2, retry_after=420)
    # Then it gets 7 minutes
    assert delay == timedelta(minutes=7)


def test_retry_after_cannot_make_us_retry_sooner_than_scheduled() -> None:
    # Given the scheduled delay after 2 attempts is 5 min
    # When the endpoint asks for 1 second (or a negative value)
    # Then the schedule wins
    assert no_jitter().next_delay(2, retry_after=1) == timedelta(minutes=5)
    assert no_jitter().next_delay(2, retry_after=-30) == timedelta(minutes=5)


def test_retry_after_is_capped_at_twice_the_scheduled_delay() -> None:
    # When the endpoint asks for a day while the schedule says 5 minutes
    # Then the delivery waits 10 minutes, not a day
    assert no_jitter().next_delay(2, retry_after=86_400) == timedelta(minutes=10)


def test_the_retry_after_cap_is_configurable() -> None:
    policy = runtime_policy(random=lambda: 0.5, retry_after_max_factor=3)
    assert policy.next_delay(2, retry_after=86_400) == timedelta(minutes=15)


def test_retry_after_is_honoured_only_on_429_and_503() -> None:
    policy = no_jitter()
    created = NOW - timedelta(minutes=1)
    # Given the endpoint asked for 7 minutes where the schedule says 5
    # Then 429 and 503 get 7 minutes, other failures keep the schedule
    for throttled in (429, 503):
        decision = policy.next_attempt(2, created, NOW, None, throttled, retry_after=420)
        assert decision.delay == timedelta(minutes=7)
    for other in (500, 502, None):
        decision = policy.next_attempt(2, created, NOW, None, other, retry_after=420)
        assert decision.delay == timedelta(minutes=5)


def test_delta_seconds_are_parsed() -> None:
    assert parse_retry_after("120", NOW) == 120.0
    assert parse_retry_after(" 0 ", NOW) == 0.0


def test_an_http_date_is_parsed_relative_to_now() -> None:
    # Given a Retry-After date 90 seconds after now, in each form RFC 9110 allows
    for value in (
        "Sat, 01 Mar 2025 12:01:30 GMT",  # IMF-fixdate
        "Saturday, 01-Mar-25 12:01:30 GMT",  # obsolete RFC 850
        "Sat Mar  1 12:01:30 2025",  # obsolete asctime
    ):
        # Then it means a 90-second wait
        assert parse_retry_after(value, NOW) == 90.0


def test_a_date_in_the_past_means_no_extra_wait() -> None:
    assert parse_retry_after("Sat, 01 Mar 2025 11:00:00 GMT", NOW) == 0.0


@pytest.mark.parametrize("value", [None, "", "soon", "-5", "1.5", "12abc", "٣"])
def test_an_unreadable_retry_after_is_ignored(value: str | None) -> None:
    assert parse_retry_after(value, NOW) is None


# --- deadline -------------------------------------------------------------------------


def test_a_retry_inside_the_deadline_is_scheduled() -> None:
    # Given a delivery created an hour ago that failed its 3rd attempt
    policy = no_jitter()
    created = NOW - timedelta(hours=1)
    # When the next attempt is decided
    decision = policy.next_attempt(3, created, NOW, None, 503)
    # Then it runs in 30 minutes
    assert decision.kind == "retry"
    assert decision.delay == timedelta(minutes=30)
    assert decision.at == NOW + timedelta(minutes=30)


def test_a_retry_that_would_fall_past_the_deadline_makes_the_delivery_dead() -> None:
    # Given a delivery created 71 hours ago (deadline 72 h), next step 24 h
    policy = no_jitter()
    created = NOW - timedelta(hours=71)
    # When its attempt fails again
    decision = policy.next_attempt(9, created, NOW, None, 500)
    # Then it is dead: no next attempt
    assert decision.kind == "dead"
    assert decision.at is None
    assert decision.delay is None


def test_an_explicit_deadline_wins_over_the_policy_default() -> None:
    policy = no_jitter()
    # Deadline 4 minutes away, next step 5 minutes: dead.
    decision = policy.next_attempt(2, NOW, NOW, NOW + timedelta(minutes=4), None)
    assert decision.kind == "dead"
    # Deadline 6 minutes away: retried.
    decision = policy.next_attempt(2, NOW, NOW, NOW + timedelta(minutes=6), None)
    assert decision.kind == "retry"


def test_the_deadline_is_configurable() -> None:
    # Given a deployment configured with a one-hour deadline
    policy = runtime_policy(HooklineConfig(delivery_deadline_hours=1), random=lambda: 0.5)
    # Then the policy the runtime builds keeps deliveries for one hour
    assert policy.deadline_for(NOW) == NOW + timedelta(hours=1)
    assert policy.next_attempt(4, NOW, NOW, None, 500).kind == "dead"  # 2 h > 1 h


def test_the_schedule_and_jitter_are_configurable() -> None:
    # Given a deployment with its own schedule and no jitter
    config = HooklineConfig(retry_schedule_seconds=(0, 60, 600), retry_jitter=0.0)
    policy = runtime_policy(config)
    # Then the runtime's policy follows it, its last step repeating
    assert [policy.next_delay(n) for n in range(4)] == [
        timedelta(0), timedelta(minutes=1), timedelta(minutes=10), timedelta(minutes=10),
    ]  # fmt: skip


def test_following_the_schedule_a_failing_delivery_dies_at_72_hours() -> None:
    # Given an endpoint that always answers 500
    policy = no_jitter()
    created = now = NOW
    attempts = 0
    while True:
        attempts += 1
        decision = policy.next_attempt(attempts, created, now, None, 500)
        if decision.kind == "dead":
            break
        assert decision.at is not None
        now = decision.at
    # Then it is attempted 9 times (the 10th would land at ~75.6 h) and never after 72 h
    assert attempts == 9
    assert now - created <= timedelta(hours=72)


# --- classification -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "outcome"),
    [
        (200, Outcome.DELIVERED),
        (201, Outcome.DELIVERED),
        (204, Outcome.DELIVERED),
        (299, Outcome.DELIVERED),
        (None, Outcome.RETRY),  # network error or timeout
        (408, Outcome.RETRY),
        (425, Outcome.RETRY),
        (429, Outcome.RETRY),
        (500, Outcome.RETRY),
        (502, Outcome.RETRY),
        (503, Outcome.RETRY),
        (599, Outcome.RETRY),
        (400, Outcome.FAILED),
        (401, Outcome.FAILED),
        (403, Outcome.FAILED),
        (404, Outcome.FAILED),
        (422, Outcome.FAILED),
        (301, Outcome.FAILED),  # redirects are never followed
        (302, Outcome.FAILED),
        (307, Outcome.FAILED),
        (410, Outcome.GONE),
        (101, Outcome.RETRY),  # a broken final response
        (600, Outcome.RETRY),
    ],
)
def test_classification_table(status: int | None, outcome: Outcome) -> None:
    assert classify(status, None) is outcome
    assert no_jitter().classify(status, None) is outcome


def test_a_network_error_is_retried_whatever_its_description() -> None:
    assert classify(None, "ConnectTimeout") is Outcome.RETRY
    assert classify(None, None) is Outcome.RETRY


def test_an_endpoint_that_opted_in_gets_other_4xx_retried_but_410_still_disables() -> None:
    assert classify(404, None, retry_4xx=True) is Outcome.RETRY
    assert classify(400, None, retry_4xx=True) is Outcome.RETRY
    assert classify(410, None, retry_4xx=True) is Outcome.GONE
    assert classify(302, None, retry_4xx=True) is Outcome.FAILED
