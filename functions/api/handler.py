"""Management API: API Gateway REST (v1) proxy events for `/v1/*` in, JSON out.

Typed routes (Powertools validation, pydantic models) call one service each; the caller's
identity (IAM on AWS, a local bearer key in development) scopes every query to its tenant.
Errors are `application/problem+json`. The OpenAPI document is generated from these routes
(`openapi_document`, committed as docs/openapi.json).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from http import HTTPStatus
from typing import Annotated, Any, Literal

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from aws_lambda_powertools.event_handler.exceptions import NotFoundError
from aws_lambda_powertools.event_handler.openapi.exceptions import RequestValidationError
from aws_lambda_powertools.event_handler.openapi.params import Body, Path, Query
from aws_lambda_powertools.utilities.typing import LambdaContext
from pydantic import BaseModel

from hookline import errors
from hookline.aws import client
from hookline.catalogue_limits import LimitExceeded, screen_json_text
from hookline.db import get_database
from hookline.event_catalogue import SchemaViolation
from hookline.management import event_types as catalogue
from hookline.management import models as m
from hookline.management import replays, service
from hookline.management.access import Caller, resolve_caller
from hookline.nudge import nudge_fanout
from hookline.observability import logger, metrics, tracer
from hookline.problems import PROBLEM, error_response, header, per_thread, problem, status_for
from hookline.repositories import api as api_repo
from hookline.secretbox import reveal, seal
from hookline.settings import Settings, get_settings

TITLE = "Hookline management API"
VERSION = "1.0.0"
MAX_IDEMPOTENCY_KEY = 255

# Set only by code in this process (the `hookline` CLI running the API in-process against the
# database it was given): no request can set it, so it cannot be forged over HTTP.
_trusted_caller: ContextVar[Caller | None] = ContextVar("trusted_caller", default=None)


@contextmanager
def acting_as(who: Caller) -> Iterator[None]:
    """Resolve requests made in this context as `who`, not from their identity."""
    token = _trusted_caller.set(who)
    try:
        yield
    finally:
        _trusted_caller.reset(token)


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


IdPath = Annotated[str, Path(min_length=1, max_length=100)]
Limit = Annotated[int, Query(ge=1, le=service.MAX_PAGE, description="page size")]
Cursor = Annotated[str | None, Query(max_length=500, description="next_cursor of a page")]
TenantFilter = Annotated[str | None, Query(max_length=100)]
Since = Annotated[datetime | None, Query(description="from this instant (inclusive)")]
Until = Annotated[datetime | None, Query(description="up to this instant (exclusive)")]
ReplayStateFilter = Annotated[Literal["accepted", "running", "succeeded", "failed"] | None, Query()]
StateFilter = Annotated[
    Literal["pending", "queued", "delivering", "delivered", "failed", "dead"] | None, Query()
]


def build_app() -> APIGatewayRestResolver:
    """The routes. One resolver per thread (docs/decisions/0011-thread-safe-handlers.md)."""
    app = APIGatewayRestResolver(enable_validation=True)

    def caller() -> Caller:
        trusted = _trusted_caller.get()
        if trusted is not None:
            return trusted
        identity = app.current_event.request_context.identity
        return resolve_caller(
            get_database(),
            get_settings(),
            identity_arn=identity.user_arn or identity.caller,
            authorization=header(app, "Authorization"),
        )

    def created(who: Caller, make: Callable[[], BaseModel]) -> Response[Any]:
        return idempotent(app, who, make)

    # -- tenants ------------------------------------------------------------------------

    @app.post(
        "/v1/tenants", responses=created_ok(m.Tenant), tags=["tenants"], summary="Create a tenant"
    )
    def create_tenant(body: Annotated[m.TenantCreate, Body()]) -> Response[m.Tenant]:
        who = caller()
        return created(
            who,
            lambda: m.Tenant(
                **service.create_tenant(
                    get_database(), get_settings().config, who, name=body.name, group=body.group
                )
            ),
        )

    @app.get("/v1/tenants", responses=ok(m.TenantPage), tags=["tenants"], summary="List tenants")
    def list_tenants(cursor: Cursor = None, limit: Limit = 50) -> m.TenantPage:
        page = service.list_tenants(get_database(), caller(), cursor=cursor, limit=limit)
        return m.TenantPage(**page)

    @app.get(
        "/v1/tenants/<tenant_id>", responses=ok(m.Tenant), tags=["tenants"], summary="Get a tenant"
    )
    def get_tenant(tenant_id: IdPath) -> m.Tenant:
        return m.Tenant(**service.get_tenant(get_database(), caller(), tenant_id))

    # -- sources ------------------------------------------------------------------------

    @app.post(
        "/v1/sources",
        responses=created_ok(m.SourceCreated),
        tags=["sources"],
        summary="Create a source",
    )
    def create_source(body: Annotated[m.SourceCreate, Body()]) -> Response[m.SourceCreated]:
        who = caller()
        return created(
            who,
            lambda: m.SourceCreated(
                **service.create_source(get_database(), who, body.model_dump())
            ),
        )

    @app.get("/v1/sources", responses=ok(m.SourcePage), tags=["sources"], summary="List sources")
    def list_sources(
        tenant_id: TenantFilter = None, cursor: Cursor = None, limit: Limit = 50
    ) -> m.SourcePage:
        page = service.list_sources(
            get_database(), caller(), tenant_id=tenant_id, cursor=cursor, limit=limit
        )
        return m.SourcePage(**page)

    @app.get(
        "/v1/sources/<source_id>", responses=ok(m.Source), tags=["sources"], summary="Get a source"
    )
    def get_source(source_id: IdPath) -> m.Source:
        return m.Source(**service.get_source(get_database(), caller(), source_id))

    @app.post(
        "/v1/sources/<source_id>/enable", responses=ok(m.Source), tags=["sources"], summary="Enable"
    )
    def enable_source(source_id: IdPath) -> m.Source:
        who = caller()
        return m.Source(**service.set_source_enabled(get_database(), who, source_id, enabled=True))

    @app.post(
        "/v1/sources/<source_id>/disable",
        responses=ok(m.Source),
        tags=["sources"],
        summary="Disable",
    )
    def disable_source(source_id: IdPath) -> m.Source:
        who = caller()
        return m.Source(**service.set_source_enabled(get_database(), who, source_id, enabled=False))

    @app.post(
        "/v1/sources/<source_id>/rotate-secret",
        responses=ok(m.SourceRotated),
        tags=["sources"],
        summary="Rotate a source's secret",
    )
    def rotate_source_secret(
        source_id: IdPath, body: Annotated[m.SourceRotate, Body()]
    ) -> m.SourceRotated:
        rotated = service.rotate_source_secret(
            get_database(),
            caller(),
            source_id,
            secret=body.secret,
            keep_previous=body.keep_previous,
        )
        return m.SourceRotated(**rotated)

    @app.patch(
        "/v1/sources/<source_id>",
        responses=ok(m.Source),
        tags=["sources"],
        summary="Update a source's name, tolerance or scheme options",
    )
    def update_source(source_id: IdPath, body: Annotated[m.SourceUpdate, Body()]) -> m.Source:
        changes = body.model_dump(exclude_unset=True)
        return m.Source(**service.update_source(get_database(), caller(), source_id, changes))

    @app.delete(
        "/v1/sources/<source_id>",
        responses=ok(m.SourceDeleted),
        tags=["sources"],
        summary="Delete a source (it stops receiving; its events stay readable)",
    )
    def delete_source(source_id: IdPath) -> m.SourceDeleted:
        return m.SourceDeleted(**service.delete_source(get_database(), caller(), source_id))

    # -- endpoints ----------------------------------------------------------------------

    @app.post(
        "/v1/endpoints",
        responses=created_ok(m.EndpointCreated),
        tags=["endpoints"],
        summary="Create an endpoint",
    )
    def create_endpoint(body: Annotated[m.EndpointCreate, Body()]) -> Response[m.EndpointCreated]:
        who = caller()
        return created(
            who,
            lambda: m.EndpointCreated(
                **service.create_endpoint(get_database(), get_settings(), who, body.model_dump())
            ),
        )

    @app.get(
        "/v1/endpoints", responses=ok(m.EndpointPage), tags=["endpoints"], summary="List endpoints"
    )
    def list_endpoints(
        tenant_id: TenantFilter = None,
        enabled: Annotated[bool | None, Query()] = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.EndpointPage:
        page = service.list_endpoints(
            get_database(),
            caller(),
            tenant_id=tenant_id,
            enabled=enabled,
            cursor=cursor,
            limit=limit,
        )
        return m.EndpointPage(**page)

    @app.get(
        "/v1/endpoints/<endpoint_id>",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Get one",
    )
    def get_endpoint(endpoint_id: IdPath) -> m.Endpoint:
        return m.Endpoint(**service.get_endpoint(get_database(), caller(), endpoint_id))

    @app.patch(
        "/v1/endpoints/<endpoint_id>",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Update",
    )
    def update_endpoint(
        endpoint_id: IdPath, body: Annotated[m.EndpointUpdate, Body()]
    ) -> m.Endpoint:
        changes = body.model_dump(exclude_unset=True)
        updated = service.update_endpoint(
            get_database(), get_settings(), caller(), endpoint_id, changes
        )
        return m.Endpoint(**updated)

    @app.post(
        "/v1/endpoints/<endpoint_id>/enable",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Enable",
    )
    def enable_endpoint(endpoint_id: IdPath) -> m.Endpoint:
        who = caller()
        return m.Endpoint(
            **service.set_endpoint_enabled(get_database(), who, endpoint_id, enabled=True)
        )

    @app.post(
        "/v1/endpoints/<endpoint_id>/disable",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Disable",
    )
    def disable_endpoint(
        endpoint_id: IdPath, body: Annotated[m.EndpointDisable | None, Body()] = None
    ) -> m.Endpoint:
        reason = (body or m.EndpointDisable()).reason
        who = caller()
        return m.Endpoint(
            **service.set_endpoint_enabled(
                get_database(), who, endpoint_id, enabled=False, reason=reason
            )
        )

    @app.post(
        "/v1/endpoints/<endpoint_id>/rotate-secret",
        responses=ok(m.EndpointRotated),
        tags=["endpoints"],
        summary="Rotate the signing secret (the previous ones sign during the overlap)",
    )
    def rotate_endpoint_secret(endpoint_id: IdPath) -> m.EndpointRotated:
        rotated = service.rotate_endpoint_secret(
            get_database(), get_settings(), caller(), endpoint_id
        )
        return m.EndpointRotated(**rotated)

    @app.delete(
        "/v1/endpoints/<endpoint_id>",
        responses=ok(m.EndpointDeleted),
        tags=["endpoints"],
        summary="Delete an endpoint (disabled for good; its deliveries stay readable)",
    )
    def delete_endpoint(endpoint_id: IdPath) -> m.EndpointDeleted:
        return m.EndpointDeleted(**service.delete_endpoint(get_database(), caller(), endpoint_id))

    @app.post(
        "/v1/endpoints/<endpoint_id>/test",
        responses=created_ok(m.TestEventSent),
        tags=["endpoints"],
        summary="Send a test event to this endpoint only",
    )
    def send_test_event(
        endpoint_id: IdPath, body: Annotated[m.TestEventRequest | None, Body()] = None
    ) -> Response[m.TestEventSent]:
        who = caller()
        request = body or m.TestEventRequest()

        def make() -> BaseModel:
            sent = service.send_test_event(
                get_database(),
                get_settings(),
                who,
                endpoint_id,
                type=request.type,
                payload=request.payload,
            )
            nudge_fanout(get_settings())
            return m.TestEventSent(**sent)

        return created(who, make)

    # -- events -------------------------------------------------------------------------

    @app.post(
        "/v1/events",
        responses=ok(m.Published),
        tags=["events"],
        summary="Publish an event (Idempotency-Key dedupes it)",
    )
    def publish_event(body: Annotated[m.EventPublish, Body()]) -> m.Published:
        accepted = service.publish_event(
            get_database(),
            caller(),
            tenant_id=body.tenant_id,
            type=body.type,
            payload=body.payload,
            idempotency_key=header(app, "Idempotency-Key"),
            limits=get_settings().catalogue_limits,
        )
        logger.set_correlation_id(accepted.id)
        if not accepted.duplicate:
            nudge_fanout(get_settings())
        return m.Published(id=accepted.id, duplicate=accepted.duplicate)

    @app.get("/v1/events", responses=ok(m.EventPage), tags=["events"], summary="List events")
    def list_events(
        tenant_id: TenantFilter = None,
        type: Annotated[str | None, Query(max_length=255)] = None,
        source_id: Annotated[str | None, Query(max_length=100)] = None,
        since: Since = None,
        until: Until = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.EventPage:
        filters = {
            "tenant_id": tenant_id,
            "type": type,
            "source_id": source_id,
            "since": since,
            "until": until,
        }
        page = service.list_events(
            get_database(), caller(), filters=filters, cursor=cursor, limit=limit
        )
        return m.EventPage(**page)

    @app.get(
        "/v1/events/<event_id>", responses=ok(m.Event), tags=["events"], summary="Get an event"
    )
    def get_event(event_id: IdPath) -> m.Event:
        return m.Event(**service.get_event(get_database(), caller(), event_id))

    # -- deliveries ---------------------------------------------------------------------

    @app.get(
        "/v1/deliveries",
        responses=ok(m.DeliveryPage),
        tags=["deliveries"],
        summary="List deliveries",
    )
    def list_deliveries(
        tenant_id: TenantFilter = None,
        state: StateFilter = None,
        endpoint_id: Annotated[str | None, Query(max_length=100)] = None,
        event_id: Annotated[str | None, Query(max_length=100)] = None,
        since: Since = None,
        until: Until = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.DeliveryPage:
        filters = {
            "tenant_id": tenant_id,
            "state": state,
            "endpoint_id": endpoint_id,
            "event_id": event_id,
            "since": since,
            "until": until,
        }
        page = service.list_deliveries(
            get_database(), caller(), filters=filters, cursor=cursor, limit=limit
        )
        return m.DeliveryPage(**page)

    @app.get(
        "/v1/deliveries/<delivery_id>",
        responses=ok(m.Delivery),
        tags=["deliveries"],
        summary="Get one",
    )
    def get_delivery(delivery_id: IdPath) -> m.Delivery:
        return m.Delivery(**service.get_delivery(get_database(), caller(), delivery_id))

    @app.get(
        "/v1/deliveries/<delivery_id>/attempts",
        responses=ok(m.AttemptPage),
        tags=["deliveries"],
        summary="Attempts of a delivery",
    )
    def list_attempts(
        delivery_id: IdPath, cursor: Cursor = None, limit: Limit = 50
    ) -> m.AttemptPage:
        page = service.list_attempts(
            get_database(), caller(), delivery_id, cursor=cursor, limit=limit
        )
        return m.AttemptPage(**page)

    @app.post(
        "/v1/deliveries/<delivery_id>/resend",
        responses=ok(m.Resent),
        tags=["deliveries"],
        summary="Send one delivery again (same webhook-id, audited)",
    )
    def resend_delivery(delivery_id: IdPath) -> m.Resent:
        from hookline.replay import run_replay
        from hookline.runtime import delivery_queues, replay_options

        settings = get_settings()

        def replay(doc: dict[str, Any]) -> dict[str, Any]:
            return run_replay(
                get_database(), delivery_queues(settings), doc, replay_options(settings)
            )

        return m.Resent(**service.resend_delivery(get_database(), caller(), delivery_id, replay))

    # -- event types --------------------------------------------------------------------

    @app.post(
        "/v1/event-types",
        responses=created_ok(m.EventType),
        tags=["event-types"],
        summary="Add an event type to the catalogue (with an optional JSON Schema)",
    )
    def create_event_type(body: Annotated[m.EventTypeCreate, Body()]) -> Response[m.EventType]:
        who = caller()
        return created(
            who,
            lambda: m.EventType(
                **catalogue.create_event_type(
                    get_database(),
                    who,
                    tenant_id=body.tenant_id,
                    name=body.name,
                    description=body.description,
                    schema=body.schema_,
                    limits=get_settings().catalogue_limits,
                )
            ),
        )

    @app.get(
        "/v1/event-types",
        responses=ok(m.EventTypePage),
        tags=["event-types"],
        summary="List event types",
    )
    def list_event_types(
        tenant_id: TenantFilter = None,
        name: Annotated[str | None, Query(max_length=255)] = None,
        archived: Annotated[bool, Query(description="include archived types")] = False,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.EventTypePage:
        page = catalogue.list_event_types(
            get_database(),
            caller(),
            tenant_id=tenant_id,
            name=name,
            archived=archived,
            cursor=cursor,
            limit=limit,
        )
        return m.EventTypePage(**page)

    @app.get(
        "/v1/event-types/<event_type_id>",
        responses=ok(m.EventType),
        tags=["event-types"],
        summary="Get an event type",
    )
    def get_event_type(event_type_id: IdPath) -> m.EventType:
        return m.EventType(**catalogue.get_event_type(get_database(), caller(), event_type_id))

    @app.patch(
        "/v1/event-types/<event_type_id>",
        responses=ok(m.EventType),
        tags=["event-types"],
        summary="Update an event type's description or schema",
    )
    def update_event_type(
        event_type_id: IdPath, body: Annotated[m.EventTypeUpdate, Body()]
    ) -> m.EventType:
        changes: dict[str, Any] = {}
        if "description" in body.model_fields_set and body.description is not None:
            changes["description"] = body.description
        if "schema_" in body.model_fields_set:
            changes["schema"] = body.schema_
        updated = catalogue.update_event_type(
            get_database(), caller(), event_type_id, changes, get_settings().catalogue_limits
        )
        return m.EventType(**updated)

    @app.delete(
        "/v1/event-types/<event_type_id>",
        responses=ok(m.EventType),
        tags=["event-types"],
        summary="Archive an event type (it no longer validates; the record stays)",
    )
    def archive_event_type(event_type_id: IdPath) -> m.EventType:
        archived = catalogue.archive_event_type(get_database(), caller(), event_type_id)
        return m.EventType(**archived)

    # -- replays --------------------------------------------------------------------------

    @app.post(
        "/v1/replays",
        responses=accepted_ok(m.Replay),
        tags=["replays"],
        summary="Replay deliveries (runs in the background; GET its Location for progress)",
    )
    def create_replay(body: Annotated[m.ReplayCreate, Body()]) -> Response[m.Replay]:
        who = caller()
        settings = get_settings()
        return idempotent(
            app,
            who,
            lambda: m.Replay(
                **replays.create_replay(
                    get_database(),
                    who,
                    body.model_dump(exclude_unset=True),
                    groups=settings.config.group_names,
                    start=replay_starter(settings),
                )
            ),
            status=HTTPStatus.ACCEPTED,
            location=lambda answer: f"/v1/replays/{answer['id']}",
        )

    @app.get("/v1/replays", responses=ok(m.ReplayPage), tags=["replays"], summary="List replays")
    def list_replays(
        tenant_id: TenantFilter = None,
        state: ReplayStateFilter = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.ReplayPage:
        page = replays.list_replays(
            get_database(), caller(), tenant_id=tenant_id, state=state, cursor=cursor, limit=limit
        )
        return m.ReplayPage(**page)

    @app.get(
        "/v1/replays/<replay_id>",
        responses=ok(m.Replay),
        tags=["replays"],
        summary="Get a replay and its progress",
    )
    def get_replay(replay_id: IdPath) -> m.Replay:
        return m.Replay(**replays.get_replay(get_database(), caller(), replay_id))

    # -- status -------------------------------------------------------------------------

    @app.get("/v1/status", responses=ok(m.Status), tags=["status"], summary="Status summary")
    def status() -> m.Status:
        return m.Status(**service.status(get_database(), caller()))

    app.exception_handler(errors.HooklineError)(domain_error)
    app.exception_handler(SchemaViolation)(schema_violation)
    app.exception_handler(RequestValidationError)(validation_error)
    app.exception_handler(UnicodeDecodeError)(undecodable_body)
    app.not_found(no_route)
    return app


current_app = per_thread(build_app)


def replay_starter(settings: Settings) -> Callable[[str], None]:
    """How a recorded replay gets run: an asynchronous invocation of the replay function when
    it is configured (AWS), else a background thread of this process (local)."""
    function = settings.replay_function_name
    if function:

        def invoke(replay_id: str) -> None:
            client("lambda", settings).invoke(
                FunctionName=function,
                InvocationType="Event",
                Payload=replays.start_payload(replay_id),
            )

        return invoke

    def in_thread(replay_id: str) -> None:
        from hookline.runtime import delivery_queues, replay_options

        def run() -> None:
            try:
                replays.run_recorded_replay(
                    get_database(), delivery_queues(settings), replay_options(settings), replay_id
                )
            except Exception:  # the row turns failed when its heartbeat stops
                logger.exception("local replay runner failed", extra={"replay_id": replay_id})

        replays.start_in_thread(run, replay_id)

    return in_thread


def idempotent(
    app: APIGatewayRestResolver,
    who: Caller,
    make: Callable[[], BaseModel],
    *,
    status: HTTPStatus = HTTPStatus.CREATED,
    location: Callable[[dict[str, Any]], str] | None = None,
) -> Response[Any]:
    """`status` (201) with what `make` creates; with an Idempotency-Key, a retry of the same
    request gets the first answer back (sealed at rest: it may hold a new secret) instead of
    a second object, and the same key with a different request is a conflict."""

    def answer(code: HTTPStatus, body: dict[str, Any], headers: dict[str, str]) -> Response[Any]:
        if location is not None:
            headers = {**headers, "Location": location(body)}
        return json_response(code, body, headers or None)

    key = header(app, "Idempotency-Key")
    if key is None:
        return answer(status, make().model_dump(mode="json", by_alias=True), {})
    if not 0 < len(key) <= MAX_IDEMPOTENCY_KEY:
        raise errors.BadRequest(f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY} characters")
    event = app.current_event
    digest = hashlib.sha256(
        f"{event.http_method} {event.path}\n".encode() + (event.decoded_body or "").encode()
    ).hexdigest()
    db = get_database()
    with db.connection() as conn:
        if not api_repo.reserve_idempotency_key(conn, who.scope, key, digest):
            known = api_repo.get_idempotency_key(conn, who.scope, key)
            if known is None or known["request_hash"] != digest:
                raise errors.Conflict("this Idempotency-Key was used for a different request")
            if known["status"] is None:
                raise errors.Conflict("a request with this Idempotency-Key is still in progress")
            body = json.loads(reveal(conn, known["response"]["sealed"]))
            return answer(HTTPStatus(known["status"]), body, {"Idempotent-Replayed": "true"})
    try:
        body = make().model_dump(mode="json", by_alias=True)
    except BaseException:
        with db.connection() as conn:
            api_repo.release_idempotency_key(conn, who.scope, key)
        raise
    with db.connection() as conn:
        sealed = {"sealed": seal(conn, json.dumps(body))}
        api_repo.complete_idempotency_key(conn, who.scope, key, status, sealed)
    return answer(status, body, {})


def json_response(
    status: HTTPStatus, body: dict[str, Any], headers: dict[str, str] | None = None
) -> Response[Any]:
    """A JSON answer."""
    return Response(
        status_code=int(status), content_type="application/json", body=body, headers=headers
    )


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


def openapi_document() -> dict[str, Any]:
    """The OpenAPI document of these routes, with validation errors documented as the
    problem responses they are."""
    app = build_app()
    doc: dict[str, Any] = json.loads(
        app.get_openapi_json_schema(
            title=TITLE,
            version=VERSION,
            description=(
                "Manage tenants, sources, endpoints, event types, events, deliveries and "
                "replays. Authenticate with "
                "AWS SigV4 (IAM); every object is scoped to the caller's tenant."
            ),
        )
    )
    problem_ref = {"$ref": "#/components/schemas/Problem"}
    for operations in doc.get("paths", {}).values():
        for operation in operations.values():
            responses = operation.get("responses", {})
            if "422" in responses:
                responses["422"] = {
                    "description": "Validation error",
                    "content": {PROBLEM: {"schema": problem_ref}},
                }
    schemas = doc.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    return doc


@logger.inject_lambda_context(log_event=False)
@tracer.capture_lambda_handler(capture_response=False)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point."""
    refused = refuse_non_json(event) or refuse_unbounded_json(event)
    if refused is not None:
        return refused
    return current_app().resolve(event, context)


