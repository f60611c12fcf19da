"""Receiver: proxy events in — API Gateway REST (payload 1.0), HTTP API or a function URL
(2.0), whichever `infrastructure.ingress` put in front (`hookline.ingress`) — verified events
into the ledger.

Route: POST /in/{source_id} (provider webhooks; the signature is the auth), and GET for the
providers that handshake with GET (Meta, X, Dropbox, Okta; others get 405). `/v1` is the
management API's (functions/api): API Gateway routes `/v1/{proxy+}` there, and so does the
local front (`hookline dev`).

One route needs no resolver: the request is read straight from the event and the answer is
the proxy integration's dict (decision 0074). Nothing here is shared between requests but the
process's collaborators, so threads of the local runner can call it at once.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
from collections.abc import Callable
from functools import partial
from http import HTTPStatus
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline import errors
from hookline.db import get_database
from hookline.ingest import Accepted, Handshook, receive_inbound
from hookline.ingress import ProxyRequest, proxy_request, proxy_response
from hookline.nudge import after_accept
from hookline.observability import (
    NAMESPACE,
    InvocationCounts,
    flush_traces,
    log_success,
    logger,
)
from hookline.problems import PROBLEM, problem_json, retry_headers, status_for
from hookline.records import frozen
from hookline.runtime import (
    fanout_options,
    guarded_http_client,
    receipt_queues,
    source_cache,
    tracing,
)
from hookline.settings import Settings, get_settings

if TYPE_CHECKING:
    import httpx

    from hookline.fanout import FanoutOptions
    from hookline.repositories.sources_cache import SourceCache

ROUTE_PREFIX = "/in/"
ONLY_POST = {"Allow": "POST"}


@frozen
class Wiring:
    """What every request under one settings object uses, looked up once: each factory's cache
    hashes the whole settings on every call, which cost more than the rest of the wiring."""

    settings: Settings
    # The SSRF-guarded client, one per process, for SNS certificates and confirmations: built
    # when an SNS source first needs it, as no other scheme does (httpx, ~40 modules: 0083).
    http: Callable[[], httpx.Client]
    fanout: FanoutOptions | None  # fan-out at receipt (decision 0076)
    sources: SourceCache  # sources kept a few seconds (decision 0074)


_wired: list[Wiring] = []

# A source's first request imports its scheme's verifier (decision 0083); an environment
# initialised ahead of requests (provisioned concurrency) imports every scheme's now.
if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "provisioned-concurrency":
    import hookline.verifiers.schemes  # noqa: F401


def wiring() -> Wiring:
    """The wiring of the current settings (built again when they are read again)."""
    settings = get_settings()
    for wired in _wired:
        if wired.settings is settings:
            return wired
    fanout = fanout_options(settings) if settings.fanout_at_receipt else None
    http = partial(guarded_http_client, settings)  # SNS sources only (decision 0083)
    wired = Wiring(settings, http, fanout, source_cache(settings))
    _wired[:] = [wired]
    return wired


def receive(request: ProxyRequest, counts: InvocationCounts) -> dict[str, Any]:
    """Route one request: POST (or a GET handshake) to `/in/{source_id}`; a domain error
    becomes its problem answer. An accepted event's counts go to `counts`."""
    source_id = request.path_parameter(ROUTE_PREFIX)
    if source_id is None:
        return problem(HTTPStatus.NOT_FOUND, "no such route")
    if request.method not in ("POST", "GET"):
        return problem(HTTPStatus.METHOD_NOT_ALLOWED, "use POST", ONLY_POST)
    try:
        return inbound(request, source_id, counts)
    except errors.MethodNotAllowed:
        return problem(HTTPStatus.METHOD_NOT_ALLOWED, "use POST", ONLY_POST)
    except errors.HooklineError as err:
        return domain_error(err)


def inbound(request: ProxyRequest, source_id: str, counts: InvocationCounts) -> dict[str, Any]:
    """Receive one provider request; a handshake is answered and counted, never stored."""
    wired = wiring()
    settings = wired.settings
    method = request.method
    attributes = {"hookline.source_id": source_id[:64], "http.request.method": method}
    with tracing(settings).root("receive", kind="server", attributes=attributes) as span:
        result = receive_inbound(
            get_database(),
            source_id,
            request.headers,
            raw_body(request, settings.max_body_bytes) if method == "POST" else b"",
            max_body_bytes=settings.max_body_bytes,
            method=method,
            query=request.query,
            url=request_url(request),
            http=wired.http,
            max_depth=settings.catalogue_limits.payload_max_depth,
            traceparent=span.traceparent if span else None,
            fanout=wired.fanout,
            sources=wired.sources,
        )
        if span is not None and isinstance(result, Accepted):
            span.set({"hookline.event_id": result.id, "hookline.duplicate": result.duplicate})
    if isinstance(result, Handshook):
        return handshake_response(result)
    return accepted_response(result, wired.settings, counts)


def request_url(request: ProxyRequest) -> str | None:
    """The URL the request reached, as far as API Gateway tells (a source's `public_url`
    overrides it for providers that sign their URL)."""
    host = request.header("host")
    if not host:
        return None
    proto = request.header("x-forwarded-proto") or "https"
    query = request.query
    return f"{proto}://{host}{request.url_path}" + ("?" + urlencode(query) if query else "")


def handshake_response(handshook: Handshook) -> dict[str, Any]:
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
    return proxy_response(answer.status, answer.body, answer.content_type, answer.headers)


def problem(
    status: HTTPStatus, detail: str, headers: dict[str, str] | None = None
) -> dict[str, Any]:
    """An `application/problem+json` answer."""
    return proxy_response(int(status), problem_json(status, detail), PROBLEM, headers)


def domain_error(err: errors.HooklineError) -> dict[str, Any]:
    """Map a domain error to its status code with a message safe to show the caller."""
    status = status_for(err)
    with single_metric(
        name="EventsRejected", unit=MetricUnit.Count, value=1, namespace=NAMESPACE
    ) as metric:
        metric.add_dimension(name="Reason", value=status.phrase.replace(" ", ""))
    logger.info("request rejected", extra={"status": int(status), "reason": str(err)})
    return problem(status, str(err), retry_headers(status))


def raw_body(request: ProxyRequest, limit: int) -> bytes:
    """The body bytes exactly as the caller sent them (API Gateway may base64 them)."""
    body = request.body
    if request.base64_encoded:
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


def accepted_response(
    accepted: Accepted, settings: Settings, counts: InvocationCounts
) -> dict[str, Any]:
    """200 with the event id; counts the outcome and sends or nudges what a new event needs."""
    if accepted.duplicate:
        counts.count("EventsDuplicate")
    else:
        counts.count("EventsAccepted")
        after_accept(
            settings,
            accepted.fanned_out,
            accepted.to_send,
            lambda: receipt_queues(settings),
            counts.count,
            accepted.carried,
        )
    log_success(
        "event accepted",
        duplicate=accepted.duplicate,
        tenant=accepted.tenant_id,
        correlation_id=accepted.id,
    )
    body = accepted.answer or json.dumps({"id": accepted.id, "duplicate": accepted.duplicate})
    return proxy_response(200, body, "application/json")


@logger.inject_lambda_context(log_event=False)
@flush_traces
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point. The invocation's counts are one EMF line, printed however it ends
    (as Powertools' `log_metrics` would; decision 0077)."""
    counts = InvocationCounts()
    try:
        return receive(proxy_request(event), counts)
    finally:
        counts.flush()
