"""The one place that creates the Powertools logger and metrics, and flushes the handlers'
traces.

Tracing is OpenTelemetry's (`hookline.tracing`, decision 0070): spans that follow one event
from receive to each delivery, exported where an OTLP endpoint is configured. Lambda's active
tracing still records each invocation's segment (init, invocation, overhead) with no SDK in
the function; the X-Ray SDK is gone (decision 0048 kept it off the cold start).
"""

from __future__ import annotations

import functools
import json
import os
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics.functions import is_metrics_disabled

from hookline.draws import draws
from hookline.tracing import flush_started

SERVICE = "hookline"
# The stack sets its own namespace (its name), so two stacks in one account never share a
# metric or an alarm; "Hookline" locally.
NAMESPACE = os.environ.get("POWERTOOLS_METRICS_NAMESPACE") or "Hookline"

Handler = TypeVar("Handler", bound=Callable[..., Any])

logger = Logger(service=SERVICE)
metrics = Metrics(namespace=NAMESPACE, service=SERVICE)

# Log volume (decision 0065): a failure always writes its line; a success writes one for this
# fraction of calls, and is otherwise counted by the metrics only. CloudWatch bills ingestion
# per byte, and the hot path's success lines were most of its ~3 KB per delivered event.
success_sample_rate = float(os.environ.get("HOOKLINE_LOG_SUCCESS_SAMPLE_RATE", "0.01"))


def log_success(message: str, **extra: Any) -> None:
    """Log a success line at INFO for a sampled fraction of calls (`success_sample_rate`);
    the line says it was sampled, so counts are read from the metrics, never from lines."""
    rate = success_sample_rate
    if rate > 0 and (rate >= 1 or draws.random() < rate):
        logger.info(message, extra={**extra, "sampled": rate})


class InvocationCounts:
    """One invocation's counts (`Count` metrics under the `service` dimension), printed as one
    EMF document by `flush`: the document `metrics.add_metric(..., MetricUnit.Count, ...)`
    calls and `Metrics.flush_metrics` print, without Powertools' per-call validation and
    debug formatting, which cost the receiver more than its signature check (decision 0077).
    Local to the invocation, so concurrent invocations of the local runner share nothing."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: dict[str, list[float]] = {}

    def count(self, name: str, value: int = 1) -> None:
        """Add `value` to the metric `name` (a constant name of the caller's)."""
        values = self.values.get(name)
        if values is None:
            self.values[name] = [float(value)]
        else:
            values.append(float(value))

    def flush(self) -> None:
        """Print the counts as one EMF line (none when there are none, or metrics are
        disabled as Powertools reads it), and forget them."""
        values, self.values = self.values, {}
        if values and not is_metrics_disabled():
            print(emf_counts(values))


def emf_counts(values: dict[str, list[float]], timestamp_ms: int | None = None) -> str:
    """The EMF document of `Count` metrics in NAMESPACE under the `service` dimension, as
    Powertools' `Metrics(namespace=NAMESPACE, service=SERVICE)` serialises it."""
    document = {
        "_aws": {
            "Timestamp": int(time.time() * 1000) if timestamp_ms is None else timestamp_ms,
            "CloudWatchMetrics": [
                {
                    "Namespace": NAMESPACE,
                    "Dimensions": [["service"]],
                    "Metrics": [{"Name": name, "Unit": "Count"} for name in values],
                }
            ],
        },
        "service": SERVICE,
        **values,
    }
    return json.dumps(document, separators=(",", ":"))


def flush_traces(handler: Handler) -> Handler:
    """Decorate a Lambda handler: after each invocation, export the spans it made (Lambda may
    freeze the process as soon as the handler returns). Nothing to do, and nothing of
    OpenTelemetry imported, where tracing is off (decision 0070)."""

    @functools.wraps(handler)
    def traced(*args: Any, **kwargs: Any) -> Any:
        try:
            return handler(*args, **kwargs)
        finally:
            flush_started()

    return cast(Handler, traced)