def refuse_non_json(event: dict[str, Any]) -> dict[str, Any] | None:
    """415 for a body that says it is not JSON (the API takes nothing else; Powertools would
    try to parse forms and multipart itself)."""
    if not event.get("body"):
        return None
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if not media or media == "application/json" or media.endswith("+json"):
        return None
    body = json.dumps(
        {
            "type": "about:blank",
            "title": HTTPStatus.UNSUPPORTED_MEDIA_TYPE.phrase,
            "status": 415,
            "detail": "send the body as application/json",
        }
    )
    return {
        "statusCode": 415,
        "headers": {"Content-Type": PROBLEM},
        "body": body,
        "isBase64Encoded": False,
    }


def refuse_unbounded_json(event: dict[str, Any]) -> dict[str, Any] | None:
    """400 for a body nested too deep or with a too long number (docs/decisions/0027),
    before Powertools parses it: Python's parser would raise RecursionError or ValueError."""
    text = event.get("body")
    if not text:
        return None
    try:
        if event.get("isBase64Encoded"):
            text = base64.b64decode(text).decode()
        screen_json_text(text, get_settings().catalogue_limits)
    except (binascii.Error, UnicodeDecodeError):
        return None  # Powertools answers these
    except LimitExceeded as err:
        logger.info("request refused", extra={"status": 400, "reason": str(err)})
        body = {"type": "about:blank", "title": "Bad Request", "status": 400, "detail": str(err)}
        return {
            "statusCode": 400,
            "headers": {"Content-Type": PROBLEM},
            "body": json.dumps(body),
            "isBase64Encoded": False,
        }
    return None
