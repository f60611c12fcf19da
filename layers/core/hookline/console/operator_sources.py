"""The console's sources (`/console/sources`): per tenant, each inbound source's URL, scheme,
when it was made and last rotated; create one, rotate its secret, disable, enable, delete.

Each action is the management service call the API and the CLI make (`create_source`,
`rotate_source_secret`, `set_source_enabled`, `delete_source`), audited the same way. A
secret is never shown, except the one Hookline generates, once, in the answer to the create
or rotation that made it (behind "Reveal"); one the operator pasted is not shown back.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline.console import web
from hookline.console.operator import operator, render_page, run_changing
from hookline.db import get_database
from hookline.errors import BadRequest
from hookline.management import source_service, tenant_service
from hookline.management.access import Caller
from hookline.repositories import console as console_repo
from hookline.verifiers.schemes import SCHEMES

ACTIONS = ("rotate", "enable", "disable", "delete")


def register(app: APIGatewayRestResolver) -> None:
    """Add the source pages and actions to `app`."""

    @app.get("/console/sources")
    def sources() -> Response[str]:
        context = _list(app, operator(app), web.query(app), {})
        return render_page(app, "sources.html", context)

    @app.post("/console/sources")
    def add_source() -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            body: dict[str, Any] = {
                "tenant_id": submitted.get("tenant_id") or None,
                "scheme": submitted.get("scheme", ""),
                "name": submitted.get("name", "").strip() or None,
                "secret": submitted.get("secret", "").strip() or None,
            }
            try:
                created = source_service.create_source(get_database(), who, body)
            except BadRequest as err:
                context = _list(app, who, {}, submitted)
                return render_page(app, "sources.html", {**context, "error": str(err)}, 400)
            return _revealed(app, created, created["secret"], created=True)

        return run_changing(app, act)

    @app.get("/console/sources/<source_id>")
    def source(source_id: str) -> Response[str]:
        who = operator(app)
        shown = _with_urls(app, [source_service.get_source(get_database(), who, source_id)])[0]
        context = {"source": shown, "notice": web.query(app).get("notice")}
        return render_page(app, "source.html", context)

    @app.post("/console/sources/<source_id>/<action>")
    def source_action(source_id: str, action: str) -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            db = get_database()
            if action not in ACTIONS:
                raise BadRequest(f"no action {action}")
            if action == "rotate":
                rotated = source_service.rotate_source_secret(
                    db, who, source_id, secret=submitted.get("secret", "").strip() or None,
                    keep_previous=submitted.get("keep_previous") == "yes",
                )  # fmt: skip
                shown = source_service.get_source(db, who, source_id)
                return _revealed(app, shown, rotated["secret"], created=False, rotated=rotated)
            if action == "delete":
                if submitted.get("confirm") != "yes":
                    raise BadRequest("tick the box to confirm the delete")
                source_service.delete_source(db, who, source_id)
                return web.redirect("/console/sources?notice=deleted")
            source_service.set_source_enabled(db, who, source_id, enabled=action == "enable")
            return web.redirect(f"/console/sources/{source_id}?notice={action}d")

        return run_changing(app, act)


def _list(
    app: APIGatewayRestResolver, who: Caller, q: dict[str, str], submitted: dict[str, str]
) -> dict[str, Any]:
    db = get_database()
    page = source_service.list_sources(
        db, who, tenant_id=q.get("tenant_id"), cursor=None, limit=200
    )
    tenants = tenant_service.list_tenants(db, who, cursor=None, limit=200)["items"]
    return {
        "sources": _with_urls(app, page["items"]),
        "tenants": tenants,
        "schemes": sorted(SCHEMES),
        "q": q,
        "form": submitted,
        "notice": q.get("notice"),
    }


def _with_urls(app: APIGatewayRestResolver, sources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sources with their inbound URL and when their secret was last rotated."""
    base = receiver_base_url(app)
    with get_database().connection() as conn:
        rotated = console_repo.source_rotations(conn, [s["id"] for s in sources])
    return [
        {
            **s,
            "inbound_url": (s.get("options") or {}).get("public_url") or base + s["path"],
            "rotated_at": rotated.get(s["id"]),
        }
        for s in sources
    ]


def receiver_base_url(app: APIGatewayRestResolver) -> str:
    """Where providers reach the receiver: the origin this page was served from (the
    receiver's `/in/{id}` sits behind the same front door: the dev stack's front locally, the
    API on AWS), with the stage when it is API Gateway's own execute-api host."""
    host = web.header_of(app, "Host") or "localhost"
    proto = web.header_of(app, "X-Forwarded-Proto") or "http"
    stage = (app.current_event.raw_event.get("requestContext") or {}).get("stage")
    prefix = f"/{stage}" if stage and host.endswith(".amazonaws.com") else ""
    return f"{proto}://{host}{prefix}"


def _revealed(
    app: APIGatewayRestResolver,
    source: dict[str, Any],
    secret: str | None,
    *,
    created: bool,
    rotated: dict[str, Any] | None = None,
) -> Response[str]:
    shown = _with_urls(app, [source])[0]
    context = {"source": shown, "secret": secret, "created": created, "rotated": rotated}
    return render_page(app, "source_secret.html", context)
