"""`/v1/sources`: inbound provider configurations — create, list, read, enable/disable,
rotate the secret, update, delete."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, TenantFilter, created_ok, ok
from hookline.db import get_database
from hookline.management import source_models as m
from hookline.management import source_service


def router(edge: Edge) -> Router:
    """The source routes."""
    routes = new_router()

    @routes.post(
        "/v1/sources",
        responses=created_ok(m.SourceCreated),
        tags=["sources"],
        summary="Create a source",
    )
    def create_source(body: Annotated[m.SourceCreate, Body()]) -> Response[m.SourceCreated]:
        who = edge.caller()
        return edge.created(
            who,
            lambda: m.SourceCreated(
                **source_service.create_source(get_database(), who, body.model_dump())
            ),
        )

    @routes.get("/v1/sources", responses=ok(m.SourcePage), tags=["sources"], summary="List sources")
    def list_sources(
        tenant_id: TenantFilter = None, cursor: Cursor = None, limit: Limit = 50
    ) -> m.SourcePage:
        page = source_service.list_sources(
            get_database(), edge.caller(), tenant_id=tenant_id, cursor=cursor, limit=limit
        )
        return m.SourcePage(**page)

    @routes.get(
        "/v1/sources/<source_id>", responses=ok(m.Source), tags=["sources"], summary="Get a source"
    )
    def get_source(source_id: IdPath) -> m.Source:
        return m.Source(**source_service.get_source(get_database(), edge.caller(), source_id))

    @routes.post(
        "/v1/sources/<source_id>/enable", responses=ok(m.Source), tags=["sources"], summary="Enable"
    )
    def enable_source(source_id: IdPath) -> m.Source:
        who = edge.caller()
        return m.Source(
            **source_service.set_source_enabled(get_database(), who, source_id, enabled=True)
        )

    @routes.post(
        "/v1/sources/<source_id>/disable",
        responses=ok(m.Source),
        tags=["sources"],
        summary="Disable",
    )
    def disable_source(source_id: IdPath) -> m.Source:
        who = edge.caller()
        return m.Source(
            **source_service.set_source_enabled(get_database(), who, source_id, enabled=False)
        )

    @routes.post(
        "/v1/sources/<source_id>/rotate-secret",
        responses=ok(m.SourceRotated),
        tags=["sources"],
        summary="Rotate a source's secret",
    )
    def rotate_source_secret(
        source_id: IdPath, body: Annotated[m.SourceRotate, Body()]
    ) -> m.SourceRotated:
        rotated = source_service.rotate_source_secret(
            get_database(),
            edge.caller(),
            source_id,
            secret=body.secret,
            keep_previous=body.keep_previous,
        )
        return m.SourceRotated(**rotated)

    @routes.patch(
        "/v1/sources/<source_id>",
        responses=ok(m.Source),
        tags=["sources"],
        summary="Update a source's name, tolerance or scheme options",
    )
    def update_source(source_id: IdPath, body: Annotated[m.SourceUpdate, Body()]) -> m.Source:
        changes = body.model_dump(exclude_unset=True)
        return m.Source(
            **source_service.update_source(get_database(), edge.caller(), source_id, changes)
        )

    @routes.delete(
        "/v1/sources/<source_id>",
        responses=ok(m.SourceDeleted),
        tags=["sources"],
        summary="Delete a source (it stops receiving; its events stay readable)",
    )
    def delete_source(source_id: IdPath) -> m.SourceDeleted:
        return m.SourceDeleted(
            **source_service.delete_source(get_database(), edge.caller(), source_id)
        )

    return routes
