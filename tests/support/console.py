"""The console function called in-process as API Gateway would, by a browser on loopback in
local mode: it keeps its cookies and posts forms with the CSRF token of the last page."""

from __future__ import annotations

import html
import re
from typing import Any
from urllib.parse import urlencode

from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support.lambdas import HttpResult

HOST = "127.0.0.1:8080"
_TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


class ConsoleClient:
    """A browser without JavaScript (or, with `htmx=True`, one whose htmx sent the form)."""

    def __init__(self, handler: Any) -> None:
        self.handler = handler
        self.cookies: dict[str, str] = {}
        self.csrf = ""

    def request(
        self, method: str, path: str, *, body: str = "", headers: dict[str, str] | None = None
    ) -> HttpResult:
        path, _, query = path.partition("?")
        sent = {"Host": HOST, **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        event = build_rest_event(method, path, sent, body.encode(), query=query)
        answer = self.handler(event, LocalContext(function_name="console"))
        for cookie in answer.get("multiValueHeaders", {}).get("Set-Cookie", []):
            name, _, rest = cookie.partition("=")
            self.cookies[name] = rest.split(";", 1)[0]
        headers_out = dict(answer.get("headers") or {})
        for k, values in (answer.get("multiValueHeaders") or {}).items():
            headers_out[k] = values[-1]
        result = HttpResult(answer["statusCode"], headers_out, (answer.get("body") or "").encode())
        found = _TOKEN.search(result.body.decode())
        if found:
            self.csrf = html.unescape(found.group(1))
        return result

    def get(self, path: str) -> HttpResult:
        """GET a page (its CSRF token is kept for the next form)."""
        return self.request("GET", path)

    def post(self, path: str, form: dict[str, str], *, htmx: bool = False) -> HttpResult:
        """POST a form with the CSRF token of the last page."""
        headers = {"HX-Request": "true"} if htmx else {}
        body = urlencode({"csrf_token": self.csrf, **form})
        return self.request("POST", path, body=body, headers=headers)


def text(result: HttpResult) -> str:
    """A page's HTML."""
    return result.body.decode()
