"""What every console and portal page shares: templates, security headers, cookies, forms and
CSRF, static files.

Pages are Jinja2 templates with autoescaping on: whatever a payload, a header or a URL holds
is shown as text. The Content-Security-Policy allows scripts and styles only from this origin
(`/console/static`: htmx and one stylesheet), no inline script or style, no eval; htmx is told
through its meta config not to inject its indicator style or evaluate anything.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping
from functools import lru_cache
from http import HTTPStatus
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.shared.cookies import Cookie, SameSite
from jinja2 import Environment, FileSystemLoader, select_autoescape

from hookline.sessions import csrf_ok

HERE = Path(__file__).parent
STATIC = HERE / "static"
HTMX = "htmx-2.0.11.min.js"
HTML = "text/html; charset=utf-8"
CSRF_COOKIE = "hl_console"  # the console's per-browser value its CSRF tokens are bound to
CSRF_FIELD = "csrf_token"
HTMX_CONFIG = json.dumps(
    {
        "includeIndicatorStyles": False,
        "allowEval": False,
        "allowScriptTags": False,
        "historyCacheSize": 0,
        "responseHandling": [
            {"code": "204", "swap": False},
            {"code": "[2345]..", "swap": True},
        ],
    }
)
# What `?notice=` may say: a code from this list, shown as its fixed text; anything else is
# not shown (a link must not make a page print text of its author's choosing, decision 0061).
NOTICES = {
    "saved": "Saved.",
    "unchanged": "Nothing changed.",
    "enabled": "Enabled.",
    "disabled": "Disabled.",
    "test-sent": "A test event was sent: it is in the deliveries below.",
    "resent": "Resent: a new attempt is on its way.",
    "in-flight": "Not resent: it is being sent right now.",
    "portal-saved": "Portal settings saved.",
    "deleted": "Deleted.",
}
_TYPES = {".js": "text/javascript", ".css": "text/css", ".txt": "text/plain; charset=utf-8"}


@lru_cache(maxsize=1)
def templates() -> Environment:
    """The template environment (autoescaping on for every template)."""
    env = Environment(
        loader=FileSystemLoader(HERE / "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(htmx=HTMX, htmx_config=HTMX_CONFIG, pretty=_pretty, notice_text=NOTICES.get)
    return env


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=str, ensure_ascii=False)


def security_headers(frame_ancestors: str = "'none'") -> dict[str, str]:
    """The headers of every page: a strict CSP and its companions."""
    csp = (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; "
        f"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors "
        f"{frame_ancestors}"
    )
    return {
        "Content-Security-Policy": csp,
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-store",
    }


def page(
    name: str,
    context: Mapping[str, Any],
    *,
    status: int = 200,
    cookies: list[Cookie] | None = None,
    frame_ancestors: str = "'none'",
) -> Response[str]:
    """A rendered template as an HTML response."""
    body = templates().get_template(name).render(**context)
    return Response(
        status_code=status,
        content_type=HTML,
        body=body,
        headers=security_headers(frame_ancestors),
        cookies=cookies or [],
    )


def redirect(location: str, cookies: list[Cookie] | None = None) -> Response[str]:
    """303 See Other (after a POST), also understood by htmx."""
    return Response(
        status_code=HTTPStatus.SEE_OTHER,
        content_type=HTML,
        body="",
        headers={"Location": location, **security_headers()},
        cookies=cookies or [],
    )


def static(name: str) -> Response[str]:
    """A vendored asset, cacheable for a year (its name carries its version)."""
    path = STATIC / name
    if "/" in name or name.startswith(".") or not path.is_file():
        return Response(status_code=404, content_type="text/plain", body="not found")
    return Response(
        status_code=200,
        content_type=_TYPES.get(path.suffix, "application/octet-stream"),
        body=path.read_text(),
        headers={
            "Cache-Control": "public, max-age=31536000, immutable",
            "X-Content-Type-Options": "nosniff",
        },
    )


def cookies_of(app: APIGatewayRestResolver) -> dict[str, str]:
    """The request's cookies."""
    out: dict[str, str] = {}
    headers = app.current_event.headers or {}
    raw = next((v for k, v in headers.items() if k.lower() == "cookie"), "")
    for part in raw.split(";"):
        name, sep, value = part.strip().partition("=")
        if sep:
            out[name] = value
    return out


def header_of(app: APIGatewayRestResolver, name: str) -> str:
    """One request header ('' when absent)."""
    headers = app.current_event.headers or {}
    return next((v for k, v in headers.items() if k.lower() == name.lower()), "")


def form(app: APIGatewayRestResolver) -> dict[str, str]:
    """An urlencoded form body (last value of a repeated field)."""
    body = app.current_event.decoded_body or ""
    return {k: v[-1] for k, v in parse_qs(body, keep_blank_values=True).items()}


def query(app: APIGatewayRestResolver) -> dict[str, str]:
    """The query string's non-empty parameters."""
    params = app.current_event.query_string_parameters or {}
    return {k: v for k, v in params.items() if v}


def secure_cookies(app: APIGatewayRestResolver, local_mode: bool) -> bool:
    """Cookies are Secure except on plain http to a loopback host in local mode (the dev
    stack's front), where a browser would not send them back otherwise."""
    host = header_of(app, "Host").rsplit(":", 1)[0]
    proto = header_of(app, "X-Forwarded-Proto") or "http"
    return not (local_mode and proto == "http" and host in ("127.0.0.1", "localhost", "[::1]"))


def cookie(name: str, value: str, *, path: str, secure: bool, max_age: int | None) -> Cookie:
    """An HttpOnly, SameSite=Strict cookie."""
    return Cookie(
        name, value, path=path, secure=secure, http_only=True, max_age=max_age,
        same_site=SameSite.STRICT_MODE,
    )  # fmt: skip


def console_csrf_seed(app: APIGatewayRestResolver, secure: bool) -> tuple[str, Cookie | None]:
    """The console's per-browser value (and the cookie that sets it, when it is new)."""
    value = cookies_of(app).get(CSRF_COOKIE)
    if value:
        return value, None
    value = secrets.token_urlsafe(24)
    return value, cookie(CSRF_COOKIE, value, path="/console", secure=secure, max_age=None)


def check_csrf(key: bytes, seed: str | None, submitted: Mapping[str, str], app: Any) -> bool:
    """Whether a state-changing request carries the token of its session (form field or the
    X-CSRF-Token header)."""
    token = submitted.get(CSRF_FIELD) or header_of(app, "X-CSRF-Token")
    return csrf_ok(key, seed, token)
