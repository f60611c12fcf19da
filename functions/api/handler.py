"""Management API: proxy events for `/v1/*` in (REST payload 1.0, or 2.0 from an HTTP API or
a function URL, as `infrastructure.ingress` chose), JSON out.

The routes, one router per resource, live in the core library (`hookline.api`), so the
in-process CLI answers with the same code; this module only wires them into the function.
Callers are identified by IAM (on AWS) or a local bearer key (in development), and every
query is scoped to the caller's tenant. The OpenAPI document is generated from the routes
(`hookline.api.openapi`, committed as docs/openapi.json).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.ingress import event_ingress, per_thread_and_ingress
from hookline.observability import logger, metrics, tracer

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver


def _build(ingress: str) -> ApiGatewayResolver:
    """The resolver, its routes, models and services imported when the first request needs
    them rather than at Lambda's init (issue 24's cold start; docs/performance.md)."""
    from hookline.api import build_app

    return build_app(ingress=ingress)


# One resolver per thread and front door: REST (payload 1.0), HTTP API or function URL (2.0).
current_app = per_thread_and_ingress(_build)


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    from hookline.api import serve  # loaded with the resolver on the first request

    return serve(current_app(event_ingress(event)), event, context)
