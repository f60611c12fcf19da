"""The console's fan-out quarantine (`/console/quarantine`, decision 0059): the (event,
endpoint) pairs whose matching raised, with their reasons, and a retry once the cause is
fixed — the same service as `GET /v1/fanout-quarantine` and `hookline quarantine retry`,
audited under the operator's name."""

from __future__ import annotations

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline.console.operator import operator, render_page, run_changing
from hookline.db import get_database
from hookline.management import quarantine_service
from hookline.management.access import Caller
from hookline.runtime import fanout_options
from hookline.settings import get_settings

PAGE = 200  # pairs shown; the API and CLI page through the rest


def register(app: APIGatewayRestResolver) -> None:
    """Add the quarantine page and its retry to `app`."""

    def page(who: Caller, retried: dict[str, object] | None = None) -> Response[str]:
        listed = quarantine_service.list_quarantined(
            get_database(), who, tenant_id=None, cursor=None, limit=PAGE
        )
        context = {"pairs": listed["items"], "more": listed["next_cursor"] is not None,
                   "retried": retried}  # fmt: skip
        return render_page(app, "quarantine.html", context)

    @app.get("/console/quarantine")
    def quarantine_page() -> Response[str]:
        return page(operator(app))

    @app.post("/console/quarantine/retry")
    def retry() -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            tenant = submitted.get("tenant_id", "").strip() or None
            retried = quarantine_service.retry_quarantined(
                get_database(), who, tenant_id=tenant, event_ids=None,
                limit=quarantine_service.MAX_RETRY,
                deadline=fanout_options(get_settings()).deadline,
            )  # fmt: skip
            return page(who, retried)

        return run_changing(app, act)
