"""The console function's resolver: the console's and the portal's routes, and error pages."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline import errors
from hookline.console import (
    operator,
    operator_dlq,
    operator_endpoint_edit,
    operator_quarantine,
    operator_sources,
    portal,
    signin,
    web,
)
from hookline.problems import status_for


def build_app() -> APIGatewayRestResolver:
    """One resolver (per thread: docs/decisions/0011-thread-safe-handlers.md)."""
    app = APIGatewayRestResolver()
    signin.register(app)
    operator.register(app)
    for pages in (operator_dlq, operator_sources, operator_endpoint_edit, operator_quarantine):
        pages.register(app)
    portal.register(app)

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
