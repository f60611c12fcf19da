"""The management API's resolver: the resources' routers, the error mapping, and `serve`,
which refuses unsafe input before the routes see it. One resolver per thread (decision
0011); routers are built per resolver, never shared between two (decision 0029). The
function builds one per resource segment a request names, with only that resource's routers
(decision 0079); the document and the CLI build one with every router."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

from hookline.api import errors
from hookline.api.edge import Edge, Identify, from_identity
from hookline.api.inputs import refusal
from hookline.api.routes import routers_for, segment_of
from hookline.ingress import new_resolver


def build_app(
    identify: Identify = from_identity, ingress: str = "rest", segment: str | None = None
) -> ApiGatewayResolver:
    """The routes, with callers identified by `identify` (the request's IAM identity or
    bearer key; `edge.trusted(caller)` for code in this process), on the resolver of the
    front door `ingress` puts before them (payload 1.0 or 2.0, decision 0035); only those
    under `/v1/<segment>` where a segment is given (`hookline.api.routes.segment_of`)."""
    app = new_resolver(ingress, enable_validation=True)
    edge = Edge(app, identify)
    for router in routers_for(segment):
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


def request_segment(event: dict[str, Any]) -> str | None:
    """The resource segment an API Gateway proxy event's path names (payload 1.0's `path`,
    2.0's `rawPath`), None where it names no known one."""
    return segment_of(str(event.get("rawPath") or event.get("path") or "/"))
