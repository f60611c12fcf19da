"""A deliver batch: one claim statement (none for the messages sent without one, decision 0108)
and one record statement per SQS batch, the attempts
in between made concurrently (decision 0066), or in turn when the endpoints answer fast
(decision 0093, `hookline.batch_pace`), and one more statement for its failed attempts
(decision 0105). A batch whose deliveries lie in two to four days (retries of earlier days'
deliveries among today's) runs each statement per day, each through its day's copies
(decision 0103).

Per message, the rules are `Deliverer.handle`'s; only the statements every delivery paid (its
claim, and the record of its attempt) are taken for the whole batch. Whatever fails stays one
message's: a batch claim that fails leaves each message to claim itself, and a batch record
that fails is retried per delivery, each failure that message's alone.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor

from hookline.batch_pace import RecentLatency, run_batch
from hookline.claim_free import claims_without_statement
from hookline.delivery import NOT_CLAIMED, Deliverer, Handled, Unclaimed
from hookline.delivery_failures import Failure
from hookline.observability import logger
from hookline.queues import DeliveryMessage
from hookline.repositories import deliveries as repo
from hookline.repositories.deliveries import AttemptRecord, Claim, Job
from hookline.repositories.delivery_batches import claim_batch_to_send, record_batch_delivered
from hookline.repositories.hot_cursors import day_parts

# What one message came to: how it was handled, or what made it fail (SQS retries it).
Outcome = Handled | Exception


def deliver_batch(
    deliverer: Deliverer,
    bodies: Sequence[str],
    threads: Executor,
    latency: RecentLatency,
    first_receives: Sequence[bool] | None = None,
) -> list[Outcome]:
    """Handle the messages of one batch: claim them in one statement, make their attempts
    (on `threads`, or in turn when `latency` says the endpoints answer within
    `in_sequence_seconds` together), record the delivered ones in one statement; an outcome
    per message, in order.

    A batch of one (a trickle of events) is handled on the calling thread with the message's
    own claim and record statements, which run the batch statements' bodies for one message:
    the same two statements, without handing the attempt to a thread and back, and with
    scalar parameters instead of arrays (decision 0075).

    `first_receives` says which messages SQS hands out for the first time (None: none is
    known to be): those that carry their event may be sent without a claim (decision 0108,
    `hookline.claim_free`), and are left out of the claim statement."""
    free = claims_without_statement(deliverer, bodies, first_receives or [False] * len(bodies))
    if len(bodies) == 1:
        try:
            return [deliverer.handle(bodies[0], free.get(0, NOT_CLAIMED))]
        except Exception as failed:  # this message's failure: SQS retries it
            return [failed]
    claims = claim_all(deliverer, bodies, free)
    sending = [sending_endpoint(claim) for claim in claims]
    kept = Kept()

    def one(index: int) -> Outcome:
        try:
            handled = deliverer.handle(bodies[index], claims[index], kept.message(index))
        except Exception as err:  # this message's failure, never the batch's
            return err
        endpoint_id = sending[index]
        if endpoint_id is not None and handled.attempt is not None:
            latency.observe(endpoint_id, handled.attempt.duration_ms / 1000)
        return handled

    # a message that claims itself sends to an endpoint not known yet: the pool
    expected = (
        None
        if any(claim is NOT_CLAIMED for claim in claims)
        else latency.expected(e for e in sending if e is not None)
    )
    outcomes = run_batch(one, len(bodies), expected, deliverer.options.in_sequence_seconds, threads)
    for index, err in record_all(deliverer, kept.delivered).items():
        outcomes[index] = err
    for index, err in record_failures(deliverer, kept.failed).items():
        outcomes[index] = err
    return outcomes


class Kept:
    """The attempts a batch's messages leave for its record statements, by message index;
    the messages' threads add to it at once."""

    def __init__(self) -> None:
        self.delivered: list[tuple[int, Job, AttemptRecord]] = []
        self.failed: list[tuple[int, Failure]] = []
        self.lock = threading.Lock()

    def message(self, index: int) -> KeptFor:
        return KeptFor(self, index)


