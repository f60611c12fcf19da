"""The console function's resolver: the console's and the portal's routes, and error pages.

Each page module says which paths its routes start with (`PAGES`: the first two segments);
the function builds a resolver per set of modules a request's path needs (`pages_for`), so a
cold container imports the pages it is asked for, not every page and the services behind
them (decision 0079). Sign-in is in every resolver: its exception handlers send a request
without a session to sign in."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline import errors
from hookline.console import signin, web
from hookline.problems import status_for

if TYPE_CHECKING:
    from types import ModuleType

# Page module under hookline.console (registered in this order) → the first two segments of
# the paths its routes take (tests/unit/test_console_pages.py holds each route to its module).
PAGES: dict[str, tuple[str, ...]] = {
    "operator": (
        "console", "console/static", "console/events", "console/deliveries",
        "console/replays", "console/endpoints", "console/tenants", "console/event-types",
        "console/audit",
    ),
    "operator_dlq": ("console/dlq",),
    "operator_sources": ("console/sources",),
    "operator_endpoint_edit": ("console/endpoints",),
    "operator_quarantine": ("console/quarantine",),
    "portal": (
        "portal", "portal/login", "portal/signout", "portal/theme.css", "portal/endpoints",
        "portal/event-types", "portal/deliveries",
    ),
}  # fmt: skip
# Sign-in's own routes (hookline.console.signin), which every resolver has.
SIGNIN = ("console/callback", "console/login", "console/signout", "console/signed-out")
AREAS = ("console", "portal")


def pages_for(path: str) -> tuple[str, ...]:
    """The page modules whose routes a request's path may take, in registration order: those
    listing its first two segments from `/console` or `/portal` on (what comes before, a
    stage, is skipped); none for sign-in's own routes; every module where the path names
    nothing listed."""
    parts = path.split("/")
    keys = {
        "/".join(part for part in parts[i : i + 2] if part)
        for i, part in enumerate(parts)
        if part in AREAS
    }
    wanted = tuple(name for name, prefixes in PAGES.items() if keys & set(prefixes))
    if wanted or keys & set(SIGNIN):
        return wanted
    return tuple(PAGES)


def import_pages(pages: tuple[str, ...] = tuple(PAGES)) -> list[ModuleType]:
    """The modules of `pages` (every page module by default), imported on first use."""
    return [import_module(f"hookline.console.{name}") for name in pages]


def build_app(pages: tuple[str, ...] = tuple(PAGES)) -> APIGatewayRestResolver:
    """One resolver (per thread: docs/decisions/0011-thread-safe-handlers.md) with sign-in
    and the routes of `pages` (every page module by default)."""
    app = APIGatewayRestResolver()
    signin.register(app)
    for module in import_pages(pages):
        module.register(app)

    def domain_error(err: errors.HooklineError) -> Response[str]:
        status = 401 if isinstance(err, errors.SessionInvalid) else int(status_for(err))
        if status >= 500:
            message = "Hookline cannot answer right now: try again in a moment"
        else:
            message = str(err)
        area = "portal" if app.current_event.path.startswith("/portal") else "console"
        return web.page("refused.html", {"message": message, "area": area}, status=status)

    app.exception_handler(errors.HooklineError)(domain_error)

    @app.not_found
    def no_route(_: Exception) -> Response[str]:
        return web.page("refused.html", {"message": "no such page", "area": "console"}, status=404)

    return app
