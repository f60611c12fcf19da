"""Fan-out: run by an EventBridge schedule (the safety net) and by the receiver's nudges."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.db import get_database
from hookline.fanout import FanoutReport, run_fanout
from hookline.nudge import NUDGE_SOURCE
from hookline.observability import flush_traces, log_success, logger, metrics
from hookline.runtime import delivery_queues, fanout_options
from hookline.settings import get_settings

# Stop starting new rounds when less than this is left of the invocation.
RESERVE_MS = 10_000


@logger.inject_lambda_context(log_event=False)
@flush_traces
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Fan out every pending outbox row and enqueue every due delivery; a run nudged after an
    accept (`{"source": "hookline.nudge"}`) looks at the last day's only (decision 0101)."""
    try:
        settings = get_settings()
        report = run_fanout(
            get_database(),
            delivery_queues(settings),
            fanout_options(settings),
            keep_going=lambda: context.get_remaining_time_in_millis() > RESERVE_MS,
            nudged=event.get("source") == NUDGE_SOURCE,
        )
    finally:
        # The heartbeat counts every run, failed or not (the Errors alarm tells those): its
        # absence pages when runs stop altogether (infra/components/alarms.py).
        metrics.add_metric(name="FanoutHeartbeat", unit=MetricUnit.Count, value=1)
    add_run_metrics(report)
    if report.send_failures:
        logger.warning("fan-out run could not send every delivery", extra=vars(report))
    else:
        log_success("fan-out run", **vars(report))
    return vars(report)


def add_run_metrics(report: FanoutReport) -> None:
    """The run's non-zero counts and, when it did something or found a lag, the outbox lag:
    a nudge per event makes idle runs common, and their EMF line then carries only the
    heartbeat (decision 0065)."""
    counts = {
        "EventsFannedOut": report.events,
        "DeliveriesFannedOut": report.deliveries_created,
        "DeliveriesEnqueued": report.enqueued,
    }
    for name, value in counts.items():
        if value:
            metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
    if any(counts.values()) or report.oldest_pending_seconds:
        metrics.add_metric(
            name="OutboxLagSeconds", unit=MetricUnit.Seconds, value=report.oldest_pending_seconds
        )
