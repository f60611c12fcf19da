"""`/v1/restores`: restores from the archive, recorded and run in the background like replays
(docs/decisions/0051); operators only."""

from __future__ import annotations

from http import HTTPStatus
from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from hookline import restore_requests as restores
from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, IdPath, Limit, TenantFilter, accepted_ok, ok
from hookline.db import get_database
from hookline.management import restore_models as rm
from hookline.runtime import restore_starter
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The restore routes."""
    routes = new_router()

    @routes.post(
        "/v1/restores",
        responses=accepted_ok(rm.Restore),
        tags=["restores"],
        summary="Restore a tenant's archived window (runs in the background; GET its Location)",
    )
    def create_restore(body: Annotated[rm.RestoreCreate, Body()]) -> Response[rm.Restore]:
        who = edge.caller()
        settings = get_settings()
        return edge.created(
            who,
            lambda: rm.Restore(
                **restores.create_restore(
                    get_database(), who, body.model_dump(), start=restore_starter(settings)
                )
            ),
            status=HTTPStatus.ACCEPTED,
            location=lambda answer: f"/v1/restores/{answer['id']}",
        )

    @routes.get(
        "/v1/restores", responses=ok(rm.RestorePage), tags=["restores"], summary="List restores"
    )
    def list_restores(
        tenant_id: TenantFilter = None, cursor: Cursor = None, limit: Limit = 50
    ) -> rm.RestorePage:
        page = restores.list_restores(
            get_database(), edge.caller(), tenant_id=tenant_id, cursor=cursor, limit=limit
        )
        return rm.RestorePage(**page)

    @routes.get(
        "/v1/restores/<restore_id>",
        responses=ok(rm.Restore),
        tags=["restores"],
        summary="Get a restore and its outcome",
    )
    def get_restore(restore_id: IdPath) -> rm.Restore:
        return rm.Restore(**restores.get_restore(get_database(), edge.caller(), restore_id))

    return routes
