"""One replay run's settings and collaborators, handed to each step (selection, sending,
refanout, redrive) so that none of them holds state of its own."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from hookline.db import Database
from hookline.queues import DeliveryQueues
from hookline.records import frozen
from hookline.replay.pacing import Pacer
from hookline.replay.request import ReplayRequest
from hookline.replay.result import ReplayResult
from hookline.retry import DEFAULT_DEADLINE


@frozen
class ReplayOptions:
    """Deadlines, leases and batch sizes of a replay."""

    deadline: timedelta = DEFAULT_DEADLINE  # of each replayed delivery, from now
    queued_lease: timedelta = timedelta(minutes=15)  # after it, reconcile re-enqueues
    batch_size: int = 100  # deliveries reset per statement when unpaced
    event_batch: int = 500  # events per refanout statement
    refanout_hold: timedelta = timedelta(minutes=5)  # margin before the fan-out takes over
    redrive_visibility_seconds: int = 60  # a crashed redrive's messages reappear in the DLQ


Progress = Callable[[ReplayResult], None]


@dataclass
class Run:
    """A replay being carried out: the request, its result so far, and what it runs with.

    `keep_going` says whether there is time for another batch; `report` shows progress (the
    result as it stands) to whoever watches."""

    db: Database
    queues: DeliveryQueues
    options: ReplayOptions
    request: ReplayRequest
    result: ReplayResult
    keep_going: Callable[[], bool] = lambda: True
    report: Callable[[], None] = lambda: None
    sleep: Callable[[float], None] = field(default=time.sleep)
    monotonic: Callable[[], float] = field(default=time.monotonic)

    def pacer(self) -> Pacer:
        """A pacer at the request's rate, on this run's clock."""
        return Pacer(self.request.max_per_second, sleep=self.sleep, monotonic=self.monotonic)


def chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    """`items` in slices of at most `size`."""
    for start in range(0, len(items), size):
        yield items[start : start + size]
