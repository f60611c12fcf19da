"""OpenTelemetry spans that follow one event: receive -> enqueue (fan-out) -> deliver -> POST.

Off unless an OTLP/HTTP traces endpoint is configured (`HOOKLINE_OTLP_TRACES_ENDPOINT`; on AWS
the ADOT collector extension's `http://localhost:4318/v1/traces`, decision 0070). Off, every
method here is free and nothing of OpenTelemetry is imported: the SDK and its exporter load on
the first span, so a function without tracing pays nothing at cold start (decision 0048).

Ids are X-Ray compatible (the first 32 bits of a trace id are its start time), so the
collector's X-Ray exporter accepts them; the context crosses Postgres and SQS as a W3C
`traceparent` string, written only for a sampled event.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from hookline.records import frozen

SERVICE = "hookline"
# A flush at the end of an invocation waits at most this long, and an export too: the
# collector is on the same host, so a slower one is down (its spans are dropped, never
# the work).
FLUSH_TIMEOUT_MS = 1_000
EXPORT_TIMEOUT_SECONDS = 1.0

Attributes = Mapping[str, str | int | float | bool]

_started: list[Tracing] = []
_started_lock = threading.Lock()


class Span:
    """One open span: its context as a `traceparent`, attributes, and its end."""

    def __init__(self, span: Any, otel: _Sdk) -> None:
        self._span = span
        self._otel = otel

    @property
    def traceparent(self) -> str | None:
        """The W3C traceparent of this span, or None when it is not sampled (then nothing is
        carried downstream and no bytes are written)."""
        if not self._span.get_span_context().trace_flags.sampled:
            return None
        carrier: dict[str, str] = {}
        self._otel.propagator.inject(
            carrier, context=self._otel.trace.set_span_in_context(self._span)
        )
        return carrier.get("traceparent")

    def set(self, attributes: Attributes) -> None:
        """Add attributes."""
        self._span.set_attributes(dict(attributes))

    def end(self, *, error: str | None = None, at: datetime | None = None) -> None:
        """End the span (at `at`, default now); `error` marks it failed with that reason."""
        if error is not None:
            self._span.set_status(self._otel.status(self._otel.error_code, error))
        self._span.end(end_time=_ns(at) if at is not None else None)


class _Sdk:
    """The OpenTelemetry SDK, imported and built on first use."""

    def __init__(self, endpoint: str, sample_rate: float, service: str) -> None:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.extension.aws.trace import AwsXRayIdGenerator
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
        from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

        self.trace = trace
        self.status = trace.Status
        self.error_code = trace.StatusCode.ERROR
        self.kinds = {
            "server": trace.SpanKind.SERVER,
            "producer": trace.SpanKind.PRODUCER,
            "consumer": trace.SpanKind.CONSUMER,
            "client": trace.SpanKind.CLIENT,
            "internal": trace.SpanKind.INTERNAL,
        }
        self.propagator = TraceContextTextMapPropagator()
        # Not the global provider: each Tracing has its own (tests build several per process).
        self.provider = TracerProvider(
            resource=Resource.create({"service.name": service}),
            id_generator=AwsXRayIdGenerator(),
            sampler=ParentBased(TraceIdRatioBased(sample_rate)),
        )
        exporter = OTLPSpanExporter(endpoint=endpoint, timeout=EXPORT_TIMEOUT_SECONDS)
        self.provider.add_span_processor(BatchSpanProcessor(exporter))
        self.tracer = self.provider.get_tracer("hookline")

    def parent(self, traceparent: str | None) -> Any:
        """The context a traceparent names; None if it names none (or none is given)."""
        if not traceparent:
            return None
        context = self.propagator.extract({"traceparent": traceparent})
        span_context = self.trace.get_current_span(context).get_span_context()
        return context if span_context.is_valid else None


@frozen
class Tracing:
    """The process's tracing: spans exported by OTLP/HTTP to `endpoint`, or off (None).

    `sample_rate` decides for the traces this process starts (the receive span); a span
    with a parent follows its parent's decision."""

    endpoint: str | None
    sample_rate: float = 1.0
    service: str = SERVICE

    @property
    def enabled(self) -> bool:
        """Whether spans are made and exported."""
        return bool(self.endpoint)

    def _sdk(self) -> _Sdk | None:
        """The SDK, built once per process; None if it cannot be built (then this process
        makes no spans, and says so once: tracing never fails a request or a delivery)."""
        if not self.endpoint:
            return None
        with _started_lock:
            if self in _BROKEN:
                return None
            sdk = _SDKS.get(self)
            if sdk is None:
                try:
                    sdk = _Sdk(self.endpoint, self.sample_rate, self.service)
                except Exception:
                    _BROKEN.add(self)
                    logging.getLogger(__name__).warning("tracing off: no SDK", exc_info=True)
                    return None
                _SDKS[self] = sdk
                _started.append(self)
            return sdk

    @contextmanager
    def root(self, name: str, *, kind: str, attributes: Attributes) -> Iterator[Span | None]:
        """A span that starts a trace (whatever context the caller had: an inbound request's
        own trace headers are the caller's data and never continued), current inside the
        block, ended after it; an exception marks it failed. None when tracing is off."""
        sdk = self._sdk()
        if sdk is None:
            yield None
            return
        from opentelemetry.context import Context

        with sdk.tracer.start_as_current_span(
            name, context=Context(), kind=sdk.kinds[kind], attributes=dict(attributes)
        ) as span:
            yield Span(span, sdk)

    def child(
        self,
        name: str,
        parent: str | Span | None,
        *,
        kind: str,
        attributes: Attributes,
        start: datetime | None = None,
    ) -> Span | None:
        """A span under `parent` (a traceparent or an open Span), started at `start` (default
        now); the caller ends it. None when tracing is off or there is no valid parent: an
        event that was not sampled gets no spans downstream."""
        sdk = self._sdk() if parent is not None else None
        if sdk is None:
            return None
        if isinstance(parent, Span):
            context = sdk.trace.set_span_in_context(parent._span)
        else:
            context = sdk.parent(parent)
            if context is None:
                return None
        span = sdk.tracer.start_span(
            name,
            context=context,
            kind=sdk.kinds[kind],
            attributes=dict(attributes),
            start_time=_ns(start) if start is not None else None,
        )
        return Span(span, sdk)

    def flush(self) -> None:
        """Export what is pending (end of an invocation: Lambda freezes the process after)."""
        sdk = _SDKS.get(self) if self.enabled else None
        if sdk is not None:
            sdk.provider.force_flush(FLUSH_TIMEOUT_MS)

    def shutdown(self) -> None:
        """Flush and stop the exporter (tests)."""
        with _started_lock:
            sdk = _SDKS.pop(self, None)
            if self in _started:
                _started.remove(self)
        if sdk is not None:
            sdk.provider.shutdown()


_SDKS: dict[Tracing, _Sdk] = {}
_BROKEN: set[Tracing] = set()


def flush_started() -> None:
    """Flush every tracing this process started (nothing, and no import, when none did)."""
    for tracing in list(_started):
        tracing.flush()


def _ns(at: datetime) -> int:
    return int(at.timestamp() * 1_000_000_000)
