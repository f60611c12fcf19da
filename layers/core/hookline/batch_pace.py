"""Whether a deliver batch posts its messages in turn on the calling thread or at once on the
thread pool (decision 0093).

On the pool each message pays two thread hand-offs and the threads' contention for the
interpreter: with endpoints that answer in a few milliseconds that is about a quarter of
deliver's Python CPU (docs/performance.md). In turn, a batch takes the sum of its answers
instead of the longest, which the function's duration and the messages behind it pay. So a
batch goes in turn only when this process has seen each endpoint it sends to answer and their
recent times add up to at most the budget; and once the budget has passed, the messages not
started yet go to the pool.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from typing import TypeVar

T = TypeVar("T")


class RecentLatency:
    """Each endpoint's recent attempt time in this process, in seconds (an attempt's recorded
    duration: signing, the request and the answer read, not the message's statements): a
    slower attempt counts at once, a faster one takes back a quarter of the difference.
    Shared by a process's threads (the local runner invokes deliver from several); a race
    loses one observation and nothing else."""

    LIMIT = 4096  # endpoints remembered; past it the memory starts again

    def __init__(self) -> None:
        self._seconds: dict[str, float] = {}

    def observe(self, endpoint_id: str, seconds: float) -> None:
        known = self._seconds.get(endpoint_id)
        if known is None:
            if len(self._seconds) >= self.LIMIT:
                self._seconds.clear()
            self._seconds[endpoint_id] = seconds
        elif seconds >= known:
            self._seconds[endpoint_id] = seconds
        else:
            self._seconds[endpoint_id] = known + (seconds - known) / 4

    def expected(self, endpoint_ids: Iterable[str]) -> float | None:
        """The endpoints' recent times added up; None when one was never seen here."""
        total = 0.0
        for endpoint_id in endpoint_ids:
            seconds = self._seconds.get(endpoint_id)
            if seconds is None:
                return None
            total += seconds
        return total


def run_batch(
    one: Callable[[int], T],
    count: int,
    expected: float | None,
    budget: float,
    threads: Executor,
    clock: Callable[[], float] = time.monotonic,
) -> list[T]:
    """`one(i)` for each i below `count`, results in order: in turn on this thread when the
    batch is expected to take at most `budget` seconds, handing what is left to `threads` once
    it has taken longer; else all at once on `threads`. `expected` None: not known."""
    if expected is None or expected > budget:
        return list(threads.map(one, range(count)))
    started = clock()
    results: list[T] = []
    for index in range(count):
        if clock() - started > budget:
            results.extend(threads.map(one, range(index, count)))
            break
        results.append(one(index))
    return results
