"""The tenant portal's routes (`/portal/*`): what a tenant's own customers see.

A session starts from a portal link (`/portal/login?token=…`, made by `hookline portal link`
or the API). Opening the link shows which tenant's portal it opens and asks to confirm; the
confirming POST carries a CSRF token bound to this browser (the `hl_portal_login` cookie), so
no other site can sign a visitor into a session of its choosing (login CSRF), and a link
preview fetching the URL uses nothing. The POST uses the link, once, and its session becomes
the `hl_portal` cookie (HttpOnly, SameSite=Strict, Secure except on the dev stack's plain-http
loopback), expiring with the link. Sessions are rows (decision 0061): sign-out, a revoked
link and an erasure end them. Every request acts as a caller scoped to that tenant, so
another tenant's ids are answered as not found, as the API answers them.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline.console import actions, endpoint_edit, web
from hookline.db import get_database
from hookline.errors import BadRequest, SessionInvalid
from hookline.management import endpoint_service, portal_links, tenant_service
from hookline.management import event_types as catalogue
from hookline.management.access import Caller
from hookline.operational.catalogue import TYPES as OPERATIONAL_TYPES
from hookline.sessions import TenantSession, csrf_token, session_key
from hookline.settings import get_settings
from hookline.ssrf import check_url

COOKIE = "hl_portal"
LOGIN_COOKIE = "hl_portal_login"  # this browser's value the login form's CSRF token is bound to


def register(app: APIGatewayRestResolver) -> None:
    """Add the portal's routes to `app`."""

    def session() -> tuple[TenantSession, str]:
        value = web.cookies_of(app).get(COOKIE)
        if not value:
            raise SessionInvalid("open the portal from a portal link")
        return portal_links.portal_session(get_database(), get_settings(), value), value

    def caller(found: TenantSession) -> Caller:
        return Caller(f"portal:{found.tenant_id}", found.tenant_id)

    def render(name: str, context: dict[str, Any], status: int = 200) -> Response[str]:
        found, value = session()
        tenant = tenant_service.get_tenant(get_database(), caller(found), found.tenant_id)
        branding = portal_links.get_portal_settings(get_database(), caller(found), found.tenant_id)
        full = {
            "portal": branding,
            "csrf": csrf_token(session_key(get_settings()), value),
            "area": "portal",
            "base": "/portal",
            "tenant": tenant,
            **context,
        }
        ancestors = " ".join(branding["frame_ancestors"]) or "'none'"
        return web.page(name, full, status=status, frame_ancestors=ancestors)

    def changing(action: Callable[[Caller, dict[str, str]], Response[str]]) -> Response[str]:
        found, value = session()
        submitted = web.form(app)
        if not web.check_csrf(session_key(get_settings()), value, submitted, app):
            return web.page(
                "refused.html",
                {"message": "this form has expired: reload the page", "area": "portal"},
                status=403,
            )
        return action(caller(found), submitted)

    @app.get("/portal/login")
    def login() -> Response[str]:
        settings = get_settings()
        token = web.query(app).get("token", "")
        link = portal_links.link_to_confirm(get_database(), settings, token)
        who = Caller(f"portal-login:{link.tenant_id}", link.tenant_id)
        tenant = tenant_service.get_tenant(get_database(), who, link.tenant_id)
        secure = web.secure_cookies(app, settings.local_mode)
        seed = web.cookies_of(app).get(LOGIN_COOKIE) or secrets.token_urlsafe(24)
        made = web.cookie(LOGIN_COOKIE, seed, path="/portal", secure=secure, max_age=900)
        context = {
            "opening": tenant, "token": token, "area": "portal", "base": "/portal",
            "csrf": csrf_token(session_key(settings), seed), "portal": {},
        }  # fmt: skip
        return web.page("portal_login.html", context, cookies=[made])

    @app.post("/portal/login")
    def confirm_login() -> Response[str]:
        settings = get_settings()
        submitted = web.form(app)
        seed = web.cookies_of(app).get(LOGIN_COOKIE)
        if not web.check_csrf(session_key(settings), seed, submitted, app):
            return web.page(
                "refused.html",
                {"message": "open the portal link again in this browser", "area": "portal"},
                status=403,
            )
        value, opened = portal_links.open_portal_session(
            get_database(), settings, submitted.get("token", "")
        )
        max_age = int((opened.expires_at - datetime.now(UTC)).total_seconds())
        secure = web.secure_cookies(app, settings.local_mode)
        made = web.cookie(COOKIE, value, path="/portal", secure=secure, max_age=max_age)
        cleared = web.cookie(LOGIN_COOKIE, "", path="/portal", secure=secure, max_age=0)
        return web.redirect("/portal", cookies=[made, cleared])

    @app.post("/portal/signout")
    def signout() -> Response[str]:
        found, value = session()
        if not web.check_csrf(session_key(get_settings()), value, web.form(app), app):
            return web.page(
                "refused.html",
                {"message": "this form has expired: reload the page", "area": "portal"},
                status=403,
            )
        portal_links.end_portal_session(get_database(), found)
        secure = web.secure_cookies(app, get_settings().local_mode)
        cleared = web.cookie(COOKIE, "", path="/portal", secure=secure, max_age=0)
        context = {"message": "you are signed out of the portal", "area": "portal"}
        return web.page("refused.html", context, cookies=[cleared])

    @app.get("/portal/theme.css")
    def theme() -> Response[str]:
        found, _ = session()
        branding = portal_links.get_portal_settings(get_database(), caller(found), found.tenant_id)
        css = f":root {{ --accent: {branding['accent']}; }}\n" if branding["accent"] else ""
        headers = {"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"}
        return Response(status_code=200, content_type="text/css", body=css, headers=headers)

    @app.get("/portal")
    def home() -> Response[str]:
        found, _ = session()
        page = endpoint_service.list_endpoints(
            get_database(), caller(found), tenant_id=None, enabled=None, cursor=None, limit=100
        )
        return render("portal_endpoints.html", {"endpoints": page["items"], "form": {}})

    @app.post("/portal/endpoints")
    def add_endpoint() -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            db, settings = get_database(), get_settings()
            try:
                # A tenant's customers never target private addresses, whatever the
                # deployment allows its operators (docs/decisions/0043).
                check_url(
                    submitted.get("url", "").strip(), allow_private=False,
                    allow_http=settings.allow_http_targets,
                )  # fmt: skip
                body = actions.endpoint_body(submitted, None)
                if body.get("auth") and body["auth"].get("token_url"):  # the same rule (0043)
                    endpoint_edit.check_public_token_url(body["auth"]["token_url"], settings)
                created = endpoint_service.create_endpoint(db, settings, who, body)
                # And at connect time, against DNS that later answers a private address.
                endpoint_service.keep_to_public_targets(db, who, created["id"])
            except BadRequest as err:  # the SSRF check's message, next to the field
                page = endpoint_service.list_endpoints(
                    db, who, tenant_id=None, enabled=None, cursor=None, limit=100
                )
                return render(
                    "portal_endpoints.html",
                    {"endpoints": page["items"], "form": submitted, **endpoint_edit.refusal(err)},
                    status=400,
                )
            return render("secret.html", actions.created_view(created))

        return changing(act)

    @app.get("/portal/endpoints/<endpoint_id>")
    def endpoint(endpoint_id: str) -> Response[str]:
        found, _ = session()
        db, who = get_database(), caller(found)
        view = actions.endpoint_view(db, get_settings(), who, endpoint_id)
        return render("endpoint.html", {**view, "notice": web.query(app).get("notice")})

    @app.get("/portal/endpoints/<endpoint_id>/edit")
    def edit_endpoint(endpoint_id: str) -> Response[str]:
        found, _ = session()
        shown = endpoint_service.get_endpoint(get_database(), caller(found), endpoint_id)
        form = endpoint_edit.form_values(shown)
        fields = endpoint_edit.PORTAL_FIELDS
        return render(
            "endpoint_edit.html", {"endpoint": shown, "form": form, "errors": {}, "fields": fields}
        )

    @app.post("/portal/endpoints/<endpoint_id>")
    def save_endpoint(endpoint_id: str) -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            # Limits are not the customer's (decision 0058); URLs public only (0043).
            return endpoint_edit.submit(
                app, render, get_database(), get_settings(), who, endpoint_id, submitted,
                fields=endpoint_edit.PORTAL_FIELDS, base="/portal", public_urls_only=True,
            )  # fmt: skip

        return changing(act)

    @app.post("/portal/endpoints/<endpoint_id>/<action>")
    def endpoint_action(endpoint_id: str, action: str) -> Response[str]:
        def act(who: Caller, _: dict[str, str]) -> Response[str]:
            db, settings = get_database(), get_settings()
            done = actions.endpoint_action(db, settings, who, endpoint_id, action)
            if "secret" in done:
                shown = endpoint_service.get_endpoint(db, who, endpoint_id)
                return render("secret.html", {"endpoint": shown, **done})
            return web.redirect(f"/portal/endpoints/{endpoint_id}?notice={done['notice']}")

        return changing(act)

    @app.get("/portal/event-types")
    def event_type_list() -> Response[str]:
        found, _ = session()
        page = catalogue.list_event_types(
            get_database(), caller(found), tenant_id=None, name=None, archived=False,
            cursor=None, limit=200,
        )  # fmt: skip
        # Hookline's own operational events, documented like the tenant's (decision 0068)
        operational = [
            {"name": t.name, "description": t.description, "schema": t.schema,
             "example": t.example}
            for t in OPERATIONAL_TYPES
        ]  # fmt: skip
        return render(
            "event_types.html", {"event_types": page["items"], "operational": operational}
        )

    @app.get("/portal/deliveries")
    def deliveries() -> Response[str]:
        found, _ = session()
        query = {k: v for k, v in web.query(app).items() if k != "tenant_id"}
        return render(
            "deliveries.html", actions.delivery_list(get_database(), caller(found), query)
        )

    @app.get("/portal/deliveries/<delivery_id>")
    def delivery(delivery_id: str) -> Response[str]:
        found, _ = session()
        view = actions.delivery_view(get_database(), caller(found), delivery_id)
        return render("delivery.html", {**view, "notice": web.query(app).get("notice")})

    @app.post("/portal/deliveries/<delivery_id>/resend")
    def resend(delivery_id: str) -> Response[str]:
        def act(who: Caller, _: dict[str, str]) -> Response[str]:
            done = actions.resend(get_database(), get_settings(), who, delivery_id)
            notice = "resent" if done["enqueued"] else "in-flight"
            return web.redirect(f"/portal/deliveries/{delivery_id}?notice={notice}")

        return changing(act)
