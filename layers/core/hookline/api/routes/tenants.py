"""`/v1/tenants`: create (operators), list and read."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, created_ok, ok
from hookline.db import get_database
from hookline.management import models as m
from hookline.management import service
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The tenant routes."""
    routes = new_router()

    @routes.post(
        "/v1/tenants", responses=created_ok(m.Tenant), tags=["tenants"], summary="Create a tenant"
    )
    def create_tenant(body: Annotated[m.TenantCreate, Body()]) -> Response[m.Tenant]:
        who = edge.caller()
        return edge.created(
            who,
            lambda: m.Tenant(
                **service.create_tenant(
                    get_database(), get_settings().config, who, name=body.name, group=body.group
                )
            ),
        )

    @routes.get("/v1/tenants", responses=ok(m.TenantPage), tags=["tenants"], summary="List tenants")
    def list_tenants(cursor: Cursor = None, limit: Limit = 50) -> m.TenantPage:
        page = service.list_tenants(get_database(), edge.caller(), cursor=cursor, limit=limit)
        return m.TenantPage(**page)

    @routes.get(
        "/v1/tenants/<tenant_id>", responses=ok(m.Tenant), tags=["tenants"], summary="Get a tenant"
    )
    def get_tenant(tenant_id: IdPath) -> m.Tenant:
        return m.Tenant(**service.get_tenant(get_database(), edge.caller(), tenant_id))

    return routes
