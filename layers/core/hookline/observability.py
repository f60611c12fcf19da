"""The one place that creates the Powertools logger and metrics, and the handlers' tracing.

Tracing: every function runs with Lambda's active tracing, which records each invocation's
segment (initialization, invocation, overhead) without any SDK in the function. The X-Ray
SDK, which Powertools' Tracer imports and which patches botocore and httpx for subsegments,
costs every cold start ~0.1 s on Lambda; it is loaded only where `HOOKLINE_XRAY_SDK=true` is
set on a function (docs/decisions/0048).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any, TypeVar, overload

from aws_lambda_powertools import Logger, Metrics

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
    if rate > 0 and (rate >= 1 or random.random() < rate):
        logger.info(message, extra={**extra, "sampled": rate})


class HandlerTracing:
    """`@tracer.capture_lambda_handler(...)`: the Powertools Tracer's decorator when the X-Ray
    SDK is enabled for the function, else the handler unchanged (Lambda traces it anyway)."""

    def __init__(self, *, sdk: bool) -> None:
        self._tracer: Any = None
        if sdk:
            from aws_lambda_powertools import Tracer

            self._tracer = Tracer(service=SERVICE)

    @property
    def sdk(self) -> bool:
        """Whether the X-Ray SDK records subsegments in this process."""
        return self._tracer is not None

    @overload
    def capture_lambda_handler(self, lambda_handler: Handler, **options: Any) -> Handler: ...

    @overload
    def capture_lambda_handler(
        self, lambda_handler: None = None, **options: Any
    ) -> Callable[[Handler], Handler]: ...

    def capture_lambda_handler(
        self, lambda_handler: Handler | None = None, **options: Any
    ) -> Handler | Callable[[Handler], Handler]:
        """Decorate a Lambda handler, with or without arguments, as Powertools does."""

        def decorate(handler: Handler) -> Handler:
            if self._tracer is None:
                return handler
            traced: Handler = self._tracer.capture_lambda_handler(handler, **options)
            return traced

        return decorate if lambda_handler is None else decorate(lambda_handler)


tracer = HandlerTracing(sdk=os.environ.get("HOOKLINE_XRAY_SDK", "").lower() == "true")
