"""Management API: proxy events for `/v1/*` in (REST payload 1.0, or 2.0 from an HTTP API or
a function URL, as `infrastructure.ingress` chose), JSON out.

The routes, one router per resource, live in the core library (`hookline.api`), so the
in-process CLI answers with the same code; this module only wires them into the function.
Callers are identified by IAM (on AWS) or a local bearer key (in development), and every
query is scoped to the caller's tenant. The OpenAPI document is generated from the routes
(`hookline.api.openapi`, committed as docs/openapi.json).
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.api import build_app, serve
from hookline.ingress import event_ingress, per_thread_and_ingress
from hookline.observability import flush_traces, logger, metrics

# One resolver per thread and front door: REST (payload 1.0), HTTP API or function URL (2.0).
current_app = per_thread_and_ingress(lambda ingress: build_app(ingress=ingress))


@logger.inject_lambda_context(log_event=False)
@flush_traces
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    return serve(current_app(event_ingress(event)), event, context)
