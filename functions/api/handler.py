"""Management API: proxy events for `/v1/*` in (REST payload 1.0, or 2.0 from an HTTP API or
a function URL, as `infrastructure.ingress` chose), JSON out.

The routes, one router per resource, live in the core library (`hookline.api`), so the
in-process CLI answers with the same code; this module only wires them into the function.
Callers are identified by IAM (on AWS) or a local bearer key (in development), and every
query is scoped to the caller's tenant. The OpenAPI document is generated from the routes
(`hookline.api.openapi`, committed as docs/openapi.json).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.api.app import build_app, request_segment, serve
from hookline.api.routes import routers_for
from hookline.ingress import event_ingress
from hookline.observability import flush_traces, logger, metrics
from hookline.problems import per_thread_and_key

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler import ApiGatewayResolver


def _resolver(door: tuple[str, str | None]) -> ApiGatewayResolver:
    ingress, segment = door
    return build_app(ingress=ingress, segment=segment)


# One resolver per thread, front door (REST payload 1.0, HTTP API or function URL 2.0) and
# resource: a cold container imports the routes of the resource it is asked for, on that
# first request; an environment initialised ahead of requests (provisioned concurrency)
# imports every resource's now (decision 0079).
current_app = per_thread_and_key(_resolver)
if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "provisioned-concurrency":
    routers_for()


@logger.inject_lambda_context(log_event=False)
@flush_traces
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    return serve(current_app((event_ingress(event), request_segment(event))), event, context)
