"""`/v1/events`: publish a tenant's own event, list events, read one with its payload."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, Since, TenantFilter, Until, ok
from hookline.db import get_database
from hookline.management import event_models as m
from hookline.management import event_service
from hookline.nudge import after_accept
from hookline.observability import logger
from hookline.runtime import fanout_options, receipt_queues, tracing
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The event routes."""
    routes = new_router()

    @routes.post(
        "/v1/events",
        responses=ok(m.Published),
        tags=["events"],
        summary="Publish an event (Idempotency-Key dedupes it)",
    )
    def publish_event(body: Annotated[m.EventPublish, Body()]) -> m.Published:
        settings = get_settings()
        # The event's trace starts here, as an inbound one's starts at receive (decision 0070).
        with tracing(settings).root("publish", kind="server", attributes={}) as span:
            accepted = event_service.publish_event(
                get_database(),
                settings,
                edge.caller(),
                tenant_id=body.tenant_id,
                type=body.type,
                payload=body.payload,
                idempotency_key=edge.header("Idempotency-Key"),
                limits=settings.catalogue_limits,
                traceparent=span.traceparent if span else None,
                fanout=fanout_options(settings) if settings.fanout_at_receipt else None,
            )
            if span is not None:
                span.set(
                    {"hookline.event_id": accepted.id, "hookline.duplicate": accepted.duplicate}
                )
        logger.set_correlation_id(accepted.id)
        if not accepted.duplicate:
            after_accept(
                settings,
                accepted.fanned_out,
                accepted.to_send,
                lambda: receipt_queues(settings),
                carried=accepted.carried,
            )
        return m.Published(id=accepted.id, duplicate=accepted.duplicate)

    @routes.get("/v1/events", responses=ok(m.EventPage), tags=["events"], summary="List events")
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
        page = event_service.list_events(
            get_database(), edge.caller(), filters=filters, cursor=cursor, limit=limit
        )
        return m.EventPage(**page)

    @routes.get(
        "/v1/events/<event_id>", responses=ok(m.Event), tags=["events"], summary="Get an event"
    )
    def get_event(event_id: IdPath) -> m.Event:
        return m.Event(**event_service.get_event(get_database(), edge.caller(), event_id))

    return routes
