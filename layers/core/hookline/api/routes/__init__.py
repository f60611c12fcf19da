"""One router per resource, in the order the document lists them, each with the first path
segments under `/v1` its routes start with. A request's resolver includes only the routers of
its segment (`routers_for`), so a cold container imports one resource's modules, not all
eleven (decision 0079); the document and the CLI include every router (`ROUTER_MODULES`)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from aws_lambda_powertools.event_handler.api_gateway import Router

    from hookline.api.edge import Edge

    RouterFactory = Callable[[Edge], Router]

# module under hookline.api.routes: the segments after /v1/ its routes start with
# (tests/unit/test_api_routes.py holds each route to its module's segments).
ROUTER_MODULES: dict[str, tuple[str, ...]] = {
    "tenants": ("tenants",),
    "sources": ("sources",),
    "endpoints": ("endpoints",),
    "health": ("endpoints", "tenants"),
    "events": ("events",),
    "deliveries": ("deliveries",),
    "quarantine": ("fanout-quarantine",),
    "event_types": ("event-types",),
    "replays": ("replays",),
    "restores": ("restores",),
    "status": ("status",),
}
SEGMENTS = frozenset(s for segments in ROUTER_MODULES.values() for s in segments)


def segment_of(path: str) -> str | None:
    """The resource segment a request's path names (`/v1/endpoints/ep_1` → `endpoints`);
    None where the path names no known one (a prefix before `/v1`, a stage, is skipped)."""
    parts = path.split("/")
    found = {parts[i + 1] for i, part in enumerate(parts[:-1]) if part == "v1"} & SEGMENTS
    # Two candidates (a stage named like a resource) are ambiguous: every router answers.
    return found.pop() if len(found) == 1 else None


def routers_for(segment: str | None = None) -> list[RouterFactory]:
    """The routers whose routes start with `/v1/<segment>`, in document order; every router
    where `segment` is None. Each router's module is imported here, on first use."""
    return [
        import_module(f"hookline.api.routes.{name}").router
        for name, segments in ROUTER_MODULES.items()
        if segment is None or segment in segments
    ]
