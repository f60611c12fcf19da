"""The open-loop load bench's own arithmetic: the schedule, reading a response head, and the
verdict on a step (held / queueing / errors) that the published figures rest on."""

from __future__ import annotations

import collections
import itertools

import pytest

from bench.openloop import Step, due_offsets, ladder_summary, parse_head, verdict

pytestmark = pytest.mark.unit

BOUND_MS = 1000.0


def step(
    rate: float,
    ok: int,
    elapsed: float,
    latency_ms: list[float],
    statuses: dict[int, int] | None = None,
    timeouts: int = 0,
) -> Step:
    counts = collections.Counter({200: ok, **(statuses or {})})
    return Step(
        "receiver", rate, elapsed, statuses=counts, timeouts=timeouts,
        latency_ms=latency_ms, elapsed=elapsed,
    )  # fmt: skip


# --- schedule --------------------------------------------------------------------------


def test_requests_are_due_evenly_at_the_offered_rate_whatever_the_answers() -> None:
    # Given an offered rate of 400/s for 2 s
    # When the schedule is made
    due = due_offsets(400, 800)
    # Then request n is due at n / 400 s: 800 requests, 2.5 ms apart, the last at 1.9975 s
    assert len(due) == 800
    assert due[0] == 0
    assert due[1] == pytest.approx(0.0025)
    assert due[-1] == pytest.approx(1.9975)
    assert all(b - a == pytest.approx(0.0025) for a, b in itertools.pairwise(due))


# --- response heads --------------------------------------------------------------------


def test_a_keep_alive_answer_gives_its_status_and_body_length() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 42\r\n\r\n"
    assert parse_head(head) == (200, 42, True)


def test_connection_close_and_http_1_0_are_not_reused() -> None:
    closing = b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 3\r\n\r\n"
    assert parse_head(closing) == (503, 3, False)
    assert parse_head(b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n") == (200, 0, False)
    assert parse_head(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n\r\n") == (200, 0, True)


def test_a_head_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError):
        parse_head(b"SSH-2.0-OpenSSH\r\n\r\n")


# --- verdicts --------------------------------------------------------------------------


def test_a_step_answered_in_full_on_time_is_held() -> None:
    # Given 2,000 requests offered at 100/s, all 200, p99 from schedule 300 ms
    held = step(100, 2000, 20.0, [100.0] * 1970 + [300.0] * 30)
    # Then it is held
    assert verdict(held, BOUND_MS) == "held"


def test_a_step_whose_p99_from_schedule_exceeds_the_bound_is_queueing() -> None:
    # Given every request answered 200 but the slowest 2 % after 1.5 s (the p99 lands there)
    late = step(100, 2000, 20.0, [100.0] * 1960 + [1500.0] * 40)
    assert verdict(late, BOUND_MS) == "queueing"


def test_a_step_that_answers_fewer_per_second_than_offered_is_queueing() -> None:
    # Given 2,000 requests at 100/s all answered 200, fast, but the last only after 25 s:
    # 80 answers/s, below 95 % of the offer
    slow = step(100, 2000, 25.0, [50.0] * 2000)
    assert slow.achieved == pytest.approx(80.0)
    assert verdict(slow, BOUND_MS) == "queueing"


def test_any_non_2xx_or_timeout_is_an_error_even_when_fast() -> None:
    assert verdict(step(100, 1999, 20.0, [10.0] * 2000, {503: 1}), BOUND_MS) == "errors"
    assert verdict(step(100, 1999, 20.0, [10.0] * 2000, timeouts=1), BOUND_MS) == "errors"


def test_the_ladder_reports_the_highest_rate_held_below_the_first_bad_one() -> None:
    # Given a ladder held at 100 and 200, queueing at 300, errors at 400, and a lucky
    # clean step at 500 (a burst of luck above a failure is not capacity)
    steps = [
        step(100, 2000, 20.0, [50.0] * 2000),
        step(200, 4000, 20.0, [80.0] * 4000),
        step(300, 6000, 20.0, [2000.0] * 6000),
        step(400, 7000, 20.0, [5000.0] * 8000, {503: 1000}),
        step(500, 10000, 20.0, [90.0] * 10000),
    ]
    # When it is summed up
    summary = ladder_summary(steps, BOUND_MS)
    # Then 200/s is the rate held, queueing begins at 300 and errors at 400
    assert summary == {"highest_held": 200, "first_queueing": 300, "first_errors": 400}


def test_a_ladder_that_never_fails_says_so() -> None:
    summary = ladder_summary([step(100, 2000, 20.0, [50.0] * 2000)], BOUND_MS)
    assert summary == {"highest_held": 100, "first_queueing": None, "first_errors": None}
