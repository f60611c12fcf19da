"""Fan-out: run by an EventBridge schedule (the safety net) and by the receiver's nudges."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.db import get_database
from hookline.fanout import run_fanout
from hookline.observability import logger, metrics, tracer
from hookline.runtime import delivery_queues, fanout_options
from hookline.settings import get_settings

# Stop starting new rounds when less than this is left of the invocation.
RESERVE_MS = 10_000


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Fan out every pending outbox row and enqueue every due delivery."""
    try:
        settings = get_settings()
        report = run_fanout(
            get_database(),
            delivery_queues(settings),
            fanout_options(settings),
            keep_going=lambda: context.get_remaining_time_in_millis() > RESERVE_MS,
        )
    finally:
        # The heartbeat counts every run, failed or not (the Errors alarm tells those): its
        # absence pages when runs stop altogether (infra/components/alarms.py).
        metrics.add_metric(name="FanoutHeartbeat", unit=MetricUnit.Count, value=1)
    metrics.add_metric(name="EventsFannedOut", unit=MetricUnit.Count, value=report.events)
    metrics.add_metric(
        name="DeliveriesFannedOut", unit=MetricUnit.Count, value=report.deliveries_created
    )
    metrics.add_metric(name="DeliveriesEnqueued", unit=MetricUnit.Count, value=report.enqueued)
    metrics.add_metric(
        name="OutboxLagSeconds", unit=MetricUnit.Seconds, value=report.oldest_pending_seconds
    )
    logger.info("fan-out run", extra=vars(report))
    return vars(report)
