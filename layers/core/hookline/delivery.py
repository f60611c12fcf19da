"""Delivery: one queue message -> at most one signed HTTP attempt, recorded, classified,
and followed by the delivery's next state (delivered, failed, retry, dead)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol

import httpcore

from hookline import USER_AGENT
from hookline.db import Database
from hookline.delivery_failures import Failure, decide
from hookline.delivery_failures import record as record_failures
from hookline.destination_kinds import HTTPS
from hookline.draws import draws
from hookline.endpoint_auth import NONE, EndpointAuth, EndpointCredentials, endpoint_auth_for
from hookline.errors import EndpointAuthFailed, UnsafeURL, failure_reason
from hookline.observability import logger
from hookline.postgres_text import storable_text
from hookline.queues import DeliveryMessage, DeliveryQueues
from hookline.records import frozen
from hookline.repositories import deliveries as repo
from hookline.repositories.deliveries import AttemptRecord, Claim, Finish, Job
from hookline.repositories.sendable_endpoints import SendableEndpoints
from hookline.retry import Outcome, RetryPolicy, parse_retry_after
from hookline.secretbox import reveal
from hookline.settings import Settings
from hookline.signing import sign
from hookline.webhook_client import (
    HTTP_ERRORS,
    TIMEOUTS,
    InvalidEndpointURL,
    WebhookAnswer,
    WebhookClient,
    response_headers,
)

if TYPE_CHECKING:  # boto3 loads only when an AWS destination is sent to (cold start)
    from hookline.destinations.senders import AwsSenders
# Input transformers and event documents (hookline.transformers, hookline.patterns) load for
# the endpoints that use them, as the AWS senders do: most endpoints get the payload as it is.

# Headers an endpoint's custom headers may not set: the signature and transport ones.
RESERVED_HEADERS = frozenset(
    {"webhook-id", "webhook-timestamp", "webhook-signature", "content-type", "content-length",
     "host", "user-agent", "transfer-encoding", "connection"}
)  # fmt: skip


class Unclaimed:
    """The type of NOT_CLAIMED: `Deliverer.handle` claims the message itself."""


NOT_CLAIMED = Unclaimed()


class Result(StrEnum):
    """What handling one message came to."""

    DELIVERED = "delivered"
    FAILED = "failed"
    RETRY = "retry"
    DEAD = "dead"
    DEFERRED = "deferred"  # no slot or over the rate limit: sent back, no attempt counted
    PARKED = "parked"  # deferred too often in a row: a due row for fan-out, off the queue
    SKIPPED = "skipped"  # stale or duplicate message, or already finished


@frozen
class DeliveryOptions:
    """Timeouts, leases and limits of the deliver function."""

    timeout_seconds: float = 15.0  # the whole attempt
    connect_timeout_seconds: float = 5.0
    response_limit_bytes: int = 64 * 1024
    excerpt_chars: int = 1024
    queued_lease: timedelta = timedelta(minutes=15)
    endpoint_disable_after: timedelta = timedelta(days=5)
    busy_retry_seconds: float = 1.0  # wait before retrying an endpoint at its cap
    # Deferred this many times in a row, a delivery leaves the queue for a due row in
    # Postgres that fan-out enqueues when due (docs/decisions/0034).
    max_deferrals_in_a_row: int = 3
    # A batch whose endpoints answered within this long together (as this process last saw
    # them) is sent in turn on one thread, the rest on the pool once it has taken longer;
    # 0 sends every batch on the pool (docs/decisions/0093).
    in_sequence_seconds: float = 0.05

    @property
    def claim_lease(self) -> timedelta:
        """How long a delivery stays ours while we send it."""
        return timedelta(seconds=self.timeout_seconds + 30)


@frozen
class AttemptResult:
    """One HTTP try as the endpoint answered it (or did not)."""

    started_at: datetime
    duration_ms: int
    status: int | None
    excerpt: str | None
    error: str | None
    retry_after: float | None
    final: bool = False  # the delivery fails now, whatever the status says (e.g. a transform)
    headers: dict[str, str] | None = None  # the response's, bounded (response_headers)


@frozen
class Handled:
    """The result of one message, with the attempt made (if any)."""

    result: Result
    attempt: AttemptResult | None = None
    kind: str | None = None  # the endpoint's destination kind; None: never read (skipped)


class BatchRecords(Protocol):
    """Where a batch collects the attempts it records in one statement each (decisions 0066
    and 0105)."""

    def delivered(self, job: Job, attempt: AttemptRecord) -> None: ...

    def failed(self, failure: Failure) -> None: ...


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


class Deliverer:
    """Delivers queue messages; one per process, shared by the threads of a batch."""

    def __init__(
        self,
        db: Database,
        queues: DeliveryQueues,
        http: WebhookClient,
        policy: RetryPolicy,
        options: DeliveryOptions,
        *,
        settings: Settings,
        clock: Callable[[], datetime] = utcnow,
        destinations: Callable[[], AwsSenders] | None = None,
        endpoint_auth: EndpointAuth | None = None,
        public_http: WebhookClient | None = None,
    ) -> None:
        """`settings` go to the operational events it publishes (`endpoint.disabled`).
        `public_http` connects to public addresses only, for the endpoints that must not
        reach a private one whatever the deployment allows (decision 0059); None: `http`
        already refuses them. `destinations` builds the senders to AWS targets when the first
        one is sent to: they load the AWS SDK, which an https-only deployment never needs."""
        self.endpoint_auth = endpoint_auth or endpoint_auth_for(http, settings, options)
        self.destinations = destinations
        self.public_http = public_http if public_http is not None else http
        self.settings = settings
        self.db = db
        self.queues = queues
        self.http = http
        self.policy = policy
        self.options = options
        self.clock = clock
        # Endpoints as the sends without a claim read them (decision 0108), and the most
        # deliveries every tenant group's deliver can have in flight at once: each group's
        # concurrency cap times its batch size. An endpoint whose cap is at least that can
        # never be over it, so its cap needs no claim.
        self.endpoints = SendableEndpoints(settings.endpoint_cache_seconds)
        self.in_flight_ceiling = sum(
            g.max_concurrency * g.batch_size for g in queues.config.tenant_groups
        )

    def handle(
        self,
        body: str,
        claimed: Claim | Unclaimed | None = NOT_CLAIMED,
        batch: BatchRecords | None = None,
    ) -> Handled:
        """Handle one queue message. Raises (so SQS retries it) only when the message could
        not be handled at all: unparseable, database down, or a deferral not re-sent.

        A batch (`hookline.delivery_batch`, decision 0066) passes the message's claim, taken
        with the batch's (None: stale, finished or taken), and `batch`, which keeps the attempt
        for the batch's record statements instead of writing it here."""
        delivery_id, seq = DeliveryMessage.parse(body)
        now = self.clock()
        with self.db.connection() as conn:
            # One statement, committed without waiting for the disk: the claim, then (for an
            # enabled endpoint before the deadline) a slot and the active secrets. A database
            # crash can only undo it, which leaves the delivery queued with a lease (SQS or
            # the reconciler brings it back), while the attempt's record commits durably and
            # flushes it with it (decisions 0014, 0025). The claim and its slot are a row of
            # the in-flight table (decision 0085): whatever ends the claim frees the slot.
            claim = (
                repo.claim_to_send(conn, delivery_id, seq, self.options.claim_lease, now)
                if isinstance(claimed, Unclaimed)
                else claimed
            )
            if claim is None:
                return Handled(Result.SKIPPED)
            job = claim.job
            if not job.endpoint_enabled:
                reason = "endpoint deleted" if claim.endpoint_deleted else "endpoint disabled"
                repo.finish(conn, job, Finish("failed", False, None, reason))
                return Handled(Result.FAILED, kind=job.kind)
            if claim.wait_seconds is None:  # enabled, so past its deadline
                repo.finish(conn, job, Finish("dead", False, None, "deadline passed"))
                return Handled(Result.DEAD, kind=job.kind)
            if claim.wait_seconds > 0:
                # Jitter spreads the deferred messages of a busy endpoint over the next seconds.
                delay = max(claim.wait_seconds, self.options.busy_retry_seconds)
                delay *= 1 + draws.random()
                deferrals = DeliveryMessage.deferrals_in(body) + 1
                if deferrals > self.options.max_deferrals_in_a_row:
                    # A busy endpoint: stop riding the queue (and Lambda's loop count); due
                    # after the same wait, it is enqueued by the next fan-out run after that.
                    repo.park(conn, job, timedelta(seconds=delay))
                    return Handled(Result.PARKED, kind=job.kind)
                lease = self.options.queued_lease + timedelta(seconds=delay)
                repo.defer(conn, job, lease)
                return self._requeue_deferred(job, delay, deferrals)
            try:
                secrets = [reveal(conn, sealed) for sealed in claim.sealed_secrets]
                credentials = self.endpoint_auth.unseal(conn, job)
            except Exception:
                # As the claim's rollback used to: the claim kept without its slot, for this
                # message's retry to take over; only while this claim stands.
                repo.defer(conn, job, self.options.queued_lease)
                raise
        attempt = self.send(job, secrets, credentials)
        return Handled(self.conclude(job, attempt, batch), attempt, job.kind)

    def _requeue_deferred(self, job: Job, delay: float, deferrals: int) -> Handled:
        message = DeliveryMessage(job.id, job.seq, job.endpoint_id, job.tenant_group, deferrals)
        failed = self.queues.send([message], delay_seconds=delay)
        if failed:
            # The original message stays on the queue (we raise), and is claimable again.
            raise RuntimeError("could not re-queue a deferred delivery")
        return Handled(Result.DEFERRED, kind=job.kind)

    def send(
        self, job: Job, secrets: list[str], credentials: EndpointCredentials = NONE
    ) -> AttemptResult:
        """POST the signed event to the endpoint. Never raises: whatever goes wrong with this
        one delivery (the endpoint's failures, but also a header stored before today's checks
        that cannot be sent as ASCII) is the attempt's error, so it is recorded and the delivery
        moves on by the retry policy instead of sitting in `delivering` (issue 12)."""
        started_at = self.clock()
        began = time.monotonic()
        timestamp = int(started_at.timestamp())
        try:
            payload, content_type = outgoing_body(job)
        except Exception as err:
            from hookline.transformers import TransformFailed  # loaded by outgoing_body

            if isinstance(err, TransformFailed):
                return AttemptResult(
                    started_at, 0, None, None, f"transform: {err}", None, final=True
                )
            # Any other failure to build this body (a payload too deep for its document, a
            # transformer that raises) fails this delivery with its reason: a recorded
            # attempt, never a delivery left `delivering` or a crashed batch (decision 0059).
            reason = failure_reason("body", err)
            logger.warning("delivery body failed", extra={"delivery": job.id, "error": reason})
            return AttemptResult(started_at, 0, None, None, reason, None, final=True)
        if job.kind != HTTPS:  # a target in the customer's AWS account (decision 0046)
            try:
                return self._send_to_aws(job, payload, content_type, sign(
                    job.id, timestamp, payload, secrets), started_at, began)  # fmt: skip
            except Exception as err:  # as an HTTPS attempt's: recorded, retried by the policy
                duration_ms = int((time.monotonic() - began) * 1000)
                reason = failure_reason("destination", err)
                logger.warning(
                    "delivery attempt failed", extra={"delivery": job.id, "error": reason}
                )
                return AttemptResult(started_at, duration_ms, None, None, reason, None)
        status: int | None = None
        excerpt: str | None = None
        error: str | None = None
        retry_after: float | None = None
        answered: dict[str, str] | None = None
        total = self.options.timeout_seconds
        try:
            headers = self._headers(job, secrets, timestamp, payload, content_type)
            client = self.endpoint_auth.client(job.endpoint_id, credentials)
            if job.public_only and client is self.http:
                client = self.public_http  # public addresses only, at connect time (0059)
            rejected: str | None = None
            while True:  # twice at most: a 401 to an OAuth2 token fetches a new one, once
                sent = self.endpoint_auth.authorize(job.endpoint_id, credentials, headers, rejected)
                # A token fetch and a repeat after a 401 share the attempt's time (its lease).
                left = max(began + total - time.monotonic(), 0.001)
                connect = min(left, self.options.connect_timeout_seconds)
                timeout = {"connect": connect, "read": left, "write": left, "pool": left}
                response = client.post_webhook(job.url, payload, sent, timeout)
                try:
                    status = response.status_code
                    if status == 401 and rejected is None and credentials.oauth2 is not None:
                        rejected = sent["authorization"]
                        continue
                    answered = response_headers(response.header_items())
                    retry_after = parse_retry_after(response.header("retry-after"), started_at)
                    excerpt = self._read_excerpt(response, began + total)
                finally:
                    response.close()
                break
        except EndpointAuthFailed as err:
            error = str(err)
        except TIMEOUTS:
            error = "timeout"
        except UnsafeURL:
            error = "unsafe_address"
        except InvalidEndpointURL:  # only a URL stored before today's checks
            error = "invalid_url"
        except HTTP_ERRORS as err:
            error = _error_class(err)
        except TimeoutError:
            error = "timeout"
        except Exception as err:
            # Not the endpoint's doing: logged (names only, never the headers' values).
            error = type(err).__name__
            logger.warning(
                "delivery attempt failed before an answer",
                extra={"delivery": job.id, "endpoint": job.endpoint_id, "error": error},
            )
        duration_ms = int((time.monotonic() - began) * 1000)
        return AttemptResult(
            started_at, duration_ms, status, excerpt, error, retry_after, headers=answered
        )

    @staticmethod
    def _headers(
        job: Job, secrets: list[str], timestamp: int, payload: bytes, content_type: str
    ) -> dict[str, str]:
        headers = {k: v for k, v in job.headers.items() if k.lower() not in RESERVED_HEADERS}
        headers.update(sign(job.id, timestamp, payload, secrets))
        headers["content-type"] = content_type
        headers["user-agent"] = USER_AGENT
        return headers

    def _send_to_aws(
        self,
        job: Job,
        payload: bytes,
        content_type: str,
        signed: dict[str, str],
        started_at: datetime,
        began: float,
    ) -> AttemptResult:
        if self.destinations is None or job.role_arn is None or job.external_id is None:
            raise RuntimeError("an AWS destination needs the deliverer's senders and a role")
        from hookline.destinations.senders import OutgoingMessage
        from hookline.patterns import event_document

        message = OutgoingMessage(
            job.id, int(signed["webhook-timestamp"]), signed["webhook-signature"], payload,
            content_type, job.event_id, job.event_type,
            event_document(job.event_type, job.tenant_id, job.source_id, job.payload),
        )  # fmt: skip
        sent = self.destinations().send(
            job.kind, job.url, job.role_arn, job.external_id, job.destination or {}, message
        )
        duration_ms = int((time.monotonic() - began) * 1000)
        status = 200 if sent.error is None else None
        final = sent.error is not None and not sent.retry
        excerpt = (
            None if sent.answer is None else storable_text(sent.answer, self.options.excerpt_chars)
        )
        return AttemptResult(started_at, duration_ms, status, excerpt, sent.error, None, final)

    def _read_excerpt(self, response: WebhookAnswer, deadline: float) -> str:
        # At most response_limit_bytes are read, as they arrive (no decoding: the deliverer
        # asks for no compression); the attempt as a whole stops at the deadline.
        limit = self.options.response_limit_bytes
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                break
            if time.monotonic() > deadline:
                raise TimeoutError("response took too long")
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        # Only what the excerpt can hold is decoded: a character is at most 4 UTF-8 bytes. A
        # NUL in the answer must not make the attempt unrecordable (Postgres text).
        chars = self.options.excerpt_chars
        text = body[: min(limit, 4 * chars)].decode("utf-8", "replace")
        return storable_text(text, chars)

    def conclude(
        self, job: Job, attempt: AttemptResult, batch: BatchRecords | None = None
    ) -> Result:
        """Record the attempt and move the delivery on: a delivered one in one statement, a
        failed one with its next state in one statement, then what follows it
        (`record_failures`). A batch passes `batch`, which keeps either for the batch's one
        statement of each instead."""
        outcome = (
            Outcome.FAILED
            if attempt.final
            else self.policy.classify(attempt.status, attempt.error, retry_4xx=job.retry_on_4xx)
        )
        recorded = AttemptRecord(
            attempt.started_at, attempt.duration_ms, attempt.status, attempt.excerpt,
            attempt.error, attempt.headers,
        )  # fmt: skip
        if outcome == Outcome.DELIVERED:
            if batch is not None:
                batch.delivered(job, recorded)
                return Result.DELIVERED
            with self.db.connection() as conn:
                # One statement, committed durably (decision 0025); finishes the delivery,
                # and so frees its slot, only while this claim stands.
                repo.record_delivered(conn, job, recorded)
            return Result.DELIVERED
        failure = decide(
            job, recorded, outcome, attempt.retry_after, self.policy, self.options.queued_lease,
            self.clock(),
        )  # fmt: skip
        if batch is not None:
            batch.failed(failure)
        else:
            self.record_failures([failure])
        return Result.RETRY if failure.retry else Result(failure.record.finish.state)

    def record_failures(self, failures: Sequence[Failure]) -> None:
        """`hookline.delivery_failures.record` with this deliverer's database, queues and
        settings."""
        record_failures(
            self.db, self.queues, failures, self.options.endpoint_disable_after,
            self.settings, self.clock,
        )  # fmt: skip


def outgoing_body(job: Job) -> tuple[bytes, str]:
    """The bytes sent and signed, and their content type: the event's payload, or what the
    endpoint's input transformer makes of it (raises TransformFailed when it cannot)."""
    if job.input_transformer is None:
        return job.payload, job.content_type or "application/json"
    from hookline.patterns import event_document
    from hookline.transformers import render

    document = event_document(job.event_type, job.tenant_id, job.source_id, job.payload)
    rendered = render(job.input_transformer, document)
    return rendered.body, rendered.content_type


def _error_class(err: Exception) -> str:
    from hookline.endpoint_auth.tls import tls_failure  # an attempt that failed only

    tls = tls_failure(err)  # a handshake failure or TLS alert, named (decision 0067)
    if tls is not None:
        return tls
    if isinstance(err, httpcore.ConnectError):
        return "connect_error"
    if isinstance(err, httpcore.RemoteProtocolError):
        return "protocol_error"
    return type(err).__name__
