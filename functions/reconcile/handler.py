"""Reconcile: run by an EventBridge schedule. Finds what is stuck, late or inconsistent,
repairs it, stores a report row and publishes each count as an EMF metric, with the headline
`Unreconciled` (what is still wrong after the run) that the alarm watches."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.observability import NAMESPACE, flush_traces, logger, metrics
from hookline.reconcile import ReconcileReport
from hookline.runtime import get_reconciler

# Stop starting new batches when less than this is left of the invocation.
RESERVE_MS = 15_000

REPAIR_METRICS = {
    "late_outbox_fanned_out": "ReconcileLateOutbox",
    "late_outbox_deliveries_created": "ReconcileLateOutboxDeliveries",
    "deadline_dead": "ReconcileDeadlineDead",
    "lost_messages_requeued": "ReconcileLostMessages",
    "crashed_deliveries_requeued": "ReconcileCrashedDeliveries",
    "missing_deliveries_created": "ReconcileMissingDeliveries",
    "enqueued": "ReconcileEnqueued",
    "catchup_events_stored": "CatchupEventsStored",
    "redeliveries_requested": "CatchupRedeliveriesRequested",
}


@logger.inject_lambda_context(log_event=False)
@flush_traces
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """One reconcile sweep; returns its report."""
    try:
        report = get_reconciler().run(
            trigger=str(event.get("trigger", "schedule"))[:32],
            keep_going=lambda: context.get_remaining_time_in_millis() > RESERVE_MS,
        )
    finally:
        # Every run counts, failed or not (the Errors alarm tells those): its absence pages
        # when runs stop, and partition upkeep with them (infra/components/alarms.py).
        metrics.add_metric(name="ReconcileHeartbeat", unit=MetricUnit.Count, value=1)
    publish_metrics(report)
    logger.info("reconcile run", extra={"report": report.as_dict()})
    return report.as_dict()


def publish_metrics(report: ReconcileReport) -> None:
    """Every count of the report as a metric; per-group and per-state ones dimensioned."""
    for key, name in REPAIR_METRICS.items():
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=report.repairs.get(key, 0))
    findings = report.findings
    metrics.add_metric(
        name="ReconcileNeverAttempted",
        unit=MetricUnit.Count,
        value=findings.get("never_attempted", {}).get("count", 0),
    )
    metrics.add_metric(
        name="ReconcileLateOutboxRemaining",
        unit=MetricUnit.Count,
        value=findings.get("late_outbox_remaining", 0),
    )
    metrics.add_metric(
        name="FanoutQuarantined", unit=MetricUnit.Count, value=findings.get("fanout_quarantined", 0)
    )
    metrics.add_metric(name="Unreconciled", unit=MetricUnit.Count, value=report.unreconciled)
    # Partitions ahead, archive and retention: their errors (or the step's own failure) alarm
    # before the partitions ahead or the storage run out.
    upkeep = [e for e in findings.get("errors", []) if str(e).startswith("retention")]
    metrics.add_metric(name="RetentionErrors", unit=MetricUnit.Count, value=len(upkeep))
    for group, depth in findings.get("dlq_depth", {}).items():
        _dimensioned("DlqDepth", depth, "TenantGroup", group)
    for state, count in findings.get("deliveries_by_state", {}).items():
        _dimensioned("DeliveriesInState", count, "State", state)


def _dimensioned(name: str, value: int, dimension: str, dimension_value: str) -> None:
    # A metric of its own EMF document, so its dimension does not spread to the others.
    with single_metric(
        name=name, unit=MetricUnit.Count, value=value, namespace=NAMESPACE
    ) as metric:
        metric.add_dimension(name=dimension, value=dimension_value)
