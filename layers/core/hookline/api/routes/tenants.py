"""`/v1/tenants`: create (operators), list and read."""

from __future__ import annotations

from datetime import timedelta
from http import HTTPStatus
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body, Query

from hookline.api.edge import Edge, new_router
from hookline.api.idempotency import json_answer
from hookline.api.params import Cursor, IdPath, Limit, created_ok, ok
from hookline.db import get_database
from hookline.management import portal_links, tenant_service
from hookline.management import tenant_models as m
from hookline.restore import erase_tenant_by_api
from hookline.runtime import archive_store
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
                **tenant_service.create_tenant(
                    get_database(), get_settings().config, who, name=body.name, group=body.group
                )
            ),
        )

    @routes.get("/v1/tenants", responses=ok(m.TenantPage), tags=["tenants"], summary="List tenants")
    def list_tenants(cursor: Cursor = None, limit: Limit = 50) -> m.TenantPage:
        page = tenant_service.list_tenants(
            get_database(), edge.caller(), cursor=cursor, limit=limit
        )
        return m.TenantPage(**page)

    @routes.get(
        "/v1/tenants/<tenant_id>", responses=ok(m.Tenant), tags=["tenants"], summary="Get a tenant"
    )
    def get_tenant(tenant_id: IdPath) -> m.Tenant:
        return m.Tenant(**tenant_service.get_tenant(get_database(), edge.caller(), tenant_id))

    @routes.post(
        "/v1/tenants/<tenant_id>/portal-links",
        responses=created_ok(m.PortalLink),
        tags=["tenants"],
        summary="A short-lived link that opens the tenant's portal",
    )
    def create_link(
        tenant_id: IdPath, body: Annotated[m.PortalLinkCreate, Body()]
    ) -> Response[m.PortalLink]:
        host = edge.header("Host") or "localhost"
        link = portal_links.create_portal_link(
            get_database(), get_settings(), edge.caller(), tenant_id,
            own_url=f"https://{host}", base_url=body.base_url,
            ttl=timedelta(seconds=body.ttl_seconds),
        )  # fmt: skip
        # Not an idempotent create: the link is a credential, never kept to be replayed
        return json_answer(HTTPStatus.CREATED, m.PortalLink(**link).model_dump(mode="json"))

    @routes.get(
        "/v1/tenants/<tenant_id>/portal-links",
        responses=ok(m.PortalLinkPage),
        tags=["tenants"],
        summary="The tenant's portal links: used, revoked, expired or open (never their tokens)",
    )
    def list_links(tenant_id: IdPath, cursor: Cursor = None, limit: Limit = 50) -> m.PortalLinkPage:
        page = portal_links.list_portal_links(
            get_database(), edge.caller(), tenant_id, cursor=cursor, limit=limit
        )
        return m.PortalLinkPage(**page)

    @routes.delete(
        "/v1/tenants/<tenant_id>/portal-links/<link_id>",
        responses=ok(m.PortalLinkRevoked),
        tags=["tenants"],
        summary="Revoke a portal link; the session it opened ends",
    )
    def revoke_link(tenant_id: IdPath, link_id: IdPath) -> m.PortalLinkRevoked:
        revoked = portal_links.revoke_portal_link(get_database(), edge.caller(), tenant_id, link_id)
        return m.PortalLinkRevoked(**revoked)

    @routes.delete(
        "/v1/tenants/<tenant_id>",
        responses=ok(m.TenantErased),
        tags=["tenants"],
        summary="Erase a tenant's events, deliveries, secrets and archive (operators; erase=true)",
    )
    def erase_tenant(
        tenant_id: IdPath,
        erase: Annotated[bool, Query(description="must be true: erasure is for good")] = False,
    ) -> m.TenantErased:
        settings = get_settings()
        erased = erase_tenant_by_api(
            get_database(), archive_store(settings), edge.caller(), tenant_id, erase=erase
        )
        return m.TenantErased(**erased)

    return routes
