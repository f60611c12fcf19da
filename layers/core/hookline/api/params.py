"""What the routes declare alike: the typed path and query parameters, and the documented
answers (a model, or a problem) of reads, creates and accepted work."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler.openapi.params import Path, Query
from pydantic import BaseModel

from hookline.management import models as m
from hookline.management.paging import MAX_PAGE
from hookline.problems import PROBLEM

IdPath = Annotated[str, Path(min_length=1, max_length=100)]
Limit = Annotated[int, Query(ge=1, le=MAX_PAGE, description="page size")]
Cursor = Annotated[str | None, Query(max_length=500, description="next_cursor of a page")]
TenantFilter = Annotated[str | None, Query(max_length=100)]
Since = Annotated[datetime | None, Query(description="from this instant (inclusive)")]
Until = Annotated[datetime | None, Query(description="up to this instant (exclusive)")]
ReplayStateFilter = Annotated[Literal["accepted", "running", "succeeded", "failed"] | None, Query()]
StateFilter = Annotated[
    Literal["pending", "queued", "delivering", "delivered", "failed", "dead", "held"] | None,
    Query(),
]


def _problems(*codes: int) -> dict[int, Any]:
    described = {
        400: "Bad request",
        403: "Not allowed for this caller",
        404: "Not found (or not visible to this caller)",
        409: "Conflict (an Idempotency-Key reused or in progress)",
        415: "The body must be JSON",
        503: "Database or key service unavailable; retry",
    }
    return {
        code: {"description": described[code], "content": {PROBLEM: {"model": m.Problem}}}
        for code in (403, 415, 503, *codes)
    }


def ok(model: type[BaseModel]) -> dict[int, Any]:
    """A read or an action: 200 with `model`, or a problem."""
    success = {"description": "OK", "content": {"application/json": {"model": model}}}
    return {200: success, **_problems(400, 404)}


def created_ok(model: type[BaseModel]) -> dict[int, Any]:
    """A create: 201 with `model` (the same answer again for a repeated Idempotency-Key)."""
    success = {"description": "Created", "content": {"application/json": {"model": model}}}
    return {201: success, **_problems(400, 404, 409)}


def accepted_ok(model: type[BaseModel]) -> dict[int, Any]:
    """A create whose work goes on after the answer: 202 with `model` and its Location."""
    success = {
        "description": "Accepted: follow Location (GET) for its progress",
        "content": {"application/json": {"model": model}},
        "headers": {"Location": {"description": "the new resource", "schema": {"type": "string"}}},
    }
    return {202: success, **_problems(400, 404, 409)}
