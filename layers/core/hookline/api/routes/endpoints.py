"""`/v1/endpoints`: where a tenant's events go — create, list, read, update, enable/disable,
rotate the signing secret, delete, and send a test event."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query
from pydantic import BaseModel

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, TenantFilter, created_ok, ok
from hookline.db import get_database
from hookline.management import endpoint_models as m
from hookline.management import endpoint_service
from hookline.management.endpoint_preview import preview_endpoint
from hookline.nudge import nudge_fanout
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The endpoint routes."""
    routes = new_router()

    @routes.post(
        "/v1/endpoints",
        responses=created_ok(m.EndpointCreated),
        tags=["endpoints"],
        summary="Create an endpoint",
    )
    def create_endpoint(body: Annotated[m.EndpointCreate, Body()]) -> Response[m.EndpointCreated]:
        who = edge.caller()
        return edge.created(
            who,
            lambda: m.EndpointCreated(
                **endpoint_service.create_endpoint(
                    get_database(),
                    get_settings(),
                    who,
                    body.model_dump(),
                    given=body.model_fields_set,
                )
            ),
        )

    @routes.get(
        "/v1/endpoints", responses=ok(m.EndpointPage), tags=["endpoints"], summary="List endpoints"
    )
    def list_endpoints(
        tenant_id: TenantFilter = None,
        enabled: Annotated[bool | None, Query()] = None,
        cursor: Cursor = None,
        limit: Limit = 50,
    ) -> m.EndpointPage:
        page = endpoint_service.list_endpoints(
            get_database(),
            edge.caller(),
            tenant_id=tenant_id,
            enabled=enabled,
            cursor=cursor,
            limit=limit,
        )
        return m.EndpointPage(**page)

    @routes.get(
        "/v1/endpoints/<endpoint_id>",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Get one",
    )
    def get_endpoint(endpoint_id: IdPath) -> m.Endpoint:
        return m.Endpoint(
            **endpoint_service.get_endpoint(get_database(), edge.caller(), endpoint_id)
        )

    @routes.patch(
        "/v1/endpoints/<endpoint_id>",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Update",
    )
    def update_endpoint(
        endpoint_id: IdPath, body: Annotated[m.EndpointUpdate, Body()]
    ) -> m.Endpoint:
        changes = body.model_dump(exclude_unset=True)
        updated = endpoint_service.update_endpoint(
            get_database(), get_settings(), edge.caller(), endpoint_id, changes
        )
        return m.Endpoint(**updated)

    @routes.post(
        "/v1/endpoints/<endpoint_id>/enable",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Enable",
    )
    def enable_endpoint(endpoint_id: IdPath) -> m.Endpoint:
        who = edge.caller()
        return m.Endpoint(
            **endpoint_service.set_endpoint_enabled(get_database(), who, endpoint_id, enabled=True)
        )

    @routes.post(
        "/v1/endpoints/<endpoint_id>/disable",
        responses=ok(m.Endpoint),
        tags=["endpoints"],
        summary="Disable",
    )
    def disable_endpoint(
        endpoint_id: IdPath, body: Annotated[m.EndpointDisable | None, Body()] = None
    ) -> m.Endpoint:
        reason = (body or m.EndpointDisable()).reason
        who = edge.caller()
        return m.Endpoint(
            **endpoint_service.set_endpoint_enabled(
                get_database(), who, endpoint_id, enabled=False, reason=reason
            )
        )

    @routes.post(
        "/v1/endpoints/<endpoint_id>/rotate-secret",
        responses=ok(m.EndpointRotated),
        tags=["endpoints"],
        summary="Rotate the signing secret (the previous ones sign during the overlap)",
    )
    def rotate_endpoint_secret(endpoint_id: IdPath) -> m.EndpointRotated:
        rotated = endpoint_service.rotate_endpoint_secret(
            get_database(), get_settings(), edge.caller(), endpoint_id
        )
        return m.EndpointRotated(**rotated)

    @routes.delete(
        "/v1/endpoints/<endpoint_id>",
        responses=ok(m.EndpointDeleted),
        tags=["endpoints"],
        summary="Delete an endpoint (disabled for good; its deliveries stay readable)",
    )
    def delete_endpoint(endpoint_id: IdPath) -> m.EndpointDeleted:
        deleted = endpoint_service.delete_endpoint(get_database(), edge.caller(), endpoint_id)
        return m.EndpointDeleted(**deleted)

    @routes.post(
        "/v1/endpoints/<endpoint_id>/test",
        responses=created_ok(m.TestEventSent),
        tags=["endpoints"],
        summary="Send a test event to this endpoint only",
    )
    def send_test_event(
        endpoint_id: IdPath, body: Annotated[m.TestEventRequest | None, Body()] = None
    ) -> Response[m.TestEventSent]:
        who = edge.caller()
        request = body or m.TestEventRequest()

        def make() -> BaseModel:
            sent = endpoint_service.send_test_event(
                get_database(),
                get_settings(),
                who,
                endpoint_id,
                type=request.type,
                payload=request.payload,
            )
            nudge_fanout(get_settings())
            return m.TestEventSent(**sent)

        return edge.created(who, make)

    @routes.post(
        "/v1/endpoints/<endpoint_id>/preview",
        responses=ok(m.EndpointPreviewed),
        tags=["endpoints"],
        summary="What an event would become: filter match and transformed body (nothing saved)",
    )
    def preview(
        endpoint_id: IdPath, body: Annotated[m.EndpointPreview, Body()]
    ) -> m.EndpointPreviewed:
        answer = preview_endpoint(
            get_database(),
            edge.caller(),
            endpoint_id,
            body.model_dump(exclude_unset=True),
            get_settings().catalogue_limits,
        )
        return m.EndpointPreviewed(**answer)

    return routes
