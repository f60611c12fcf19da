"""A closed-loop measurement: threads released at once, each calling as fast as it can until
the time is up or its inputs run out; completed calls, errors and latencies per row."""

from __future__ import annotations

import math
import statistics
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

Item = TypeVar("Item")


@dataclass(frozen=True)
class Measurement:
    """What one path measured at one caller count."""

    path: str
    callers: int
    completed: int
    errors: int
    elapsed: float  # seconds of wall time, summed over slices
    latencies: list[float]  # seconds, one per completed call

    @property
    def rate(self) -> float:
        """Completed calls per second of wall time."""
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0

    def percentile_ms(self, q: float) -> float:
        """The q-th percentile latency (0 < q < 100) in milliseconds."""
        if len(self.latencies) < 2:
            return self.latencies[0] * 1000 if self.latencies else math.nan
        cuts = statistics.quantiles(self.latencies, n=1000, method="inclusive")
        return cuts[round(q * 10) - 1] * 1000

    def __add__(self, other: Measurement) -> Measurement:
        return Measurement(
            self.path,
            self.callers,
            self.completed + other.completed,
            self.errors + other.errors,
            self.elapsed + other.elapsed,
            self.latencies + other.latencies,
        )


class Caller(Generic[Item]):
    """One concurrent caller; `call` answers whether the outcome was the expected one."""

    def call(self, item: Item) -> bool:
        """Do one request: the timed part."""
        raise NotImplementedError

    def close(self) -> None:
        """Release what the caller holds."""


def measure(
    path: str,
    seconds: float,
    make_caller: Callable[[], Caller[Item]],
    batches: Sequence[Sequence[Item]],
) -> Measurement:
    """One thread per batch, all released at once, each calling until `seconds` have
    passed or its batch runs out."""
    ready = threading.Barrier(len(batches))
    lock = threading.Lock()
    latencies: list[float] = []
    spans: list[tuple[float, float]] = []
    failures: list[BaseException] = []
    errors = 0

    def run(batch: Sequence[Item]) -> None:
        nonlocal errors
        caller = make_caller()
        mine: list[float] = []
        bad = 0
        clock = time.perf_counter
        try:
            ready.wait()
            start = clock()
            deadline = start + seconds
            for item in batch:
                t0 = clock()
                ok = caller.call(item)
                t1 = clock()
                if ok:
                    mine.append(t1 - t0)
                else:
                    bad += 1
                if t1 >= deadline:
                    break
            end = clock()
        except BaseException as err:  # reported after the row; never leave others waiting
            ready.abort()
            with lock:
                failures.append(err)
            return
        finally:
            caller.close()
        with lock:
            latencies.extend(mine)
            spans.append((start, end))
            errors += bad

    threads = [
        threading.Thread(target=run, args=(batch,), name=f"caller-{i}")
        for i, batch in enumerate(batches)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise RuntimeError(f"the {path} row failed") from failures[0]
    elapsed = max(end for _, end in spans) - min(start for start, _ in spans)
    return Measurement(path, len(batches), len(latencies), errors, elapsed, latencies)
