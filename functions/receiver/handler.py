"""Receiver: proxy events in — API Gateway REST (payload 1.0), HTTP API or a function URL
(2.0), whichever `infrastructure.ingress` put in front (`hookline.ingress`) — verified events
into the ledger.

Route: POST /in/{source_id} (provider webhooks; the signature is the auth). `/v1` is the
management API's (functions/api; API Gateway routes `/v1/{proxy+}` there). The receiver keeps
`POST /v1/events` only for a local front that sends every path here (`hookline dev`), through
the same caller scoping and publish service as the API, until that front routes /v1 to the API.
"""

from __future__ import annotations

import base64
import binascii
import json
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.metrics import MetricUnit, single_metric
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline import errors
from hookline.db import get_database
from hookline.ingest import Accepted, receive_inbound
from hookline.ingress import event_ingress, iam_principal, new_resolver, per_thread_and_ingress
from hookline.management import service as management
from hookline.management.access import resolve_caller
from hookline.nudge import nudge_fanout
from hookline.observability import NAMESPACE, logger, metrics, tracer
from hookline.problems import error_response, header, problem, status_for
from hookline.settings import get_settings


def build_app(ingress: str = "rest") -> ApiGatewayResolver:
    """The routes, on the resolver of `ingress`. One resolver per thread: a resolver holds the
    current event, and the local runner and benchmarks call this handler from several threads
    at once (on AWS each container runs one invocation at a time)."""
    app = new_resolver(ingress)

    @app.post("/in/<source_id>")
    def receive(source_id: str) -> Response[str]:
        """A provider's webhook: verify, store once, answer."""
        settings = get_settings()
        accepted = receive_inbound(
            get_database(),
            source_id,
            app.current_event.headers or {},
            raw_body(app, settings.max_body_bytes),
            max_body_bytes=settings.max_body_bytes,
        )
        return accepted_response(accepted)

    @app.post("/v1/events")
    def publish_event() -> Response[str]:
        """A tenant's own event (the management API's route; see the module docstring)."""
        settings = get_settings()
        caller = resolve_caller(
            get_database(),
            settings,
            identity_arn=iam_principal(app.current_event.raw_event),
            authorization=header(app, "Authorization"),
        )
        document = parse_json_object(raw_body(app, settings.max_body_bytes))
        missing = [k for k in ("type", "payload") if k not in document]
        if missing:
            raise errors.BadRequest(f"missing field(s): {', '.join(missing)}")
        accepted = management.publish_event(
            get_database(),
            caller,
            tenant_id=document.get("tenant_id"),
            type=document["type"],
            payload=document["payload"],
            idempotency_key=header(app, "Idempotency-Key"),
        )
        return accepted_response(accepted)

    @app.route("/in/<source_id>", method=["GET", "PUT", "PATCH", "DELETE"])
    def method_not_allowed(source_id: str) -> Response[str]:
        """Providers only POST."""
        return problem(HTTPStatus.METHOD_NOT_ALLOWED, "use POST", {"Allow": "POST"})

    app.exception_handler(errors.HooklineError)(domain_error)
    return app


current_app = per_thread_and_ingress(build_app)


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


def parse_json_object(body: bytes) -> dict[str, Any]:
    """The request's JSON object, or BadRequest."""
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, ValueError) as err:
        raise errors.BadRequest("body is not valid JSON") from err
    if not isinstance(document, dict):
        raise errors.BadRequest("body must be a JSON object")
    return document


def accepted_response(accepted: Accepted) -> Response[str]:
    """200 with the event id; counts the outcome and nudges fan-out for new events."""
    logger.set_correlation_id(accepted.id)
    if accepted.duplicate:
        metrics.add_metric(name="EventsDuplicate", unit=MetricUnit.Count, value=1)
    else:
        metrics.add_metric(name="EventsAccepted", unit=MetricUnit.Count, value=1)
        nudge_fanout(get_settings())
    logger.info(
        "event accepted", extra={"duplicate": accepted.duplicate, "tenant": accepted.tenant_id}
    )
    return Response(
        status_code=200,
        content_type="application/json",
        body=json.dumps({"id": accepted.id, "duplicate": accepted.duplicate}),
    )


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    return current_app(event_ingress(event)).resolve(event, context)
