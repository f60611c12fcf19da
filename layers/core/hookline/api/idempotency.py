"""Idempotent creates at the HTTP edge: the Idempotency-Key header and the request's
fingerprint in, a JSON answer out (`Idempotent-Replayed: true` on a kept one). The rules —
time to live, conflicts, secrets shown once — are the service's
(`hookline.management.idempotency`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from pydantic import BaseModel

from hookline.db import get_database
from hookline.management.access import Caller
from hookline.problems import header
from hookline.settings import get_settings


def idempotent(
    app: ApiGatewayResolver,
    who: Caller,
    make: Callable[[], BaseModel],
    *,
    status: HTTPStatus = HTTPStatus.CREATED,
    location: Callable[[dict[str, Any]], str] | None = None,
) -> Response[Any]:
    """`status` (201) with what `make` creates; with an Idempotency-Key, a retry of the same
    request gets the first answer back instead of a second object."""

    def dumped() -> dict[str, Any]:
        return make().model_dump(mode="json", by_alias=True)

    key = header(app, "Idempotency-Key")
    if key is None:
        return json_answer(status, dumped(), location=location)
    # Kept answers are sealed (cryptography's AES-GCM): loaded by the first keyed create.
    from hookline.management.idempotency import answer_once

    event = app.current_event
    fingerprint = hashlib.sha256(
        f"{event.http_method} {event.path}\n".encode() + (event.decoded_body or "").encode()
    ).hexdigest()
    ttl = timedelta(seconds=get_settings().idempotency_ttl_seconds)
    answer = answer_once(
        get_database(), who.scope, key, fingerprint, dumped, status=int(status), ttl=ttl
    )
    replayed = {"Idempotent-Replayed": "true"} if answer.replayed else {}
    return json_answer(HTTPStatus(answer.status), answer.body, replayed, location=location)


def json_answer(
    status: HTTPStatus,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
    *,
    location: Callable[[dict[str, Any]], str] | None = None,
) -> Response[Any]:
    """A JSON answer, with `Location` when the create has one."""
    headers = dict(headers or {})
    if location is not None:
        headers["Location"] = location(body)
    return Response(
        status_code=int(status), content_type="application/json", body=body, headers=headers or None
    )
