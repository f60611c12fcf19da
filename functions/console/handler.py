"""Console function: the operator console (`/console/*`) and the tenant portal (`/portal/*`),
server-rendered HTML over the management services (hookline.console)."""

from __future__ import annotations

import os
from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.console.app import build_app, import_pages, pages_for
from hookline.console.mount import prefix_response, stage_prefix
from hookline.console.url_events import as_rest_event, as_url_response
from hookline.ingress import event_ingress
from hookline.observability import flush_traces, logger
from hookline.problems import per_thread_and_key

# One resolver per thread and set of pages: a cold container imports the pages (and the
# services behind them) of the path it is asked for, on that first request; an environment
# initialised ahead of requests (provisioned concurrency) imports them all now (decision 0079).
current_app = per_thread_and_key(build_app)
if os.environ.get("AWS_LAMBDA_INITIALIZATION_TYPE") == "provisioned-concurrency":
    import_pages()


@logger.inject_lambda_context(log_event=False)
@flush_traces
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point: REST-shaped events (REST API, HTTP API payload 1.0), or a
    function URL's, translated at the edge (hookline.console.url_events)."""
    if event_ingress(event) == "function_url":
        rest = as_rest_event(event)
        return as_url_response(current_app(pages_for(rest["path"])).resolve(rest, context))
    # On a REST API's own host the browser's paths carry the stage (hookline.console.mount).
    app = current_app(pages_for(str(event.get("path") or "/")))
    return prefix_response(app.resolve(event, context), stage_prefix(event))
