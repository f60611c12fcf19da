"""The front door's event shapes (docs/decisions/0035).

`infrastructure.ingress` chooses what sits in front of the receiver and the management API:

* `rest` — API Gateway REST API: payload format 1.0, `APIGatewayRestResolver`;
* `http` — API Gateway HTTP API: payload format 2.0, `APIGatewayHttpResolver`;
* `function_url` — Lambda function URLs: payload format 2.0, `LambdaFunctionUrlResolver`.

A handler builds its routes on `new_resolver(event_ingress(event))`, so one function accepts
every shape (the local front sends either), and reads the caller's IAM identity with
`iam_principal`, which knows where each shape keeps it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from aws_lambda_powertools.event_handler import (
    APIGatewayHttpResolver,
    APIGatewayRestResolver,
    LambdaFunctionUrlResolver,
)
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

from hookline.config import INGRESSES

_RESOLVERS: dict[str, type[ApiGatewayResolver]] = {
    "rest": APIGatewayRestResolver,
    "http": APIGatewayHttpResolver,
    "function_url": LambdaFunctionUrlResolver,
}
R = TypeVar("R")


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
    try:
        return _RESOLVERS[ingress](**options)
    except KeyError:
        raise ValueError(f"unknown ingress {ingress!r}; one of {', '.join(INGRESSES)}") from None


def per_thread_and_ingress(build: Callable[[str], R]) -> Callable[[str], R]:
    """`build(ingress)` once per thread and ingress: a resolver holds the event it is
    resolving, and the local runner calls a handler from several threads (decision 0011)."""
    local = threading.local()

    def current(ingress: str) -> R:
        apps: dict[str, R] | None = getattr(local, "apps", None)
        if apps is None:
            apps = local.apps = {}
        if ingress not in apps:
            apps[ingress] = build(ingress)
        return apps[ingress]

    return current


def iam_principal(event: dict[str, Any]) -> str | None:
    """The caller's IAM ARN as the front verified it (SigV4): `requestContext.identity` in
    payload 1.0, `requestContext.authorizer.iam` in 2.0; None without IAM auth."""
    context = event.get("requestContext") or {}
    if event.get("version") == "2.0":
        iam = (context.get("authorizer") or {}).get("iam") or {}
        return iam.get("userArn") or iam.get("callerId") or None
    identity = context.get("identity") or {}
    return identity.get("userArn") or identity.get("caller") or None
