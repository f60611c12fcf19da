"""One router per resource; `ROUTERS` builds them in the order the document lists them."""

from __future__ import annotations

from collections.abc import Callable

from aws_lambda_powertools.event_handler.api_gateway import Router

from hookline.api.edge import Edge
from hookline.api.routes import (
    deliveries,
    endpoints,
    event_types,
    events,
    health,
    quarantine,
    replays,
    restores,
    sources,
    status,
    tenants,
)

ROUTERS: tuple[Callable[[Edge], Router], ...] = (
    tenants.router,
    sources.router,
    endpoints.router,
    health.router,
    events.router,
    deliveries.router,
    quarantine.router,
    event_types.router,
    replays.router,
    restores.router,
    status.router,
)
