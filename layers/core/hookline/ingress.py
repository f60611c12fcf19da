"""The front door's event shapes (docs/decisions/0035).

`infrastructure.ingress` chooses what sits in front of the receiver and the management API:

* `rest` — API Gateway REST API: payload format 1.0, `APIGatewayRestResolver`;
* `http` — API Gateway HTTP API: payload format 2.0, `APIGatewayHttpResolver`;
* `function_url` — Lambda function URLs: payload format 2.0, `LambdaFunctionUrlResolver`.

A handler builds its routes on `new_resolver(event_ingress(event))`, so one function accepts
every shape (the local front sends either), and reads the caller's IAM identity with
`iam_principal`, which knows where each shape keeps it.

The receiver reads its one route straight from the event instead (`ProxyRequest`,
`proxy_response`): a resolver's routing, event objects and response building were a fifth of
its CPU per request (docs/decisions/0074).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hookline.config import INGRESSES
from hookline.records import frozen

if TYPE_CHECKING:  # the receiver reads its events without a resolver, never importing one
    from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

# The Powertools resolver of each front.
_RESOLVERS = {
    "rest": "APIGatewayRestResolver",
    "http": "APIGatewayHttpResolver",
    "function_url": "LambdaFunctionUrlResolver",
}
# What a Powertools route parameter (`<name>`) matches: one path segment of URI characters.
_SEGMENT = r"[-._~()'!*:@,;=+&$%<> \[\]{}|^\w]+"


def event_ingress(event: dict[str, Any]) -> str:
    """Which front sent `event`: payload 2.0 from a function URL (its domain is
    `<id>.lambda-url.<region>.on.aws`) or an HTTP API, else a REST API's 1.0."""
    if event.get("version") != "2.0":
        return "rest"
    domain = str((event.get("requestContext") or {}).get("domainName") or "")
    return "function_url" if ".lambda-url." in domain else "http"


def new_resolver(ingress: str, **options: Any) -> ApiGatewayResolver:
    """A Powertools resolver for `ingress` (`rest`, `http` or `function_url`); `options` go
    to its constructor (e.g. `enable_validation=True`). Routes, `Router`s and exception
    handlers are declared the same way on each."""
    from aws_lambda_powertools import event_handler

    try:
        resolver: type[ApiGatewayResolver] = getattr(event_handler, _RESOLVERS[ingress])
    except KeyError:
        raise ValueError(f"unknown ingress {ingress!r}; one of {', '.join(INGRESSES)}") from None
    return resolver(**options)


def iam_principal(event: dict[str, Any]) -> str | None:
    """The caller's IAM ARN as the front verified it (SigV4): `requestContext.identity` in
    payload 1.0, `requestContext.authorizer.iam` in 2.0; None without IAM auth."""
    context = event.get("requestContext") or {}
    if event.get("version") == "2.0":
        iam = (context.get("authorizer") or {}).get("iam") or {}
        return iam.get("userArn") or iam.get("callerId") or None
    identity = context.get("identity") or {}
    return identity.get("userArn") or identity.get("caller") or None


@frozen
class ProxyRequest:
    """What the receiver reads of a proxy event, whichever front sent it (1.0 or 2.0).

    `path` is the path as routes see it (without a named HTTP API stage, as Powertools reads
    it); `url_path` is the one the request reached as far as the front tells (a REST API's
    request context keeps its stage). Header names are lower-cased (HTTP's are
    case-insensitive; payload 2.0 sends them so already)."""

    method: str
    path: str
    url_path: str
    headers: dict[str, str]
    query: dict[str, str]
    body: str
    base64_encoded: bool

    def header(self, name: str) -> str | None:
        """A request header by its lower-case name."""
        return self.headers.get(name)

    def path_parameter(self, prefix: str) -> str | None:
        """The one segment after `prefix` (e.g. `/in/`), as a Powertools `<param>` matches it;
        None when the path is not `prefix` and one segment."""
        if not self.path.startswith(prefix):
            return None
        rest = self.path[len(prefix) :]
        return rest if _ONE_SEGMENT.fullmatch(rest) else None


_ONE_SEGMENT = re.compile(_SEGMENT)


def proxy_request(event: Mapping[str, Any]) -> ProxyRequest:
    """The request in an API Gateway REST (1.0), HTTP API or function URL (2.0) event."""
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    query = dict(event.get("queryStringParameters") or {})
    body = event.get("body") or ""
    encoded = bool(event.get("isBase64Encoded"))
    context = event.get("requestContext") or {}
    if event.get("version") == "2.0":
        raw = str(event.get("rawPath") or "/")
        stage = context.get("stage")
        path = raw[len(stage) + 1 :] if stage and stage != "$default" else raw
        method = str((context.get("http") or {}).get("method") or "")
        return ProxyRequest(method.upper(), path, path, headers, query, body, encoded)
    path = str(event.get("path") or "/")
    url_path = str(context.get("path") or path)
    method = str(event.get("httpMethod") or "")
    return ProxyRequest(method.upper(), path, url_path, headers, query, body, encoded)


def proxy_response(
    status: int, body: str, content_type: str, headers: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A proxy integration's answer, which every front reads alike (1.0 takes `headers` as
    2.0 does)."""
    return {
        "statusCode": status,
        "headers": {"Content-Type": content_type, **(headers or {})},
        "body": body,
        "isBase64Encoded": False,
    }
