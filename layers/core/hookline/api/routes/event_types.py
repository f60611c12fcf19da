"""`/v1/event-types`: the tenant's event-type catalogue, with optional JSON Schemas."""

from __future__ import annotations

from typing import Annotated, Any

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, TenantFilter, created_ok, ok
from hookline.db import get_database
from hookline.management import event_models as m
from hookline.management import event_types as catalogue
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The event-type routes."""
    routes = new_router()

    @routes.post(
        "/v1/event-types",
        responses=created_ok(m.EventType),
        tags=["event-types"],
        summary="Add an event type to the catalogue (with an optional JSON Schema)",
    )
    def create_event_type(body: Annotated[m.EventTypeCreate, Body()]) -> Response[m.EventType]:
        who = edge.caller()
        return edge.created(
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

    @routes.get(
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
            edge.caller(),
            tenant_id=tenant_id,
            name=name,
            archived=archived,
            cursor=cursor,
            limit=limit,
        )
        return m.EventTypePage(**page)

    @routes.get(
        "/v1/event-types/<event_type_id>",
        responses=ok(m.EventType),
        tags=["event-types"],
        summary="Get an event type",
    )
    def get_event_type(event_type_id: IdPath) -> m.EventType:
        found = catalogue.get_event_type(get_database(), edge.caller(), event_type_id)
        return m.EventType(**found)

    @routes.patch(
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
            get_database(), edge.caller(), event_type_id, changes, get_settings().catalogue_limits
        )
        return m.EventType(**updated)

    @routes.delete(
        "/v1/event-types/<event_type_id>",
        responses=ok(m.EventType),
        tags=["event-types"],
        summary="Archive an event type (it no longer validates; the record stays)",
    )
    def archive_event_type(event_type_id: IdPath) -> m.EventType:
        archived = catalogue.archive_event_type(get_database(), edge.caller(), event_type_id)
        return m.EventType(**archived)

    return routes
