"""Fan-out: outbox rows become deliveries, and due deliveries go to their group's queue."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from hookline.carried import CarriedEvent
from hookline.db import Database
from hookline.ids import ulid_time
from hookline.observability import logger
from hookline.queues import DeliveryMessage, DeliveryQueues
from hookline.records import frozen
from hookline.repositories import deliveries as repo
from hookline.retry import DEFAULT_DEADLINE


@dataclass
class FanoutReport:
    """What one fan-out run did."""

    events: int = 0
    deliveries_created: int = 0
    enqueued: int = 0
    send_failures: int = 0
    oldest_pending_seconds: float = 0.0


@frozen
class FanoutOptions:
    """Sizes and leases of a fan-out run."""

    deadline: timedelta = DEFAULT_DEADLINE  # of each new delivery
    batch_size: int = 500  # outbox rows per statement
    enqueue_batch: int = 500  # due deliveries claimed per round
    queued_lease: timedelta = timedelta(minutes=15)  # after it, reconcile re-enqueues


# A nudged run looks for what the accept that nudged it made, in today's partitions: its scans
# read the day partitions of the ids made this long ago and later (decision 0101). What it
# leaves (an event restored into its own day, a retry of an older event's delivery) is the
# next scheduled run's, which reads every day.
NUDGED_RUN_LOOKS_BACK = timedelta(days=1)


def run_fanout(
    db: Database,
    queues: DeliveryQueues,
    options: FanoutOptions,
    *,
    keep_going: Callable[[], bool] = lambda: True,
    nudged: bool = False,
) -> FanoutReport:
    """Fan out and enqueue until nothing is left or `keep_going` says stop (time runs low);
    `nudged`: only what was made in the last day (NUDGED_RUN_LOOKS_BACK)."""
    report = FanoutReport()
    drained = False
    # the bound as a ULID time, so a statement planned with it never plans the older days
    since = ulid_time(datetime.now(UTC) - NUDGED_RUN_LOOKS_BACK) if nudged else None
    while True:
        # One statement: fan out (deliveries created queued) and claim what came due
        # otherwise (retries, deliveries put back after a failed send); bench/pipeline.py.
        with db.connection() as conn:
            fanned = repo.fan_out_and_claim(
                conn,
                limit=options.batch_size,
                deadline=options.deadline,
                lease=options.queued_lease,
                due_limit=options.enqueue_batch,
                since=since,
            )
        report.events += fanned.events
        report.deliveries_created += fanned.created
        sent, failed = send_claimed(db, queues, fanned.to_send)
        report.enqueued += sent
        report.send_failures += failed
        filtered_events = 0
        if fanned.filtered_waiting and not failed:
            # The events of tenants with content-filtered endpoints, matched in Python and
            # created pending, then claimed and sent like any due delivery.
            with db.connection() as conn:
                filtered_events, filtered_created = repo.fan_out_batch(
                    conn, limit=options.batch_size, deadline=options.deadline, since=since
                )
            report.events += filtered_events
            report.deliveries_created += filtered_created
            sent, failed = enqueue_due(
                db, queues, limit=options.enqueue_batch, lease=options.queued_lease, since=since
            )
            report.enqueued += sent
            report.send_failures += failed
        # A short batch and a short claim mean both were drained: another round would only
        # find nothing. What arrives meanwhile is the next nudge's or schedule's.
        drained = (
            max(fanned.events, filtered_events) < options.batch_size
            and fanned.due < options.enqueue_batch
        )
        if drained or failed or not keep_going():  # failed: the queue refuses; next run retries
            break
    if not drained:  # a drained outbox has no lag to report: one statement less per run
        with db.connection() as conn:
            report.oldest_pending_seconds = repo.oldest_pending_outbox_age(conn)
    return report


def enqueue_due(
    db: Database,
    queues: DeliveryQueues,
    *,
    limit: int,
    lease: timedelta,
    since: str | None = None,
) -> tuple[int, int]:
    """Send due deliveries (made from `since` on, a ULID time: None, any) to their queues;
    returns (sent, failed). Failed ones go back to pending at once (a crash before that leaves
    them to the reconciler's lease check)."""
    with db.connection() as conn:
        due = repo.claim_due(conn, limit=limit, lease=lease, since=since)
    return send_claimed(db, queues, due)


def send_claimed(
    db: Database,
    queues: DeliveryQueues,
    due: list[repo.Enqueued],
    carried: CarriedEvent | None = None,
) -> tuple[int, int]:
    """Send claimed (queued) deliveries, their messages carrying `carried` when given (the
    event of all of them, decision 0108); returns (sent, failed). Failed ones go back to
    pending at once."""
    if not due:
        return 0, 0
    failed = queues.send(
        [DeliveryMessage(d.id, d.seq, d.endpoint_id, d.tenant_group, carried=carried) for d in due]
    )
    if failed:
        with db.connection() as conn:
            repo.return_unsent(conn, [m.delivery_id for m in failed])
    return len(due) - len(failed), len(failed)


def send_at_receipt(
    db: Database,
    queues: Callable[[], DeliveryQueues],
    to_send: list[repo.Enqueued],
    carried: CarriedEvent | None = None,
) -> bool:
    """Send the deliveries an event got in the statement that stored it (decision 0076) to
    `queues()`. False when some could not be sent: those are back to pending, for the
    fan-out's due arm (nudge it); if even that failed, they wait queued for the reconciler's
    lease check. A message sent before a failure is made stale by the fan-out's next
    generation, so putting all back is safe: its claim finds it stale, and one sent without a
    claim because it carries `carried` (decision 0108) is recorded, not finished, so the
    delivery is sent once more, never lost."""
    try:
        _, failed = send_claimed(db, queues(), to_send, carried)
    except Exception:
        logger.warning("sending an event's deliveries at receipt failed", exc_info=True)
        try:
            with db.connection() as conn:
                repo.return_unsent(conn, [d.id for d in to_send])
        except Exception:
            logger.warning("putting unsent deliveries back to pending failed", exc_info=True)
        return False
    return not failed


class ReleasedHeads:
    """Hands an ordered key's next delivery to the queue as soon as the one ahead finishes
    (decision 0069), from the deliverer, so a key moves at the pace of its receiver rather
    than of the fan-out's schedule. Whether any endpoint is ordered is looked up at most once
    per `recheck_seconds`: without one, a batch costs nothing more."""

    def __init__(self, recheck_seconds: float = 30.0) -> None:
        self.recheck_seconds = recheck_seconds
        self._lock = threading.Lock()
        self._checked_at = float("-inf")
        self._in_use = False

    def in_use(self, db: Database) -> bool:
        """Whether any enabled endpoint is ordered (cached for `recheck_seconds`)."""
        with self._lock:
            if time.monotonic() - self._checked_at < self.recheck_seconds:
                return self._in_use
        with db.connection() as conn:
            found = repo.ordering_in_use(conn)
        with self._lock:
            self._in_use, self._checked_at = found, time.monotonic()
        return found

    def send(
        self, db: Database, queues: DeliveryQueues, finished_ids: Sequence[str], lease: timedelta
    ) -> int:
        """Send what finishing `finished_ids` released; returns how many were sent. A send
        that fails leaves them pending and due (or queued under a lease, if the failure came
        after the claim: the reconciler's lease check): the next fan-out run sends them."""
        if not finished_ids:
            return 0
        try:
            if not self.in_use(db):
                return 0
            with db.connection() as conn:
                due = repo.claim_released_heads(conn, finished_ids, lease=lease)
            sent, _ = send_claimed(db, queues, due)
        except Exception:  # the batch is recorded; the fan-out's due arm sends them instead
            logger.warning("sending released ordered deliveries failed", exc_info=True)
            return 0
        return sent
