"""The management API's errors as `application/problem+json`, in one place: domain errors by
their status (`hookline.problems.STATUS`), schema violations, request validation, bodies that
are not UTF-8, unknown routes. A detail names fields, never echoes their values (a value may
be a secret), and what is logged is the same safe message."""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import ApiGatewayResolver
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError

from hookline import errors
from hookline.errors import SchemaViolation
from hookline.observability import logger
from hookline.problems import error_response, problem, status_for


def register(app: ApiGatewayResolver) -> None:
    """Map every error a route can raise to its problem answer."""
    app.exception_handler(errors.HooklineError)(domain_error)
    app.exception_handler(SchemaViolation)(schema_violation)
    app.exception_handler(RequestValidationError)(validation_error)
    app.exception_handler(UnicodeDecodeError)(undecodable_body)
    app.not_found(no_route)


def domain_error(err: errors.HooklineError) -> Response[str]:
    """A domain error, with a message safe to show the caller."""
    logger.info("request refused", extra={"status": int(status_for(err)), "reason": str(err)})
    return error_response(err)


def schema_violation(err: SchemaViolation) -> Response[str]:
    """A payload that breaks its type's schema, or a schema that is not one: 422, each
    failure with its path and rule."""
    logger.info("request refused", extra={"status": 422, "reason": str(err)})
    found = [{"field": e["path"], "in": "body", **e} for e in err.errors]
    return problem(HTTPStatus.UNPROCESSABLE_ENTITY, str(err), errors_=found)


def validation_error(err: RequestValidationError) -> Response[str]:
    """Powertools' request validation as a problem: each bad field with a plain message
    (never the input itself: it may be a secret)."""
    found = []
    for e in err.errors():
        loc = [str(p) for p in e.get("loc", ())]
        where = ".".join(loc[1:]) if len(loc) > 1 else (loc[0] if loc else "request")
        found.append({"field": where, "in": loc[0] if loc else "body", "message": _message(e)})
    detail = "; ".join(f"{f['field']}: {f['message']}" for f in found) or "invalid request"
    logger.info("request refused", extra={"fields": [f["field"] for f in found]})
    # A body that is not a JSON object is malformed (400); a field that breaks its rule is 422.
    if any(e.get("type") == "json_invalid" for e in err.errors()):
        return problem(HTTPStatus.BAD_REQUEST, "body is not valid JSON", errors_=found)
    if any(
        e.get("type") in ("model_attributes_type", "dict_type")
        and tuple(e.get("loc", ())) == ("body",)
        for e in err.errors()
    ):
        return problem(HTTPStatus.BAD_REQUEST, "body must be a JSON object", errors_=found)
    return problem(HTTPStatus.UNPROCESSABLE_ENTITY, detail, errors_=found)


def _message(error: Any) -> str:
    kind = error.get("type", "")
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "json_invalid":
        return "not valid JSON"
    return str(error.get("msg") or kind or "invalid")


def undecodable_body(err: UnicodeDecodeError) -> Response[str]:
    """A body that is not UTF-8 cannot be JSON."""
    return problem(HTTPStatus.BAD_REQUEST, "body is not valid UTF-8 JSON")


def no_route(err: NotFoundError) -> Response[str]:
    """No such route (or method) under /v1."""
    return problem(HTTPStatus.NOT_FOUND, "no such resource or method; see docs/openapi.json")
