"""Where the console and portal are mounted in the browser's URL space.

Pages, redirects and cookies name their paths from the root (`/console/...`, `/portal/...`).
That is where the browser sees them locally, behind an HTTP API's `$default` stage or a
custom domain; on a REST API's own `execute-api` host every path carries the stage first
(`/live/console/...`), while the function still receives `/console/...`. `prefix_responses`
adds that prefix to a response's links, form targets, redirects and cookie paths, so the
templates stay prefix-free. Only attribute values the templates write are touched: a page's
data is autoescaped, so its quotes can never form an attribute here.
"""

from __future__ import annotations

import re
from typing import Any

_ATTRIBUTES = re.compile(
    r'((?:href|src|action|hx-get|hx-post|hx-put|hx-delete)="|url=)(/(?:console|portal)\b)'
)
_COOKIE_PATH = re.compile(r"(?i)(;\s*Path=)(/(?:console|portal)\b)")


def _header(event: dict[str, Any], name: str) -> str:
    headers = event.get("headers") or {}
    return next((str(v) for k, v in headers.items() if k.lower() == name), "")


def stage_prefix(event: dict[str, Any]) -> str:
    """`/<stage>` when the request came to an API Gateway `execute-api` host on a named stage,
    else '' (a `$default` stage, a custom domain, a function URL, the dev stack's front)."""
    stage = (event.get("requestContext") or {}).get("stage")
    if ".execute-api." in _header(event, "host") and stage and stage != "$default":
        return f"/{stage}"
    return ""


def public_base(event: dict[str, Any]) -> str:
    """The browser's base URL of this request: scheme, host and stage prefix."""
    proto = _header(event, "x-forwarded-proto") or "https"
    return f"{proto}://{_header(event, 'host')}{stage_prefix(event)}"


def prefix_response(response: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The resolver's answer with `prefix` before every root path it names."""
    if not prefix:
        return response

    def add(text: str) -> str:
        return _ATTRIBUTES.sub(lambda m: f"{m[1]}{prefix}{m[2]}", text)

    def header(name: str, value: str) -> str:
        if name.lower() == "location" and value.startswith(("/console", "/portal")):
            return prefix + value
        if name.lower() == "set-cookie":
            return _COOKIE_PATH.sub(lambda m: f"{m[1]}{prefix}{m[2]}", value)
        return value

    out = dict(response)
    if isinstance(out.get("body"), str) and not out.get("isBase64Encoded"):
        content_type = _content_type(out)
        if content_type.startswith("text/html"):
            out["body"] = add(out["body"])
    if out.get("headers"):
        out["headers"] = {k: header(k, str(v)) for k, v in out["headers"].items()}
    if out.get("multiValueHeaders"):
        out["multiValueHeaders"] = {
            k: [header(k, str(v)) for v in values] for k, values in out["multiValueHeaders"].items()
        }
    return out


def _content_type(response: dict[str, Any]) -> str:
    for k, v in (response.get("headers") or {}).items():
        if k.lower() == "content-type":
            return str(v)
    for k, values in (response.get("multiValueHeaders") or {}).items():
        if k.lower() == "content-type" and values:
            return str(values[-1])
    return ""
