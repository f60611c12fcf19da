"""The console behind its own Lambda function URL (`infrastructure.ingress = function_url`).

A function URL sends payload 2.0 (cookies in their own list) and takes a 2.0 answer
(`cookies` for Set-Cookie); the console's pages are REST-shaped (payload 1.0, the Cookie
header, multi-value Set-Cookie). The handler turns one into the other at the edge, so the
pages and their sign-in are the same code behind every front.
"""

from __future__ import annotations

from typing import Any


def as_rest_event(event: dict[str, Any]) -> dict[str, Any]:
    """A function URL's request as the REST API's proxy event would carry it."""
    context = event.get("requestContext") or {}
    http = context.get("http") or {}
    headers = {str(k): str(v) for k, v in (event.get("headers") or {}).items()}
    cookies = [str(c) for c in event.get("cookies") or []]
    if cookies:
        headers["cookie"] = "; ".join(cookies)
    query = {str(k): str(v) for k, v in (event.get("queryStringParameters") or {}).items()}
    path = str(event.get("rawPath") or http.get("path") or "/")
    method = str(http.get("method") or "GET").upper()
    return {
        "resource": path,
        "path": path,
        "httpMethod": method,
        "headers": headers,
        # A 2.0 event joins a repeated header's values with commas: one value each here.
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "queryStringParameters": query or None,
        "multiValueQueryStringParameters": {k: [v] for k, v in query.items()} or None,
        "pathParameters": None,
        "stageVariables": None,
        "requestContext": {
            "stage": "$default",
            "path": path,
            "httpMethod": method,
            "requestId": context.get("requestId"),
            "domainName": context.get("domainName"),
            "identity": {"sourceIp": http.get("sourceIp"), "userAgent": http.get("userAgent")},
        },
        "body": event.get("body"),
        "isBase64Encoded": bool(event.get("isBase64Encoded")),
    }


def as_url_response(response: dict[str, Any]) -> dict[str, Any]:
    """A REST-shaped answer as a function URL takes it (Set-Cookie lines in `cookies`)."""
    headers: dict[str, str] = {str(k): str(v) for k, v in (response.get("headers") or {}).items()}
    cookies: list[str] = []
    for name, values in (response.get("multiValueHeaders") or {}).items():
        if name.lower() == "set-cookie":
            cookies += [str(v) for v in values]
        elif values:
            headers[str(name)] = ", ".join(str(v) for v in values)
    out: dict[str, Any] = {
        "statusCode": response.get("statusCode", 200),
        "headers": {k: v for k, v in headers.items() if k.lower() != "set-cookie"},
        "body": response.get("body") or "",
        "isBase64Encoded": bool(response.get("isBase64Encoded")),
    }
    if cookies:
        out["cookies"] = cookies
    return out
