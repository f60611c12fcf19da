"""Editing an endpoint in the console (`/console/endpoints/{id}/edit`): every field the form
has (`endpoint_edit.FIELDS`), limits included. The form, its checks and its answers are
`endpoint_edit`'s, shared with the portal's edit page."""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline.console import endpoint_edit
from hookline.console.operator import operator, render_page, run_changing
from hookline.db import get_database
from hookline.management import endpoint_service
from hookline.management.access import Caller
from hookline.settings import get_settings


def register(app: APIGatewayRestResolver) -> None:
    """Add the endpoint edit form and its save to `app`."""

    def render(name: str, context: dict[str, Any], status: int = 200) -> Response[str]:
        return render_page(app, name, context, status)

    @app.get("/console/endpoints/<endpoint_id>/edit")
    def edit_form(endpoint_id: str) -> Response[str]:
        shown = endpoint_service.get_endpoint(get_database(), operator(app), endpoint_id)
        form = endpoint_edit.form_values(shown)
        context = {"endpoint": shown, "form": form, "errors": {}, "fields": endpoint_edit.FIELDS}
        return render("endpoint_edit.html", context)

    @app.post("/console/endpoints/<endpoint_id>")
    def save(endpoint_id: str) -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            return endpoint_edit.submit(
                app, render, get_database(), get_settings(), who, endpoint_id, submitted,
                fields=endpoint_edit.FIELDS, base="/console",
            )  # fmt: skip

        return run_changing(app, act)
