"""`/v1/status`: what is pending, failing and flowing, in the caller's scope."""

from __future__ import annotations

from aws_lambda_powertools.event_handler.api_gateway import Router

from hookline.api.edge import Edge, new_router
from hookline.api.params import ok
from hookline.db import get_database
from hookline.management import delivery_models as m
from hookline.management import delivery_service


def router(edge: Edge) -> Router:
    """The status route."""
    routes = new_router()

    @routes.get("/v1/status", responses=ok(m.Status), tags=["status"], summary="Status summary")
    def status() -> m.Status:
        return m.Status(**delivery_service.status(get_database(), edge.caller()))

    return routes
