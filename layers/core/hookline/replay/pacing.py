"""Pacing: at most so many items a second, evenly spaced."""

from __future__ import annotations

import time
from collections.abc import Callable


class Pacer:
    """Spaces sends so that at most `rate` items per second go out (None: no limit)."""

    def __init__(
        self,
        rate: float | None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.sleep = sleep
        self.monotonic = monotonic
        self.started: float | None = None
        self.sent = 0

    def batch(self, unpaced: int) -> int:
        """How many items to send at once: one at a time at slow rates, so the spacing is
        even, up to a fifth of a second's worth at faster ones."""
        if self.rate is None:
            return unpaced
        return max(1, min(unpaced, int(self.rate / 5)))

    def wait(self) -> None:
        """Sleep until the next item may go out."""
        now = self.monotonic()
        if self.started is None:
            self.started = now
        if self.rate is None:
            return
        due = self.started + self.sent / self.rate
        if due > now:
            self.sleep(due - now)

    def done(self, count: int) -> None:
        """`count` items went out."""
        self.sent += count