class KeptFor:
    """`Kept` as one message hands it its attempt (`hookline.delivery.BatchRecords`)."""

    def __init__(self, kept: Kept, index: int) -> None:
        self.kept = kept
        self.index = index

    def delivered(self, job: Job, attempt: AttemptRecord) -> None:
        with self.kept.lock:
            self.kept.delivered.append((self.index, job, attempt))

    def failed(self, failure: Failure) -> None:
        with self.kept.lock:
            self.kept.failed.append((self.index, failure))


def sending_endpoint(claim: Claim | Unclaimed | None) -> str | None:
    """The endpoint a claimed message will send to; None when it sends nothing (no slot,
    stale, finished) or its claim is its own to make."""
    if isinstance(claim, Claim) and claim.wait_seconds == 0:
        return claim.job.endpoint_id
    return None


def claim_all(
    deliverer: Deliverer, bodies: Sequence[str], free: Mapping[int, Claim | None]
) -> list[Claim | Unclaimed | None]:
    """Each message's claim from one statement, or one per day (`day_parts`; None: stale,
    finished, taken, or a copy of a message earlier in the batch); NOT_CLAIMED for a message
    that does not parse (handle raises for it) or for every message of a statement that
    fails (each claims itself). The messages in `free` have theirs already (decision 0108)."""
    parsed: list[tuple[str, int] | None] = []
    for index, body in enumerate(bodies):
        try:
            parsed.append(None if index in free else DeliveryMessage.parse(body))
        except Exception:
            parsed.append(None)
    wanted = list(dict.fromkeys(m for m in parsed if m is not None))
    if not wanted:
        return [free.get(i, NOT_CLAIMED) for i in range(len(bodies))]
    claims: dict[tuple[str, int], Claim] = {}
    unclaimed: set[tuple[str, int]] = set()
    now = deliverer.clock()
    for part in day_parts(wanted, lambda message: message[0]):
        try:
            with deliverer.db.connection() as conn:
                claims.update(claim_batch_to_send(conn, part, deliverer.options.claim_lease, now))
        except Exception:
            logger.warning("batch claim failed; each message claims itself", exc_info=True)
            unclaimed.update(part)
    answer: list[Claim | Unclaimed | None] = []
    for index, message in enumerate(parsed):
        if index in free:
            answer.append(free[index])
        elif message is None or message in unclaimed:
            answer.append(NOT_CLAIMED)
        else:
            # pop: a second copy of a message in the same batch finds its claim taken (SKIPPED)
            answer.append(claims.pop(message, None))
    return answer


def record_all(
    deliverer: Deliverer, delivered: Sequence[tuple[int, Job, AttemptRecord]]
) -> dict[int, Exception]:
    """Record the batch's delivered attempts in one statement, or one per day (`day_parts`);
    those of a statement that fails, one by one. The messages whose record could not be
    written, with why (SQS retries them)."""
    failed: dict[int, Exception] = {}
    for part in day_parts(delivered, lambda item: item[1].id):
        try:
            with deliverer.db.connection() as conn:
                record_batch_delivered(conn, [(job, attempt) for _, job, attempt in part])
            continue
        except Exception:
            logger.warning("batch record failed; recording one by one", exc_info=True)
        for index, job, attempt in part:
            try:
                with deliverer.db.connection() as conn:
                    repo.record_delivered(conn, job, attempt)
            except Exception as err:
                failed[index] = err
    return failed


def record_failures(
    deliverer: Deliverer, failed: Sequence[tuple[int, Failure]]
) -> dict[int, Exception]:
    """Record the batch's failed attempts and what follows them in one statement, or one per
    day (`day_parts`, `Deliverer.record_failures`); those of a statement that fails, one by
    one. The messages whose failure could not be recorded, with why (SQS retries them)."""
    errors: dict[int, Exception] = {}
    for part in day_parts(failed, lambda item: item[1].record.job.id):
        try:
            deliverer.record_failures([failure for _, failure in part])
            continue
        except Exception:
            logger.warning("batch failure record failed; recording one by one", exc_info=True)
        for index, failure in part:
            try:
                deliverer.record_failures([failure])
            except Exception as err:
                errors[index] = err
    return errors
