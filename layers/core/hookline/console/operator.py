"""The operator console's routes (`/console/*`): every read and action is a management
service call made as an operator, so scope and audit are the API's.

Who is an operator: on AWS, a Cognito user in the operator group, signed in through the hosted
UI (hookline.console.signin); locally (`HOOKLINE_LOCAL_MODE`), a caller on loopback with
the dev stack's operator key, as its API takes it (hookline.console.signin.local_operator).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline import replay as replays
from hookline.console import actions, charts, cognito, endpoint_edit, signin, web
from hookline.db import get_database
from hookline.errors import BadRequest, Unauthorized
from hookline.management import (
    delivery_service,
    endpoint_service,
    event_service,
    portal_links,
    tenant_service,
)
from hookline.management import event_types as catalogue
from hookline.management.access import Caller
from hookline.repositories import console as console_repo
from hookline.runtime import replay_starter
from hookline.sessions import csrf_token, session_key
from hookline.settings import get_settings

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead", "held")


def operator(app: APIGatewayRestResolver) -> Caller:
    """The operator making this request: signed in through Cognito where a user pool is
    configured (hookline.console.signin), else anyone on loopback in local mode; otherwise
    Unauthorized (403)."""
    who = signin.signed_in_operator(app)
    if who is not None:
        return who
    host = web.header_of(app, "Host").rsplit(":", 1)[0]
    if get_settings().local_mode and host in ("127.0.0.1", "localhost"):
        return signin.local_operator(app, get_settings())
    raise Unauthorized("sign in as an operator to use the console")


Action = Callable[[Caller, dict[str, str]], Response[str]]


def render_page(
    app: APIGatewayRestResolver, name: str, context: dict[str, Any], status: int = 200
) -> Response[str]:
    """A console page, with the CSRF token of this browser (and its cookie when new)."""
    seed, new = web.console_csrf_seed(app, web.secure_cookies(app, get_settings().local_mode))
    token = csrf_token(session_key(get_settings()), seed)
    settings = get_settings()
    signs_in = cognito.UserPool.from_settings(settings) is not None or bool(
        settings.local_mode and settings.api_key
    )
    full = {
        "csrf": token,
        "area": "console",
        "base": "/console",
        "sign_out": signs_in,
        **context,
    }
    return web.page(name, full, status=status, cookies=[new] if new else None)


def run_changing(app: APIGatewayRestResolver, action: Action) -> Response[str]:
    """Run a state-changing request's `action` as the operator, if it carries its CSRF token
    (else a 403 page, nothing done)."""
    who = operator(app)
    submitted = web.form(app)
    seed = web.cookies_of(app).get(web.CSRF_COOKIE)
    if not web.check_csrf(session_key(get_settings()), seed, submitted, app):
        message = {"message": "this form has expired: reload the page"}
        return render_page(app, "refused.html", message, 403)
    return action(who, submitted)


def register(app: APIGatewayRestResolver) -> None:
    """Add the console's routes to `app`."""

    def render(name: str, context: dict[str, Any], status: int = 200) -> Response[str]:
        return render_page(app, name, context, status)

    def changing(action: Action) -> Response[str]:
        return run_changing(app, action)

    @app.get("/console/static/<name>")
    def asset(name: str) -> Response[str]:
        return web.static(name)

    @app.get("/console")
    def status_page() -> Response[str]:
        who = operator(app)
        db, settings = get_database(), get_settings()
        from hookline.runtime import delivery_queues
        from hookline.status import collect_status

        pipeline = collect_status(db, delivery_queues(settings), settings.config)
        with db.connection() as conn:
            hours = console_repo.attempts_by_hour(conn)
            latency = console_repo.attempt_latency_by_hour(conn)
            backlog = console_repo.backlog_by_hour(conn)
        summary = delivery_service.status(db, who)
        now = datetime.now(UTC)
        frame = {"width": charts.WIDTH, "height": charts.HEIGHT, "pad": charts.PAD}
        lines, latency_top = charts.latency_lines(latency, now)
        backlog_bars, backlog_top = charts.backlog_bars(backlog, now)
        context = {
            "pipeline": pipeline,
            "summary": summary,
            "chart": {**frame, "bars": charts.success_rate_bars(hours, now)},
            "latency": {**frame, "lines": lines, "top": latency_top},
            "backlog": {**frame, "bars": backlog_bars, "top": backlog_top},
        }
        return render("status.html", context)

    @app.get("/console/events")
    def events() -> Response[str]:
        who = operator(app)
        q = web.query(app)
        filters: dict[str, Any] = {k: q.get(k) for k in ("tenant_id", "type", "source_id")}
        for name in ("since", "until"):
            if q.get(name):
                filters[name] = _instant(q[name])
        page = event_service.list_events(
            get_database(), who, filters=filters, cursor=None, limit=50
        )
        return render("events.html", {"q": q, "events": page["items"]})

    @app.get("/console/events/<event_id>")
    def event(event_id: str) -> Response[str]:
        who = operator(app)
        db = get_database()
        found = event_service.get_event(db, who, event_id)
        deliveries = delivery_service.list_deliveries(
            db, who, filters={"event_id": event_id}, cursor=None, limit=50
        )["items"]
        return render("event.html", {"event": found, "deliveries": deliveries})

    @app.get("/console/deliveries")
    def deliveries() -> Response[str]:
        who = operator(app)
        return render("deliveries.html", actions.delivery_list(get_database(), who, web.query(app)))

    @app.get("/console/deliveries/<delivery_id>")
    def delivery(delivery_id: str) -> Response[str]:
        view = actions.delivery_view(get_database(), operator(app), delivery_id)
        return render("delivery.html", {**view, "notice": web.query(app).get("notice")})

    @app.post("/console/deliveries/<delivery_id>/resend")
    def resend(delivery_id: str) -> Response[str]:
        def act(who: Caller, _: dict[str, str]) -> Response[str]:
            done = actions.resend(get_database(), get_settings(), who, delivery_id)
            notice = "resent" if done["enqueued"] else "in-flight"
            return web.redirect(f"/console/deliveries/{delivery_id}?notice={notice}")

        return changing(act)

    @app.get("/console/replays")
    def replay_list() -> Response[str]:
        who = operator(app)
        page = replays.list_replays(
            get_database(), who, tenant_id=None, state=None, cursor=None, limit=20
        )
        return render("replays.html", {"replays": page["items"], "form": {}, "preview": None})

    @app.post("/console/replays")
    def replay_create() -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            doc = _replay_doc(submitted)
            if submitted.get("confirm") != "yes":
                preview = dry_run(who, doc)
                return render(
                    "replays.html", {"replays": [], "form": submitted, "preview": preview}
                )
            settings = get_settings()
            started = replays.create_replay(
                get_database(), who, doc, groups=settings.config.group_names,
                start=replay_starter(settings),  # the API's: the replay function, or a thread
            )  # fmt: skip
            return web.redirect(f"/console/replays/{started['id']}")

        return changing(act)

    @app.get("/console/replays/<replay_id>")
    def replay(replay_id: str) -> Response[str]:
        found = replays.get_replay(get_database(), operator(app), replay_id)
        return render("replay.html", {"replay": found})

    @app.get("/console/endpoints")
    def endpoints() -> Response[str]:
        return render("endpoints.html", _endpoints_page(operator(app), web.query(app), {}))

    @app.post("/console/endpoints")
    def add_endpoint() -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            tenant = submitted.get("tenant_id") or None
            try:
                created = endpoint_service.create_endpoint(
                    get_database(), get_settings(), who, actions.endpoint_body(submitted, tenant)
                )
            except BadRequest as err:
                context = _endpoints_page(who, {}, submitted)
                return render("endpoints.html", {**context, **endpoint_edit.refusal(err)}, 400)
            return render("secret.html", actions.created_view(created))

        return changing(act)

    @app.get("/console/endpoints/<endpoint_id>")
    def endpoint(endpoint_id: str) -> Response[str]:
        who, db = operator(app), get_database()
        view = actions.endpoint_view(db, get_settings(), who, endpoint_id)
        return render("endpoint.html", {**view, "notice": web.query(app).get("notice")})

    @app.post("/console/endpoints/<endpoint_id>/<action>")
    def endpoint_action(endpoint_id: str, action: str) -> Response[str]:
        def act(who: Caller, _: dict[str, str]) -> Response[str]:
            db = get_database()
            done = actions.endpoint_action(db, get_settings(), who, endpoint_id, action)
            if "secret" in done:
                shown = endpoint_service.get_endpoint(db, who, endpoint_id)
                return render("secret.html", {"endpoint": shown, **done})
            return web.redirect(f"/console/endpoints/{endpoint_id}?notice={done['notice']}")

        return changing(act)

    @app.get("/console/tenants")
    def tenants() -> Response[str]:
        who = operator(app)
        page = tenant_service.list_tenants(get_database(), who, cursor=None, limit=200)
        return render("tenants.html", {"tenants": page["items"]})

    @app.get("/console/tenants/<tenant_id>")
    def tenant(tenant_id: str) -> Response[str]:
        who = operator(app)
        found = tenant_service.get_tenant(get_database(), who, tenant_id)
        settings = portal_links.get_portal_settings(get_database(), who, tenant_id)
        notice = web.query(app).get("notice")
        return render("tenant.html", {"tenant": found, "portal": settings, "notice": notice})

    @app.post("/console/tenants/<tenant_id>/portal")
    def tenant_portal(tenant_id: str) -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            body = {**submitted, "frame_ancestors": submitted.get("frame_ancestors", "").split()}
            try:
                portal_links.set_portal_settings(get_database(), who, tenant_id, body)
            except BadRequest as err:
                found = tenant_service.get_tenant(get_database(), who, tenant_id)
                context = {"tenant": found, "portal": body, "error": str(err)}
                return render("tenant.html", context, 400)
            return web.redirect(f"/console/tenants/{tenant_id}?notice=portal-saved")

        return changing(act)

    @app.get("/console/event-types")
    def event_type_list() -> Response[str]:
        page = catalogue.list_event_types(
            get_database(), operator(app), tenant_id=None, name=None, archived=False,
            cursor=None, limit=200,
        )  # fmt: skip
        return render("event_types.html", {"event_types": page["items"]})

    @app.get("/console/audit")
    def audit_log() -> Response[str]:
        operator(app)
        with get_database().connection() as conn:
            entries = console_repo.recent_audit(conn, 100)
        return render("audit.html", {"entries": entries})


