"""Delivery metrics with the destination kind as a dimension (decision 0057).

Each batch's outcomes, attempts and latencies are emitted as one EMF document per kind, under
the one dimension set `[kind, service]`. The kind is one of `hookline.destination_kinds.KINDS`, or
`none` for a message skipped before its delivery was read (stale or duplicate), so there are
at most eight series per metric: the endpoint, tenant or target never becomes a dimension.
One dimension set (not `[service]` and `[kind, service]` both) keeps `SELECT SUM(x) FROM
Hookline` the total, with `GROUP BY kind` the split."""

from __future__ import annotations

from collections import Counter, defaultdict

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from hookline.delivery import Handled, Result
from hookline.destination_kinds import KINDS
from hookline.observability import NAMESPACE, SERVICE

OUTCOME_METRICS = {
    Result.DELIVERED: "DeliverySucceeded",
    Result.FAILED: "DeliveryFailed",
    Result.RETRY: "DeliveryRetried",
    Result.DEAD: "DeliveryDead",
    Result.DEFERRED: "DeliveryDeferred",
    Result.PARKED: "DeliveryParked",
    Result.SKIPPED: "DeliverySkipped",
}
NO_KIND = "none"


class DeliveryMetrics:
    """One batch's delivery metrics, kept by kind until `flush` prints them (EMF lines)."""

    def __init__(self) -> None:
        self._by_kind: dict[str, list[Handled]] = defaultdict(list)

    def record(self, handled: Handled) -> None:
        """Count one handled message."""
        kind = handled.kind if handled.kind in KINDS else NO_KIND
        self._by_kind[kind].append(handled)

    def flush(self) -> None:
        """Print one EMF document per kind seen, and forget them. Counts are summed per batch
        (one value each) and latencies kept one value per attempt: a value list of 1.0s per
        message was a third of the deliver function's log bytes (decision 0065). Attempts are
        the latency's SampleCount: a count of them beside it would only repeat it."""
        for kind, handled in sorted(self._by_kind.items()):
            emf = EphemeralMetrics(namespace=NAMESPACE, service=SERVICE)
            emf.add_dimension(name="kind", value=kind)
            counts: Counter[str] = Counter()
            for one in handled:
                counts[OUTCOME_METRICS[one.result]] += 1
                if one.attempt is not None:
                    emf.add_metric(
                        name="DeliveryLatencyMs",
                        unit=MetricUnit.Milliseconds,
                        value=one.attempt.duration_ms,
                    )
            for name, count in counts.items():
                emf.add_metric(name=name, unit=MetricUnit.Count, value=count)
            emf.flush_metrics()
        self._by_kind.clear()
