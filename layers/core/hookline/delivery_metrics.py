"""Delivery metrics with the destination kind as a dimension (decision 0057).

Each batch's outcomes, attempts and latencies are emitted as one EMF document per kind, under
the one dimension set `[kind, service]`. The kind is one of `hookline.destination_kinds.KINDS`, or
`none` for a message skipped before its delivery was read (stale or duplicate), so there are
at most eight series per metric: the endpoint, tenant or target never becomes a dimension.
One dimension set (not `[service]` and `[kind, service]` both) keeps `SELECT SUM(x) FROM
Hookline` the total, with `GROUP BY kind` the split.

The documents are written here, in the shape Powertools' `EphemeralMetrics` prints them (the
same keys, units and values), without building one of its metric sets per kind and batch:
that was ~8 % of a batch of one's CPU (decision 0078). Powertools' switch still applies
(`POWERTOOLS_METRICS_DISABLED`, `POWERTOOLS_DEV`)."""

from __future__ import annotations

import json
import time
from collections import defaultdict

from aws_lambda_powertools.metrics.functions import is_metrics_disabled

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
LATENCY = "DeliveryLatencyMs"
# CloudWatch takes at most 100 values of a metric in one EMF document (Powertools flushes a
# document when a metric reaches them).
MAX_VALUES = 100


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
        by_kind, self._by_kind = self._by_kind, defaultdict(list)
        if not by_kind or is_metrics_disabled():
            return
        for kind, handled in sorted(by_kind.items()):
            latencies = [float(h.attempt.duration_ms) for h in handled if h.attempt is not None]
            counts: dict[str, float] = {}
            for one in handled:
                name = OUTCOME_METRICS[one.result]
                counts[name] = counts.get(name, 0.0) + 1.0
            for start in range(0, max(len(latencies), 1), MAX_VALUES):
                print(emf_document(kind, latencies[start : start + MAX_VALUES], counts))
                counts = {}  # the counts ride the first document only


def emf_document(kind: str, latencies: list[float], counts: dict[str, float]) -> str:
    """One EMF line: the latencies (Milliseconds) and counts (Count) under [kind, service]."""
    definitions = [{"Name": LATENCY, "Unit": "Milliseconds"}] if latencies else []
    definitions += [{"Name": name, "Unit": "Count"} for name in counts]
    dimensions = [["kind", "service"]]
    directive = {"Namespace": NAMESPACE, "Dimensions": dimensions, "Metrics": definitions}
    document: dict[str, object] = {
        "_aws": {"Timestamp": int(time.time() * 1000), "CloudWatchMetrics": [directive]},
        "kind": kind,
        "service": SERVICE,
    }
    if latencies:
        document[LATENCY] = latencies
    for name, count in counts.items():
        document[name] = [count]
    return json.dumps(document, separators=(",", ":"))
