"""The management API's resolver: every resource's router, the error mapping, and `serve`,
which refuses unsafe input before the routes see it. One resolver per thread (decision
0011); routers are built per resolver, never shared between two (decision 0029)."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

from hookline.api import errors
from hookline.api.edge import Edge, Identify, from_identity
from hookline.api.inputs import refusal
from hookline.api.routes import ROUTERS
from hookline.ingress import new_resolver


def build_app(identify: Identify = from_identity, ingress: str = "rest") -> ApiGatewayResolver:
    """The routes, with callers identified by `identify` (the request's IAM identity or
    bearer key; `edge.trusted(caller)` for code in this process), on the resolver of the
    front door `ingress` puts before them (payload 1.0 or 2.0, decision 0035)."""
    app = new_resolver(ingress, enable_validation=True)
    edge = Edge(app, identify)
    for router in ROUTERS:
        app.include_router(router(edge))
    errors.register(app)
    return app


def serve(app: ApiGatewayResolver, event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The answer to one API Gateway proxy event: refused at once when its input cannot be
    served (415, 400 naming the field), else the route's."""
    refused = refusal(event)
    if refused is not None:
        return refused
    return app.resolve(event, context)
