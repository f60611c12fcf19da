"""Receiver: proxy events in — API Gateway REST (payload 1.0), HTTP API or a function URL
(2.0), whichever `infrastructure.ingress` put in front (`hookline.ingress`) — verified events
into the ledger.

Route: POST /in/{source_id} (provider webhooks; the signature is the auth), and GET for the
providers that handshake with GET (Meta, X, Dropbox, Okta; others get 405). `/v1` is the
management API's (functions/api): API Gateway routes `/v1/{proxy+}` there, and so does the
local front (`hookline dev`).
"""

from __future__ import annotations

import base64
import binascii
import json
from http import HTTPStatus
from typing import Any
from urllib.parse import urlencode

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline import errors
from hookline.db import get_database
from hookline.ingest import Accepted, Handshook, receive_inbound
from hookline.ingress import event_ingress, new_resolver, per_thread_and_ingress
from hookline.nudge import after_accept
from hookline.observability import NAMESPACE, flush_traces, log_success, logger, metrics
from hookline.problems import error_response, header, problem, status_for
from hookline.runtime import fanout_options, http_client, receipt_queues, tracing
from hookline.settings import get_settings


def build_app(ingress: str = "rest") -> ApiGatewayResolver:
    """The routes, on the resolver of `ingress`. One resolver per thread: a resolver holds the
    current event, and the local runner and benchmarks call this handler from several threads
    at once (on AWS each container runs one invocation at a time)."""
    app = new_resolver(ingress)

    @app.post("/in/<source_id>")
    def receive(source_id: str) -> Response[str]:
        """A provider's webhook or handshake: verify, store once (or answer), answer."""
        return inbound(app, source_id, "POST")

    @app.get("/in/<source_id>")
    def receive_get(source_id: str) -> Response[str]:
        """A provider's GET handshake; a GET to any other source is 405."""
        try:
            return inbound(app, source_id, "GET")
        except errors.MethodNotAllowed:
            return problem(HTTPStatus.METHOD_NOT_ALLOWED, "use POST", {"Allow": "POST"})

    @app.route("/in/<source_id>", method=["PUT", "PATCH", "DELETE"])
    def method_not_allowed(source_id: str) -> Response[str]:
        """Providers only POST."""
        return problem(HTTPStatus.METHOD_NOT_ALLOWED, "use POST", {"Allow": "POST"})

    app.exception_handler(errors.HooklineError)(domain_error)
    return app


current_app = per_thread_and_ingress(build_app)


def inbound(app: ApiGatewayResolver, source_id: str, method: str) -> Response[str]:
    """Receive one provider request; a handshake is answered and counted, never stored."""
    settings = get_settings()
    event = app.current_event
    attributes = {"hookline.source_id": source_id[:64], "http.request.method": method}
    with tracing(settings).root("receive", kind="server", attributes=attributes) as span:
        result = receive_inbound(
            get_database(),
            source_id,
            event.headers or {},
            raw_body(app, settings.max_body_bytes) if method == "POST" else b"",
            max_body_bytes=settings.max_body_bytes,
            method=method,
            query=event.query_string_parameters or {},
            url=request_url(app),
            http=http_client(settings),  # SSRF-guarded, one per process: SNS certificates
            max_depth=settings.catalogue_limits.payload_max_depth,
            traceparent=span.traceparent if span else None,
            fanout=fanout_options(settings) if settings.fanout_at_receipt else None,
        )
        if span is not None and isinstance(result, Accepted):
            span.set({"hookline.event_id": result.id, "hookline.duplicate": result.duplicate})
    if isinstance(result, Handshook):
        return handshake_response(result)
    return accepted_response(result)


def request_url(app: ApiGatewayResolver) -> str | None:
    """The URL the request reached, as far as API Gateway tells (a source's `public_url`
    overrides it for providers that sign their URL)."""
    event = app.current_event
    host = header(app, "Host")
    if not host:
        return None
    proto = header(app, "X-Forwarded-Proto") or "https"
    # REST's request context has the path with its stage; payload 2.0's `path` has it already
    context = getattr(event, "request_context", None)
    path = getattr(context, "path", None) or event.path
    query = event.query_string_parameters or {}
    return f"{proto}://{host}{path}" + ("?" + urlencode(query) if query else "")


def handshake_response(handshook: Handshook) -> Response[str]:
    """The provider's handshake answer, counted by scheme; no event, no fan-out."""
    answer = handshook.answer
    with single_metric(
        name="Handshakes", unit=MetricUnit.Count, value=1, namespace=NAMESPACE
    ) as metric:
        metric.add_dimension(name="Scheme", value=handshook.scheme)
    logger.info(
        "handshake answered",
        extra={"kind": answer.kind, "scheme": handshook.scheme, "tenant": handshook.tenant_id},
    )
    return Response(
        status_code=answer.status,
        content_type=answer.content_type,
        body=answer.body,
        headers=dict(answer.headers),
    )


def domain_error(err: errors.HooklineError) -> Response[str]:
    """Map a domain error to its status code with a message safe to show the caller."""
    status = status_for(err)
    with single_metric(
        name="EventsRejected", unit=MetricUnit.Count, value=1, namespace=NAMESPACE
    ) as metric:
        metric.add_dimension(name="Reason", value=status.phrase.replace(" ", ""))
    logger.info("request rejected", extra={"status": int(status), "reason": str(err)})
    return error_response(err)


def raw_body(app: ApiGatewayResolver, limit: int) -> bytes:
    """The body bytes exactly as the caller sent them (API Gateway may base64 them)."""
    event = app.current_event
    body = event.body or ""
    if event.is_base64_encoded:
        # Base64 is 4/3 the size: refuse an oversized body before decoding it.
        if len(body) > (limit // 3 + 1) * 4 + 4:
            raise errors.PayloadTooLarge(f"body exceeds {limit} bytes")
        try:
            return base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError) as err:
            raise errors.BadRequest("body is not valid base64") from err
    if len(body) > limit:
        raise errors.PayloadTooLarge(f"body exceeds {limit} bytes")
    return body.encode("utf-8", "surrogateescape")


def accepted_response(accepted: Accepted) -> Response[str]:
    """200 with the event id; counts the outcome and sends or nudges what a new event needs."""
    logger.set_correlation_id(accepted.id)
    if accepted.duplicate:
        metrics.add_metric(name="EventsDuplicate", unit=MetricUnit.Count, value=1)
    else:
        metrics.add_metric(name="EventsAccepted", unit=MetricUnit.Count, value=1)
        settings = get_settings()
        after_accept(
            settings, accepted.fanned_out, accepted.to_send, lambda: receipt_queues(settings)
        )
    log_success("event accepted", duplicate=accepted.duplicate, tenant=accepted.tenant_id)
    body = accepted.answer or json.dumps({"id": accepted.id, "duplicate": accepted.duplicate})
    return Response(status_code=200, content_type="application/json", body=body)


@logger.inject_lambda_context(log_event=False)
@flush_traces
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    return current_app(event_ingress(event)).resolve(event, context)
