"""What the HTTP-facing handlers (receiver, management API) share: domain errors as
`application/problem+json` responses, header lookup, and one resolver per thread."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Hashable
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, TypeVar

from hookline import errors

if TYPE_CHECKING:  # the receiver answers without a resolver and never imports one (0074)
    from aws_lambda_powertools.event_handler import Response
    from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver

PROBLEM = "application/problem+json"

STATUS: dict[type[errors.HooklineError], HTTPStatus] = {
    errors.SecretsUnavailable: HTTPStatus.SERVICE_UNAVAILABLE,
    errors.BadRequest: HTTPStatus.BAD_REQUEST,
    errors.VerificationFailed: HTTPStatus.UNAUTHORIZED,
    errors.Unauthorized: HTTPStatus.FORBIDDEN,
    errors.NotFound: HTTPStatus.NOT_FOUND,
    errors.Conflict: HTTPStatus.CONFLICT,
    errors.MethodNotAllowed: HTTPStatus.METHOD_NOT_ALLOWED,
    errors.PayloadTooLarge: HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
    errors.UnsupportedMediaType: HTTPStatus.UNSUPPORTED_MEDIA_TYPE,
    errors.DatabaseUnavailable: HTTPStatus.SERVICE_UNAVAILABLE,
    errors.UpstreamUnavailable: HTTPStatus.SERVICE_UNAVAILABLE,
    errors.ArchiveUnavailable: HTTPStatus.SERVICE_UNAVAILABLE,
}


def status_for(err: errors.HooklineError) -> HTTPStatus:
    """The status code of a domain error."""
    return next(
        (code for cls, code in STATUS.items() if isinstance(err, cls)),
        HTTPStatus.INTERNAL_SERVER_ERROR,
    )


def problem(
    status: HTTPStatus,
    detail: str,
    headers: dict[str, str] | None = None,
    errors_: list[dict[str, Any]] | None = None,
) -> Response[str]:
    """An `application/problem+json` error response."""
    from aws_lambda_powertools.event_handler import Response

    return Response(
        status_code=int(status),
        content_type=PROBLEM,
        body=problem_json(status, detail, errors_),
        headers=headers or {},
    )


def problem_json(
    status: HTTPStatus, detail: str, errors_: list[dict[str, Any]] | None = None
) -> str:
    """The body of an `application/problem+json` answer."""
    body: dict[str, Any] = {
        "type": "about:blank",
        "title": status.phrase,
        "status": int(status),
        "detail": detail,
    }
    if errors_ is not None:
        body["errors"] = errors_
    return json.dumps(body)


def error_response(err: errors.HooklineError) -> Response[str]:
    """A domain error as a problem response; a 503 tells the caller when to retry."""
    status = status_for(err)
    return problem(status, str(err), retry_headers(status))


def retry_headers(status: HTTPStatus) -> dict[str, str]:
    """What an error answer tells the caller about retrying: a 503 says when."""
    return {"Retry-After": "5"} if status == HTTPStatus.SERVICE_UNAVAILABLE else {}


def header(app: ApiGatewayResolver, name: str) -> str | None:
    """A request header, case-insensitively."""
    wanted = name.lower()
    for key, value in (app.current_event.headers or {}).items():
        if key.lower() == wanted:
            return str(value)
    return None


R = TypeVar("R")


def per_thread(build: Callable[[], R]) -> Callable[[], R]:
    """This thread's resolver, built on first use (decision 0011)."""
    local = threading.local()

    def current() -> R:
        app: R | None = getattr(local, "app", None)
        if app is None:
            app = local.app = build()
        return app

    return current


K = TypeVar("K", bound=Hashable)


def per_thread_and_key(build: Callable[[K], R]) -> Callable[[K], R]:
    """`build(key)` once per thread and key (a front door, a resource, a set of pages): a
    resolver holds the event it is resolving, and the local runner calls a handler from
    several threads (decision 0011)."""
    local = threading.local()

    def current(key: K) -> R:
        apps: dict[K, R] | None = getattr(local, "apps", None)
        if apps is None:
            apps = local.apps = {}
        if key not in apps:
            apps[key] = build(key)
        return apps[key]

    return current
