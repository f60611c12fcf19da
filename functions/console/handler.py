"""Console function: the operator console (`/console/*`) and the tenant portal (`/portal/*`),
server-rendered HTML over the management services (hookline.console)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.console.app import build_app
from hookline.console.mount import prefix_response, stage_prefix
from hookline.console.url_events import as_rest_event, as_url_response
from hookline.ingress import event_ingress
from hookline.observability import flush_traces, logger
from hookline.problems import per_thread

current_app = per_thread(build_app)


@logger.inject_lambda_context(log_event=False)
@flush_traces
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point: REST-shaped events (REST API, HTTP API payload 1.0), or a
    function URL's, translated at the edge (hookline.console.url_events)."""
    if event_ingress(event) == "function_url":
        return as_url_response(current_app().resolve(as_rest_event(event), context))
    # On a REST API's own host the browser's paths carry the stage (hookline.console.mount).
    return prefix_response(current_app().resolve(event, context), stage_prefix(event))
