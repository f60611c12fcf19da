"""What a deliver container remembers of its endpoints' answers, and how it paces a batch by
it (decision 0093)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from hookline.batch_pace import RecentLatency, run_batch


def test_a_slower_answer_counts_at_once_and_a_faster_one_a_quarter():
    latency = RecentLatency()
    latency.observe("ep_a", 0.01)
    latency.observe("ep_a", 0.5)
    assert latency.expected(["ep_a"]) == pytest.approx(0.5)
    latency.observe("ep_a", 0.1)
    assert latency.expected(["ep_a"]) == pytest.approx(0.4)


def test_a_batch_expects_its_endpoints_times_added_up_and_nothing_for_one_never_seen():
    latency = RecentLatency()
    latency.observe("ep_a", 0.01)
    latency.observe("ep_b", 0.02)
    assert latency.expected(["ep_a", "ep_a", "ep_b"]) == pytest.approx(0.04)
    assert latency.expected(["ep_a", "ep_new"]) is None
    assert latency.expected([]) == 0.0


def test_the_memory_is_bounded():
    latency = RecentLatency()
    for n in range(RecentLatency.LIMIT + 1):
        latency.observe(f"ep_{n}", 0.01)
    assert latency.expected(["ep_0"]) is None
    assert latency.expected([f"ep_{RecentLatency.LIMIT}"]) == pytest.approx(0.01)


class Clock:
    """A clock each call of `one` moves on by a second."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def paced(expected: float | None, budget: float) -> tuple[list[int], list[str]]:
    """Five calls through run_batch: their results and the threads that made them."""
    clock, threads_seen = Clock(), []

    def one(index: int) -> int:
        threads_seen.append(threading.current_thread().name)
        clock.now += 1.0
        return index * 10

    with ThreadPoolExecutor(max_workers=5, thread_name_prefix="pool") as pool:
        results = run_batch(one, 5, expected, budget, pool, clock=clock)
    return results, threads_seen


def test_a_batch_expected_within_the_budget_runs_in_turn_until_the_budget_has_passed():
    results, threads_seen = paced(expected=2.0, budget=2.5)
    assert results == [0, 10, 20, 30, 40]
    here = threading.current_thread().name
    # three calls in turn (at 0, 1 and 2 seconds), then the two left on the pool
    assert threads_seen[:3] == [here] * 3
    assert all(name.startswith("pool") for name in threads_seen[3:])


def test_a_batch_expected_over_the_budget_or_not_known_runs_on_the_pool():
    for expected in (3.0, None):
        results, threads_seen = paced(expected=expected, budget=2.5)
        assert results == [0, 10, 20, 30, 40]
        assert all(name.startswith("pool") for name in threads_seen)
