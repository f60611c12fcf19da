"""The retry policy: how an attempt's result is classified and when the next one runs.

The schedule is Standard Webhooks': immediately, 5 s, 5 min, 30 min, 2 h, 5 h,
10 h, 14 h, 20 h, 24 h, each with ±20 % jitter so that a recovering endpoint
is not hit by every delayed delivery at the same second. Past the end of the
schedule the last step repeats. A delivery whose next attempt would fall after
its deadline (72 h after it was created, configurable) is dead.

This module is the one statement of the schedule, the jitter and the deadline: the
deployment configuration's defaults (`hookline.config`) are built from the constants
below, and `hookline.runtime.retry_policy` builds the policy from that configuration.

`Retry-After` is honoured on 429 and 503, clamped between the scheduled delay
and twice it: an endpoint may slow us down, but not speed us up, and not park
a delivery for days.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import field
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Literal

from hookline.draws import draws
from hookline.records import frozen

DEFAULT_SCHEDULE: tuple[timedelta, ...] = (
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
)
DEFAULT_DEADLINE = timedelta(hours=72)
DEFAULT_JITTER = 0.2  # ±20 %
# Statuses whose Retry-After header is honoured.
RETRY_AFTER_STATUSES = frozenset({429, 503})
# 4xx statuses that say "try again later" rather than "this request is wrong".
_RETRYABLE_4XX = frozenset({408, 425, 429})


class Outcome(StrEnum):
    """What one attempt's result means for the delivery."""

    DELIVERED = "delivered"  # 2xx
    RETRY = "retry"  # try again later
    FAILED = "failed"  # give up on this delivery
    GONE = "gone"  # 410: give up and disable the endpoint


@frozen
class RetryDecision:
    """When a failed delivery runs next, or that it is dead."""

    kind: Literal["retry", "dead"]
    at: datetime | None  # when the next attempt is due; None when dead
    delay: timedelta | None  # `at - now`; None when dead


@frozen
class RetryPolicy:
    """Schedule, jitter and deadline of deliveries; pure, so every caller agrees."""

    schedule: tuple[timedelta, ...] = DEFAULT_SCHEDULE
    jitter: float = DEFAULT_JITTER  # each delay is scaled by a factor in [1 - jitter, 1 + jitter)
    deadline: timedelta = DEFAULT_DEADLINE
    retry_after_max_factor: float = 2.0  # Retry-After is capped at this times the delay
    # Returns a float in [0, 1); injectable so tests can pin the jitter.
    random: Callable[[], float] = field(default=draws.random, repr=False, compare=False)

    def __post_init__(self) -> None:
        """Refuse a policy that could never schedule sensibly."""
        if not self.schedule:
            raise ValueError("retry schedule must have at least one step")
        if any(step < timedelta(0) for step in self.schedule):
            raise ValueError("retry schedule steps must not be negative")
        if not 0 <= self.jitter < 1:
            raise ValueError("jitter must be in [0, 1)")
        if self.deadline <= timedelta(0):
            raise ValueError("deadline must be positive")
        if self.retry_after_max_factor < 1:
            raise ValueError("retry_after_max_factor must be at least 1")

    def deadline_for(self, created_at: datetime) -> datetime:
        """When a delivery created at `created_at` is given up on."""
        return created_at + self.deadline

    def next_delay(self, attempt_number: int, retry_after: float | None = None) -> timedelta:
        """The wait before the next attempt, given how many attempts were already made.

        `retry_after` (seconds, from the endpoint) replaces the jittered delay
        when it lies between that delay and `retry_after_max_factor` times it;
        outside it is clamped to the nearer bound.
        """
        if attempt_number < 0:
            raise ValueError("attempt_number must not be negative")
        step = self.schedule[min(attempt_number, len(self.schedule) - 1)]
        scale = 1 + self.jitter * (2 * self.random() - 1)
        delay = step * scale
        if retry_after is None:
            return delay
        asked = timedelta(seconds=max(retry_after, 0.0))
        return min(max(asked, delay), delay * self.retry_after_max_factor)

    def classify(
        self, status: int | None, error: str | None, *, retry_4xx: bool = False
    ) -> Outcome:
        """What an attempt's result means; see `classify`."""
        return classify(status, error, retry_4xx=retry_4xx)

    def next_attempt(
        self,
        attempt_count: int,
        created_at: datetime,
        now: datetime,
        deadline_at: datetime | None,
        status: int | None,
        retry_after: float | None = None,
    ) -> RetryDecision:
        """Decide when a delivery whose last attempt should be retried runs next.

        Call it after `classify` returned RETRY. `attempt_count` counts the
        attempts made so far, the one that just failed included; `deadline_at`
        is the delivery's deadline (`created_at + deadline` when None).
        `retry_after` is the parsed header, honoured only for 429 and 503.
        The delivery is dead when the next attempt would fall past the deadline.
        """
        deadline = deadline_at if deadline_at is not None else self.deadline_for(created_at)
        honoured = retry_after if status in RETRY_AFTER_STATUSES else None
        delay = self.next_delay(attempt_count, honoured)
        at = now + delay
        if at > deadline:
            return RetryDecision(kind="dead", at=None, delay=None)
        return RetryDecision(kind="retry", at=at, delay=delay)


def classify(status: int | None, error: str | None, *, retry_4xx: bool = False) -> Outcome:
    """What one attempt's result means for the delivery.

    * no status (network error, timeout, refused connection): RETRY;
    * 2xx: DELIVERED;
    * 410: GONE — the endpoint says it no longer exists and is disabled;
    * 408, 425, 429 and 5xx: RETRY;
    * other 4xx: FAILED, or RETRY when the endpoint opted in with `retry_4xx`;
    * 3xx: FAILED — redirects are never followed (SSRF), so it cannot succeed;
    * anything else (1xx as final, >= 600): RETRY, the endpoint misbehaved,
      perhaps briefly.

    `error` describes a failure without a status; it does not change the outcome.
    """
    del error  # carried for the caller's records; the status alone decides
    if status is None:
        return Outcome.RETRY
    if 200 <= status < 300:
        return Outcome.DELIVERED
    if status == 410:
        return Outcome.GONE
    if 300 <= status < 400:
        return Outcome.FAILED
    if 400 <= status < 500:
        if status in _RETRYABLE_4XX or retry_4xx:
            return Outcome.RETRY
        return Outcome.FAILED
    return Outcome.RETRY


def parse_retry_after(value: str | None, now: datetime) -> float | None:
    """Seconds to wait from a `Retry-After` header, or None when absent or unreadable.

    Both forms of RFC 9110 are read: delay-seconds (`120`) and an HTTP-date
    (`Wed, 21 Oct 2015 07:28:00 GMT`, and the obsolete RFC 850 and asctime
    forms). A date in the past means 0. `now` should be timezone-aware; a naive
    `now` is taken as UTC, as is a date without a zone.
    """
    if value is None:
        return None
    text = value.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return float(int(text))
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    return max((when - now).total_seconds(), 0.0)
