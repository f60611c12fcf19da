"""API Gateway REST (v1) proxy events built from plain HTTP requests, as AWS builds them.

The local front and the tests use this, so the receiver sees the same event shape locally
as on AWS: headers and multi-value headers, the body base64-encoded (the stack declares
binary media types `*/*`, which keeps signed bytes exact), path parameters, request context.
"""

from __future__ import annotations

import base64
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

ROUTES = ("/in/{source_id}", "/v1/{proxy+}")


def build_rest_event(
    method: str,
    path: str,
    headers: Iterable[tuple[str, str]] | Mapping[str, str] = (),
    body: bytes = b"",
    *,
    query: str = "",
    base64_body: bool = True,
    identity_arn: str | None = None,
    stage: str = "local",
    stage_in_path: bool = True,
) -> dict[str, Any]:
    """An API Gateway REST proxy event for one request. `stage_in_path`: the request
    context's path starts with the stage, as on the API's execute-api URL; without it, as on
    a custom domain (and the local front) the path is the one the caller used."""
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for name, value in pairs:
        single[name] = value  # API Gateway keeps the last value of a repeated header
        multi.setdefault(name, []).append(value)
    query_pairs = parse_qsl(query, keep_blank_values=True)
    resource, path_parameters = match_resource(path)
    now = time.time()
    return {
        "resource": resource,
        "path": path,
        "httpMethod": method.upper(),
        "headers": single or None,
        "multiValueHeaders": multi or None,
        "queryStringParameters": dict(query_pairs) or None,
        "multiValueQueryStringParameters": _multi(query_pairs) or None,
        "pathParameters": path_parameters or None,
        "stageVariables": None,
        "requestContext": {
            "resourcePath": resource,
            "httpMethod": method.upper(),
            "path": f"/{stage}{path}" if stage_in_path else path,
            "stage": stage,
            "requestId": str(uuid.uuid4()),
            "requestTimeEpoch": int(now * 1000),
            "protocol": "HTTP/1.1",
            "accountId": "000000000000",
            "apiId": "local",
            "identity": {
                "sourceIp": "127.0.0.1",
                "userAgent": single.get("User-Agent", single.get("user-agent")),
                "userArn": identity_arn,
                "caller": identity_arn,
                "accessKey": None,
                "accountId": None,
                "cognitoIdentityId": None,
                "cognitoIdentityPoolId": None,
                "cognitoAuthenticationType": None,
                "cognitoAuthenticationProvider": None,
                "user": None,
            },
        },
        "body": (base64.b64encode(body).decode() if base64_body else body.decode("utf-8"))
        if body
        else None,
        "isBase64Encoded": bool(body) and base64_body,
    }


def build_http_event(
    method: str,
    path: str,
    headers: Iterable[tuple[str, str]] | Mapping[str, str] = (),
    body: bytes = b"",
    *,
    query: str = "",
    identity_arn: str | None = None,
    function_url: bool = False,
) -> dict[str, Any]:
    """A payload format 2.0 event for one request, as an HTTP API (`$default` stage) or a
    Lambda function URL builds it: header names lowercased, repeated headers joined with
    commas, cookies apart, the body base64-encoded (binary-safe; both fronts do so for
    content types they do not treat as text), the IAM caller under `authorizer.iam`."""
    joined: dict[str, str] = {}
    cookies: list[str] = []
    pairs = list(headers.items()) if isinstance(headers, Mapping) else list(headers)
    for name, value in pairs:
        key = name.lower()
        if key == "cookie":
            cookies += [c.strip() for c in value.split(";") if c.strip()]
            continue
        joined[key] = f"{joined[key]},{value}" if key in joined else value
    query_pairs = parse_qsl(query, keep_blank_values=True)
    resource, path_parameters = match_resource(path)
    now = time.time()
    domain = "local.lambda-url.us-east-1.on.aws" if function_url else "local.execute-api.local"
    context: dict[str, Any] = {
        "accountId": "000000000000",
        "apiId": "local",
        "domainName": domain,
        "domainPrefix": "local",
        "http": {
            "method": method.upper(),
            "path": path,
            "protocol": "HTTP/1.1",
            "sourceIp": "127.0.0.1",
            "userAgent": joined.get("user-agent", ""),
        },
        "requestId": str(uuid.uuid4()),
        "routeKey": "$default" if function_url else f"{method.upper()} {resource}",
        "stage": "$default",
        "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
        "timeEpoch": int(now * 1000),
    }
    if identity_arn:
        context["authorizer"] = {"iam": {"userArn": identity_arn, "callerId": identity_arn}}
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": context["routeKey"],
        "rawPath": path,
        "rawQueryString": query,
        "headers": joined,
        "requestContext": context,
        "isBase64Encoded": bool(body),
    }
    if cookies:
        event["cookies"] = cookies
    if query_pairs:
        event["queryStringParameters"] = {k: v for k, v in query_pairs}
    if path_parameters and not function_url:
        event["pathParameters"] = path_parameters
    if body:
        event["body"] = base64.b64encode(body).decode()
    return event


CONSOLE_ROOTS = ("console", "portal")


def match_resource(path: str) -> tuple[str, dict[str, str]]:
    """The API resource a path falls under, with its path parameters."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "in" and parts[1]:
        return "/in/{source_id}", {"source_id": parts[1]}
    if parts[0] == "v1" and len(parts) > 1:
        return "/v1/{proxy+}", {"proxy": "/".join(parts[1:])}
    if parts[0] in CONSOLE_ROOTS:  # the console function's pages (hookline.console)
        if len(parts) == 1:
            return f"/{parts[0]}", {}
        return f"/{parts[0]}/{{proxy+}}", {"proxy": "/".join(parts[1:])}
    return path, {}


def _multi(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k, v in pairs:
        out.setdefault(k, []).append(v)
    return out


@dataclass
class LocalContext:
    """The attributes of a Lambda context object that handlers and Powertools read."""

    function_name: str = "hookline-local"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 512
    aws_request_id: str = ""
    timeout_seconds: float = 60.0

    def __post_init__(self) -> None:
        self.aws_request_id = self.aws_request_id or str(uuid.uuid4())
        self._deadline = time.monotonic() + self.timeout_seconds
        self.invoked_function_arn = (
            f"arn:aws:lambda:us-east-1:000000000000:function:{self.function_name}"
        )
        self.log_group_name = f"/aws/lambda/{self.function_name}"
        self.log_stream_name = "local"

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before this invocation's timeout."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))
