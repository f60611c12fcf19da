"""The management API's resolver: every resource's router, the error mapping, and `serve`,
which refuses unsafe input before the routes see it. One resolver per thread (decision
0011); routers are built per resolver, never shared between two (decision 0029)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver

from hookline.api import errors
from hookline.api.edge import Edge, Identify, from_identity
from hookline.api.inputs import refusal
from hookline.api.routes import ROUTERS


def build_app(identify: Identify = from_identity) -> APIGatewayRestResolver:
    """The routes, with callers identified by `identify` (the request's IAM identity or
    bearer key; `edge.trusted(caller)` for code in this process)."""
    app = APIGatewayRestResolver(enable_validation=True)
    edge = Edge(app, identify)
    for router in ROUTERS:
        app.include_router(router(edge))
    errors.register(app)
    return app


def serve(app: APIGatewayRestResolver, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The answer to one API Gateway proxy event: refused at once when its input cannot be
    served (415, 400 naming the field), else the route's."""
    refused = refusal(event)
    if refused is not None:
        return refused
    return app.resolve(event, context)
