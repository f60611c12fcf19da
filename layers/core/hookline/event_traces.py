"""One event's trace across the outbox and SQS (decision 0070).

The receive span's traceparent is on the event's outbox row. When its deliveries are sent to
their queue (by fan-out, or again for a retry), `TracedDeliveryQueues` opens an `enqueue` span
under it per event and sends its traceparent as each message's `traceparent` attribute; the
deliver handler then records a `deliver` span per message under that, and a `POST` (or the
destination's kind) span for the attempt, from the attempt's own start and duration.

Built only when tracing is on (`hookline.runtime`): off, the queues are plain
`DeliveryQueues` and nothing here runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from hookline.db import Database
from hookline.observability import logger
from hookline.queues import TRACEPARENT, DeliveryMessage, DeliveryQueues
from hookline.repositories.traces import event_traces
from hookline.tracing import Span, Tracing

if TYPE_CHECKING:  # the deliverer (httpx, signing) is the deliver handler's, not fan-out's
    from hookline.delivery import Handled

HTTPS = "https"


class TracedDeliveryQueues(DeliveryQueues):
    """`DeliveryQueues` whose messages carry their event's trace to deliver."""

    def __init__(
        self, sqs: Any, config: Any, tracing: Tracing, db: Database, **options: Any
    ) -> None:
        super().__init__(sqs, config, **options)
        self.tracing = tracing
        self.db = db

    def send(
        self, messages: Sequence[DeliveryMessage], delay_seconds: float = 0
    ) -> list[DeliveryMessage]:
        """Send as `DeliveryQueues.send`, inside an `enqueue` span per traced event."""
        if not messages:
            return []
        try:
            with self.db.connection() as conn:
                traces = event_traces(conn, [m.delivery_id for m in messages])
        except Exception:  # tracing never holds a delivery back: send it untraced
            logger.warning("could not read the events' traces; sending untraced", exc_info=True)
            return super().send(messages, delay_seconds)
        spans: dict[str, Span | None] = {}
        counts: dict[str, int] = {}
        for traced in traces.values():
            counts[traced.event_id] = counts.get(traced.event_id, 0) + 1
            if traced.event_id not in spans:
                spans[traced.event_id] = self.tracing.child(
                    "enqueue",
                    traced.traceparent,
                    kind="producer",
                    attributes={"hookline.event_id": traced.event_id},
                )
        sent: list[DeliveryMessage] = []
        for message in messages:
            found = traces.get(message.delivery_id)
            span = spans.get(found.event_id) if found else None
            traceparent = span.traceparent if span else None
            sent.append(replace(message, traceparent=traceparent) if traceparent else message)
        failed = super().send(sent, delay_seconds)
        lost: dict[str, int] = {}
        for message in failed:
            found = traces.get(message.delivery_id)
            if found is not None:
                lost[found.event_id] = lost.get(found.event_id, 0) + 1
        for event_id, span in spans.items():
            if span is not None:
                span.set(
                    {
                        "hookline.deliveries": counts[event_id],
                        "hookline.delay_seconds": delay_seconds,
                    }
                )
                missing = lost.get(event_id, 0)
                span.end(error=f"{missing} not accepted by SQS" if missing else None)
        # The callers' own messages back, as DeliveryQueues returns them.
        by_id = {m.delivery_id: m for m in messages}
        return [by_id.get(m.delivery_id, m) for m in failed]


def message_traceparent(record: Mapping[str, Any]) -> str | None:
    """The `traceparent` attribute of an SQS record as Lambda passes it, if any."""
    attribute = (record.get("messageAttributes") or {}).get(TRACEPARENT) or {}
    value = attribute.get("stringValue")
    return value if isinstance(value, str) and value else None


def trace_delivery(
    tracing: Tracing,
    record: Mapping[str, Any],
    delivery_id: str,
    began: datetime,
    outcome: Handled | Exception,
) -> None:
    """Record a traced message's `deliver` span (from `began` to now) and its attempt's span
    (from the attempt's start, for its duration, with its status). Nothing for a message
    without a trace; a failure here is logged, never the message's."""
    try:
        _trace_delivery(tracing, record, delivery_id, began, outcome)
    except Exception:
        logger.warning("could not record a delivery's spans", exc_info=True)


def _trace_delivery(
    tracing: Tracing,
    record: Mapping[str, Any],
    delivery_id: str,
    began: datetime,
    outcome: Handled | Exception,
) -> None:
    deliver = tracing.child(
        "deliver",
        message_traceparent(record),
        kind="consumer",
        attributes={"hookline.delivery_id": delivery_id, "messaging.system": "aws_sqs"},
        start=began,
    )
    if deliver is None:
        return
    if isinstance(outcome, Exception):
        deliver.end(error=type(outcome).__name__)
        return
    attempt = outcome.attempt
    if attempt is not None:
        kind = outcome.kind or HTTPS
        attributes: dict[str, str | int] = {"hookline.destination_kind": kind}
        if kind == HTTPS:
            attributes["http.request.method"] = "POST"
        if attempt.status is not None:
            attributes["http.response.status_code"] = attempt.status
        if attempt.error:
            attributes["error.type"] = attempt.error[:200]
        post = tracing.child(
            "POST" if kind == HTTPS else f"send {kind}",
            deliver,
            kind="client",
            attributes=attributes,
            start=attempt.started_at,
        )
        if post is not None:
            failed = attempt.error or (attempt.status is not None and attempt.status >= 400)
            post.end(
                error=(attempt.error or f"HTTP {attempt.status}") if failed else None,
                at=attempt.started_at + timedelta(milliseconds=attempt.duration_ms),
            )
    deliver.set({"hookline.result": outcome.result.value})
    deliver.end()