def _endpoints_page(who: Caller, q: dict[str, str], submitted: dict[str, str]) -> dict[str, Any]:
    db = get_database()
    page = endpoint_service.list_endpoints(
        db, who, tenant_id=q.get("tenant_id"), enabled=None, cursor=None, limit=100
    )
    tenants = tenant_service.list_tenants(db, who, cursor=None, limit=200)["items"]
    return {"endpoints": page["items"], "tenants": tenants, "q": q, "form": submitted}


def _instant(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError as err:
        raise BadRequest(f"not a date and time: {text!r}") from err
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def _replay_doc(submitted: dict[str, str]) -> dict[str, Any]:
    """A replay request from the console's form: a window (since, optional until, tenant,
    type, states) or delivery ids; the reason is required."""
    reason = submitted.get("reason", "").strip()
    if not reason:
        raise BadRequest("say why: a replay needs a reason (it goes in the audit log)")
    doc: dict[str, Any] = {"reason": reason}
    ids = [i.strip() for i in submitted.get("delivery_ids", "").split(",") if i.strip()]
    if ids:
        doc["delivery_ids"] = ids
    else:
        for name in ("since", "until", "tenant_id", "event_type"):
            if submitted.get(name):
                doc[name] = submitted[name]
        if submitted.get("state"):
            doc["states"] = [submitted["state"]]
    return doc


def dry_run(who: Caller, doc: dict[str, Any]) -> dict[str, Any]:
    """What the replay would touch (a dry run: audited, nothing sent)."""
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options

    settings = get_settings()
    summary = run_replay(
        get_database(), delivery_queues(settings),
        {**doc, "dry_run": True, "requested_by": who.principal}, replay_options(settings),
    )  # fmt: skip
    return summary
