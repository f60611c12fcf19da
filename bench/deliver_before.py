"""The deliverer's common path as it was before decision 0025, for `bench/deliver.py --ab`:
the claim, the secrets read and the slot as three statements in one transaction committed
without a flush, and a delivered attempt as four statements (attempt, slot release, finish,
end of the failure streak) in one durable transaction. Only `handle` and the delivered
branch of `conclude` differ from `hookline.delivery.Deliverer`; every other outcome is the
current code."""

from __future__ import annotations

import random
from datetime import timedelta

from hookline.delivery import AttemptResult, Deliverer, Handled, Result
from hookline.repositories import deliveries as repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories.deliveries import Finish, Job
from hookline.retry import Outcome


class BeforeDeliverer(Deliverer):
    """`Deliverer` with the pre-0025 statements on the common path."""

    def handle(self, body: str) -> Handled:
        """As `Deliverer.handle` was: claim, secrets, slot, in one transaction."""
        from hookline.queues import DeliveryMessage

        delivery_id, seq = DeliveryMessage.parse(body)
        with self.db.connection() as conn, conn.transaction():
            repo.commit_without_flush(conn)
            job = repo.claim(conn, delivery_id, seq, self.options.claim_lease)
            if job is None:
                return Handled(Result.SKIPPED)
            if not job.endpoint_enabled:
                deleted = endpoint_repo.is_deleted(conn, job.endpoint_id)
                reason = "endpoint deleted" if deleted else "endpoint disabled"
                repo.finish(conn, job, Finish("failed", False, None, reason))
                return Handled(Result.FAILED)
            if self.clock() >= job.deadline_at:
                repo.finish(conn, job, Finish("dead", False, None, "deadline passed"))
                return Handled(Result.DEAD)
            secrets = endpoint_repo.active_secrets(conn, job.endpoint_id)
            wait = repo.take_slot(conn, job, self.options.claim_lease.total_seconds())
            delay = 0.0
            if wait > 0:
                delay = max(wait, self.options.busy_retry_seconds) * (1 + random.random())
                repo.defer(conn, job, self.options.queued_lease + timedelta(seconds=delay))
        if wait > 0:
            return self._requeue_deferred(job, delay)
        attempt = self.send(job, secrets)
        return Handled(self.conclude(job, attempt), attempt)

    def conclude(self, job: Job, attempt: AttemptResult) -> Result:
        """As `Deliverer.conclude` was for a delivered attempt: four statements."""
        outcome = self.policy.classify(attempt.status, attempt.error, retry_4xx=job.retry_on_4xx)
        if outcome != Outcome.DELIVERED:
            return super().conclude(job, attempt)
        with self.db.connection() as conn, conn.transaction():
            repo.record_attempt(
                conn,
                job,
                repo.AttemptRecord(
                    attempt.started_at,
                    attempt.duration_ms,
                    attempt.status,
                    attempt.excerpt,
                    attempt.error,
                ),
            )
            repo.release_slot(conn, job)
            repo.finish(conn, job, Finish("delivered", True, attempt.status, None))
            endpoint_repo.record_success(conn, job.endpoint_id)
        return Result.DELIVERED
