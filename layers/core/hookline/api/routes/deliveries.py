"""`/v1/deliveries`: one event x one endpoint — list, read, its attempts, resend."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Query

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, Since, StateFilter, TenantFilter, Until, ok
from hookline.db import get_database
from hookline.management import delivery_models as m
from hookline.management import delivery_service
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The delivery routes."""
    routes = new_router()

    @routes.get(
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
        page = delivery_service.list_deliveries(
            get_database(), edge.caller(), filters=filters, cursor=cursor, limit=limit
        )
        return m.DeliveryPage(**page)

    @routes.get(
        "/v1/deliveries/<delivery_id>",
        responses=ok(m.Delivery),
        tags=["deliveries"],
        summary="Get one",
    )
    def get_delivery(delivery_id: IdPath) -> m.Delivery:
        return m.Delivery(
            **delivery_service.get_delivery(get_database(), edge.caller(), delivery_id)
        )

    @routes.get(
        "/v1/deliveries/<delivery_id>/attempts",
        responses=ok(m.AttemptPage),
        tags=["deliveries"],
        summary="Attempts of a delivery",
    )
    def list_attempts(
        delivery_id: IdPath, cursor: Cursor = None, limit: Limit = 50
    ) -> m.AttemptPage:
        page = delivery_service.list_attempts(
            get_database(), edge.caller(), delivery_id, cursor=cursor, limit=limit
        )
        return m.AttemptPage(**page)

    @routes.post(
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

        resent = delivery_service.resend_delivery(
            get_database(), edge.caller(), delivery_id, replay
        )
        return m.Resent(**resent)

    return routes
