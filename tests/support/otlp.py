"""A real OTLP/HTTP traces receiver on loopback: decodes each protobuf export request
(opentelemetry-proto) into plain span records, as a collector would receive them."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


@dataclass(frozen=True)
class ReceivedSpan:
    """One span as exported: ids in hex, attributes as plain values."""

    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any]
    error: bool  # status code ERROR
    service: str


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    return getattr(v, which) if which else None


@dataclass
class OtlpReceiver:
    """The spans received so far, and the URL to export to."""

    url: str = ""
    spans: list[ReceivedSpan] = field(default_factory=list)
    requests: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def wait_for(self, done: Callable[[list[ReceivedSpan]], bool], timeout: float = 10) -> None:
        """Wait until `done(spans)`; fail with what arrived after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                spans = list(self.spans)
            if done(spans):
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"spans received: {[(s.name, s.parent_id) for s in spans]}")
            time.sleep(0.05)


@contextmanager
def running_otlp_receiver() -> Iterator[OtlpReceiver]:
    """An OTLP/HTTP receiver on 127.0.0.1 (POST /v1/traces, protobuf)."""
    receiver = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            request = ExportTraceServiceRequest.FromString(body)
            received = []
            for resource_spans in request.resource_spans:
                resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
                for scope_spans in resource_spans.scope_spans:
                    for span in scope_spans.spans:
                        received.append(
                            ReceivedSpan(
                                name=span.name,
                                trace_id=span.trace_id.hex(),
                                span_id=span.span_id.hex(),
                                parent_id=span.parent_span_id.hex(),
                                kind=span.kind,
                                attributes={a.key: _value(a.value) for a in span.attributes},
                                error=span.status.code == 2,
                                service=str(resource.get("service.name")),
                            )
                        )
            with receiver.lock:
                receiver.requests += 1
                receiver.spans.extend(received)
            answer = ExportTraceServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *_args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.url = f"http://127.0.0.1:{server.server_address[1]}/v1/traces"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield receiver
    finally:
        server.shutdown()
        server.server_close()
