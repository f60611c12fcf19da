"""Deliver: an SQS batch handler, one per tenant group. The batch is claimed in one statement,
its messages delivered concurrently and its delivered attempts recorded in one statement
(decision 0066); a message whose handling fails is reported as a batch item failure, so SQS
retries it and, after maxReceiveCount, moves it to the group's DLQ. The partial batch response
is built here, as Powertools' `process_partial_response` builds it, without importing its
batch utility (every event source's data classes: decision 0073)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.batch_pace import RecentLatency
from hookline.db import Database, get_database
from hookline.delivery import Deliverer, Handled, Result, utcnow
from hookline.delivery_batch import deliver_batch
from hookline.delivery_metrics import DeliveryMetrics
from hookline.observability import flush_traces, logger
from hookline.queues import DeliveryMessage
from hookline.runtime import get_deliverer, released_heads, tracing
from hookline.settings import Settings, get_settings

if TYPE_CHECKING:
    from hookline.fanout import ReleasedHeads

# The database and HTTP work is blocking; a batch of up to 10 runs on these threads at once,
# unless its endpoints answered fast enough in this container to go in turn (decision 0093).
_threads = ThreadPoolExecutor(max_workers=10, thread_name_prefix="deliver")
_latency = RecentLatency()
# One log line per attempt that did not deliver (decision 0065); successes are metrics only.
FAILED_RESULTS = frozenset({Result.FAILED, Result.RETRY, Result.DEAD})
# A finished delivery of an ordered key releases the next, which is sent at once (0069).
FINISHED_RESULTS = frozenset({Result.DELIVERED, Result.FAILED, Result.DEAD})
# Built at init, as every batch hands on what it released (the import is runtime's to make).
released_heads()
# The process's deliverer with the settings and database it was built from: built again only
# when those are replaced (tests and the local runner reset them); building it for every
# batch cost ~90 µs of a batch of one's CPU (decision 0075).
_built: dict[str, tuple[Settings, Database, Deliverer]] = {}


def current_deliverer() -> Deliverer:
    """The deliverer for this process's settings and database."""
    settings, db = get_settings(), get_database()
    built = _built.get("deliverer")
    if built is None or built[0] is not settings or built[1] is not db:
        built = _built["deliverer"] = (settings, db, get_deliverer())
    return built[2]


def ordering_in_use(heads: ReleasedHeads, db: Database) -> bool:
    """Whether any endpoint is ordered (cached by `heads`); True when that cannot be read, so
    `ReleasedHeads.send` tries, and logs what failed, as it does for the batch's other steps."""
    try:
        return heads.in_use(db)
    except Exception:
        return True


def first_receives(records: list[dict[str, Any]]) -> list[bool]:
    """Which records SQS hands out for the first time (`ApproximateReceiveCount` 1): those may
    be sent without a claim (decision 0108)."""
    return [(r.get("attributes") or {}).get("ApproximateReceiveCount") == "1" for r in records]


class BatchFailed(Exception):
    """Every message of the batch failed: the invocation fails, so the Errors alarm counts it
    and SQS retries the whole batch (as Powertools' `BatchProcessingError`)."""


def delivery_label(body: str) -> str:
    """The delivery id a message names ("?" for a body that is not a delivery message)."""
    try:
        return DeliveryMessage.parse(body)[0]
    except Exception:
        return "?"


def log_failure(body: str, handled: Handled) -> None:
    """The one line a failed, retried or dead delivery writes: what to look up, and why."""
    delivery_id, seq = DeliveryMessage.parse(body)
    attempt = handled.attempt
    logger.warning(
        "delivery not delivered",
        extra={
            "delivery": delivery_id, "generation": seq, "result": handled.result.value,
            "kind": handled.kind, "status": attempt.status if attempt else None,
            "error": attempt.error if attempt else None,
        },
    )  # fmt: skip


@logger.inject_lambda_context(log_event=False)
@flush_traces
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    # Per invocation, the batch's outcomes and its metrics by destination kind: the local
    # runner invokes this handler from several threads (on AWS a container runs one batch at
    # a time).
    records = event.get("Records") or []
    began = utcnow()
    deliverer = current_deliverer()
    bodies = [r.get("body", "") for r in records]
    outcomes = deliver_batch(deliverer, bodies, _threads, _latency, first_receives(records))
    heads = released_heads()
    if ordering_in_use(heads, deliverer.db):  # else nothing to hand on: no ids parsed
        finished = [
            DeliveryMessage.parse(r.get("body", ""))[0]
            for r, o in zip(records, outcomes, strict=True)
            if isinstance(o, Handled) and o.result in FINISHED_RESULTS
        ]
        heads.send(deliverer.db, deliverer.queues, finished, deliverer.options.queued_lease)
    batch_metrics = DeliveryMetrics()
    traces = tracing(get_settings())
    failed: list[tuple[str, Exception]] = []
    try:
        for record, outcome in zip(records, outcomes, strict=True):
            body = record.get("body", "")
            if traces.enabled:  # the message's deliver and attempt spans, if its event is traced
                from hookline.event_traces import trace_delivery

                trace_delivery(traces, record, delivery_label(body), began, outcome)
            try:  # as Powertools' record handler: what raises fails that message only
                if isinstance(outcome, Exception):
                    raise outcome
                count_outcome(body, outcome, batch_metrics)
            except Exception as err:
                failed.append((record.get("messageId", ""), err))
    finally:
        batch_metrics.flush()
    return partial_batch_response(len(records), failed)


def count_outcome(body: str, outcome: Handled, batch_metrics: DeliveryMetrics) -> None:
    """One handled message: its metrics, and its log line when it did not deliver."""
    batch_metrics.record(outcome)
    if outcome.result in FAILED_RESULTS:
        log_failure(body, outcome)


def partial_batch_response(total: int, failed: list[tuple[str, Exception]]) -> dict[str, Any]:
    """SQS's partial batch response: the failed messages' ids, retried by SQS. A batch whose
    every message failed raises instead, as Powertools does, with each message's error."""
    for message_id, err in failed:
        logger.debug("record failed", extra={"message_id": message_id, "error": repr(err)})
    if failed and len(failed) == total:
        errors = "; ".join(f"{type(e).__name__}: {e}" for _, e in failed)
        raise BatchFailed(f"All records failed processing: {errors}") from failed[0][1]
    return {"batchItemFailures": [{"itemIdentifier": message_id} for message_id, _ in failed]}
