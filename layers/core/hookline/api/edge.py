"""What every router needs from the request: who the caller is, a header, and an idempotent
create. One `Edge` per resolver, handed to each router as it is built."""

from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver, Router
from pydantic import BaseModel

from hookline.api.idempotency import idempotent
from hookline.db import get_database
from hookline.ingress import iam_principal
from hookline.management.access import Caller, resolve_caller
from hookline.problems import header
from hookline.records import frozen
from hookline.settings import get_settings

Identify = Callable[[ApiGatewayResolver], Caller]


def from_identity(app: ApiGatewayResolver) -> Caller:
    """The caller of the current request: its IAM identity (payload 1.0 or 2.0), or locally
    its bearer key."""
    return resolve_caller(
        get_database(),
        get_settings(),
        identity_arn=iam_principal(app.current_event.raw_event),
        authorization=header(app, "Authorization"),
    )


def trusted(who: Caller) -> Identify:
    """Every request resolved as `who`, whatever its identity: for a resolver built by code
    in this process (the CLI, acting on the database it was given), never reachable over
    HTTP."""
    return lambda app: who


def new_router() -> Router:
    """An empty router, to be included in one resolver only (decision 0029)."""
    return Router()  # type: ignore[no-untyped-call]  # Powertools leaves __init__ untyped


@frozen
class Edge:
    """The resolver the routes run in, and how it identifies callers."""

    app: ApiGatewayResolver
    identify: Identify = from_identity

    def caller(self) -> Caller:
        """Who is calling (Unauthorized, 403, if nobody allowed)."""
        return self.identify(self.app)

    def header(self, name: str) -> str | None:
        """A request header, case-insensitively."""
        return header(self.app, name)

    def created(
        self,
        who: Caller,
        make: Callable[[], BaseModel],
        *,
        status: HTTPStatus = HTTPStatus.CREATED,
        location: Callable[[dict[str, Any]], str] | None = None,
    ) -> Response[Any]:
        """`status` with what `make` creates, once per Idempotency-Key (see idempotency)."""
        return idempotent(self.app, who, make, status=status, location=location)
