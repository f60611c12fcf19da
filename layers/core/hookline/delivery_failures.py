"""A failed attempt (decision 0105): what follows it, decided before anything is written
(`decide`: the delivery's next state by the retry policy); its record, in one statement with
the other failures of its batch; then what follows the record (`record`): an endpoint that
answered 410 Gone, or whose failure streak has lasted long enough, disabled and its tenant
told; short retries sent on their SQS delay."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from hookline.db import Connection, Database
from hookline.observability import logger
from hookline.queues import MAX_DELAY_SECONDS, DeliveryMessage, DeliveryQueues
from hookline.records import frozen
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories.deliveries import AttemptRecord, Finish, Job
from hookline.repositories.delivery_batches import FailedRecord, record_batch_failed
from hookline.retry import Outcome, RetryPolicy
from hookline.settings import Settings

GONE = "the endpoint answered 410 Gone"


@frozen
class Failure:
    """A failed attempt with what follows it decided: what its record writes; for a short
    retry, when its message is due; for a 410 Gone, why its endpoint is disabled."""

    record: FailedRecord
    retry_at: datetime | None = None
    disable: str | None = None

    @property
    def retry(self) -> bool:
        """The delivery is tried again: on an SQS delay, or when fan-out finds it due."""
        return self.record.finish.state in ("queued", "pending")


def decide(
    job: Job,
    attempt: AttemptRecord,
    outcome: Outcome,
    retry_after: float | None,
    policy: RetryPolicy,
    queued_lease: timedelta,
    now: datetime,
) -> Failure:
    """What the failed `attempt` (classified `outcome`) leads to: failed for good, dead past
    its deadline, or retried: queued again under a new generation for a wait SQS can delay,
    pending until due for a longer one."""
    error = attempt.error or f"HTTP {attempt.status}"
    status = attempt.status
    if outcome == Outcome.GONE:
        gone = Finish("failed", True, status, "410 Gone")
        return Failure(FailedRecord(job, attempt, gone, streak=False), disable=GONE)
    if outcome == Outcome.FAILED:
        return Failure(FailedRecord(job, attempt, Finish("failed", True, status, error)))
    decision = policy.next_attempt(
        job.attempt_count + 1, job.created_at, now, job.deadline_at, status, retry_after
    )
    if decision.kind == "dead" or decision.at is None or decision.delay is None:
        reason = f"deadline passed after {job.attempt_count + 1} attempts; last: {error}"
        return Failure(FailedRecord(job, attempt, Finish("dead", True, status, reason)))
    if decision.delay.total_seconds() <= MAX_DELAY_SECONDS:
        # A short wait rides an SQS delay; a new generation retires the old message.
        lease = decision.at + queued_lease
        queued = Finish("queued", True, status, error, decision.at, lease, True)
        return Failure(FailedRecord(job, attempt, queued), retry_at=decision.at)
    pending = Finish("pending", True, status, error, decision.at)
    return Failure(FailedRecord(job, attempt, pending))


def record(
    db: Database,
    queues: DeliveryQueues,
    failures: Sequence[Failure],
    disable_after: timedelta,
    settings: Settings,
    clock: Callable[[], datetime],
) -> None:
    """Record `failures` in one statement (raises only when it fails, and then nothing of
    them is written), then what follows them: each endpoint that answered 410 Gone, or whose
    failure streak began `disable_after` ago or earlier, disabled (once); the short retries of
    the deliveries whose claim stood sent on their SQS delay. Neither raises: an endpoint not
    disabled is disabled at its next failure, a retry SQS did not take is enqueued again by
    the reconciler once its lease has run out."""
    with db.connection() as conn:
        recorded = record_batch_failed(conn, [f.record for f in failures])
    now = clock()
    disable: dict[str, tuple[Job, str]] = {}
    for failure in failures:
        job = failure.record.job
        since = recorded.failing_since.get(job.endpoint_id)
        if failure.disable is not None:
            disable.setdefault(job.endpoint_id, (job, failure.disable))
        elif since is not None and since <= now - disable_after:
            reason = f"failing continuously for {disable_after.days} days"
            disable.setdefault(job.endpoint_id, (job, reason))
    for job, reason in disable.values():
        try:
            with db.connection() as conn, conn.transaction():
                disable_endpoint(conn, job, reason, settings, now)
        except Exception:
            logger.warning(
                "could not disable a failing endpoint",
                extra={"endpoint": job.endpoint_id, "reason": reason},
                exc_info=True,
            )
    retries: list[DeliveryMessage] = []
    for failure in failures:
        job = failure.record.job
        if failure.retry_at is not None and job.id in recorded.stood:
            wait = max(0.0, (failure.retry_at - now).total_seconds())
            seq = recorded.stood[job.id]
            retries.append(
                DeliveryMessage(job.id, seq, job.endpoint_id, job.tenant_group, delay_seconds=wait)
            )
    if retries:
        queues.send(retries)


def disable_endpoint(
    conn: Connection, job: Job, reason: str, settings: Settings, now: datetime
) -> None:
    """Disable `job`'s endpoint unless it is disabled, and tell its tenant: the operational
    event `endpoint.disabled`, which a tenant subscribes to like any other."""
    disabled = endpoint_repo.disable_endpoint_if_enabled(conn, job.endpoint_id, reason)
    if disabled is None:
        return
    # Imported here: ingest brings the inbound verifiers, which the deliverer's cold start
    # need not pay for an endpoint disabled once in a while (bench/coldstart.py).
    from hookline.ingest import publish

    publish(
        conn,
        tenant_id=job.tenant_id,
        type="endpoint.disabled",
        payload={"endpoint_id": job.endpoint_id, "tenant_id": job.tenant_id,
                 "url": disabled["url"], "reason": reason, "disabled_at": now.isoformat(),
                 "how_to_reenable": f"POST /v1/endpoints/{job.endpoint_id}/enable, or Enable "
                                    "on the endpoint's page in the portal or console"},
        settings=settings,
        idempotency_key=f"endpoint.disabled:{job.endpoint_id}:{job.id}",
    )  # fmt: skip
