"""`/v1/fanout-quarantine`: fan-out pairs whose matching raised (decision 0059) — list them
with their reasons, and retry them once the cause is fixed."""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Body

from hookline.api.edge import Edge, new_router
from hookline.api.params import Cursor, Limit, TenantFilter, ok
from hookline.db import get_database
from hookline.management import quarantine_models as m
from hookline.management import quarantine_service
from hookline.runtime import fanout_options
from hookline.settings import get_settings


def router(edge: Edge) -> Router:
    """The quarantine routes."""
    routes = new_router()

    @routes.get(
        "/v1/fanout-quarantine",
        responses=ok(m.QuarantinePage),
        tags=["deliveries"],
        summary="List fan-out pairs in quarantine",
    )
    def list_fanout_quarantine(
        tenant_id: TenantFilter = None, cursor: Cursor = None, limit: Limit = 50
    ) -> m.QuarantinePage:
        page = quarantine_service.list_quarantined(
            get_database(), edge.caller(), tenant_id=tenant_id, cursor=cursor, limit=limit
        )
        return m.QuarantinePage(**page)

    @routes.post(
        "/v1/fanout-quarantine/retry",
        responses=ok(m.QuarantineRetried),
        tags=["deliveries"],
        summary="Decide quarantined fan-out pairs again (audited)",
    )
    def retry_fanout_quarantine(body: Annotated[m.QuarantineRetry, Body()]) -> m.QuarantineRetried:
        retried = quarantine_service.retry_quarantined(
            get_database(), edge.caller(), tenant_id=body.tenant_id, event_ids=body.event_ids,
            limit=body.limit, deadline=fanout_options(get_settings()).deadline,
        )  # fmt: skip
        return m.QuarantineRetried(**retried)

    return routes
