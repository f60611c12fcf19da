"""Editing an endpoint in the console (`/console/endpoints/{id}/edit`): its URL, description,
event types, limits (concurrency, rate), retry on 4xx, content filter (an EventBridge
pattern, decision 0044) and input transformer (decision 0045).

Only what the form changed is sent, as the API's `PATCH /v1/endpoints/{id}` takes it: checked
by the same request model (`EndpointUpdate`), then `service.update_endpoint`, which validates,
saves and audits. A refusal is shown next to the field it is about; through htmx only the form
is swapped (a 400 partial), without JavaScript the page comes back whole.
"""

from __future__ import annotations

import json
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from pydantic import ValidationError

from hookline.console import web
from hookline.console.operator import operator, render_page, run_changing
from hookline.db import get_database
from hookline.errors import BadRequest, UnsafeURL
from hookline.management import service
from hookline.management.access import Caller
from hookline.management.models import EndpointUpdate
from hookline.settings import get_settings

FIELDS = (
    "url", "description", "event_types", "max_concurrency", "rate_limit_per_second",
    "retry_on_4xx", "content_filter", "input_transformer",
)  # fmt: skip
# What a service refusal starts with -> the field it is about (else it is the form's).
_PREFIXES = (
    ("event filter", "event_types"),
    ("filter", "content_filter"),
    ("transform", "input_transformer"),
    ("url", "url"),
    ("endpoint url", "url"),
    ("rate limit", "rate_limit_per_second"),
    ("give rate_limit", "rate_limit_per_second"),
    ("max concurrency", "max_concurrency"),
)


def register(app: APIGatewayRestResolver) -> None:
    """Add the endpoint edit form and its save to `app`."""

    @app.get("/console/endpoints/<endpoint_id>/edit")
    def edit_form(endpoint_id: str) -> Response[str]:
        shown = service.get_endpoint(get_database(), operator(app), endpoint_id)
        context = {"endpoint": shown, "form": form_values(shown), "errors": {}}
        return render_page(app, "endpoint_edit.html", context)

    @app.post("/console/endpoints/<endpoint_id>")
    def save(endpoint_id: str) -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            db, settings = get_database(), get_settings()
            current = service.get_endpoint(db, who, endpoint_id)
            changes, errors = changes_from_form(current, submitted)
            if not errors:
                try:
                    body = EndpointUpdate.model_validate(changes).model_dump(exclude_unset=True)
                    if body:
                        service.update_endpoint(db, settings, who, endpoint_id, body)
                except ValidationError as err:
                    errors = _model_errors(err)
                except BadRequest as err:
                    errors = {field_of(err): str(err)}
            if errors:
                context = {"endpoint": current, "form": submitted, "errors": errors}
                partial = web.header_of(app, "HX-Request") == "true"
                name = "_endpoint_form.html" if partial else "endpoint_edit.html"
                return render_page(app, name, context, 400)
            notice = "saved" if changes else "nothing changed"
            return _after_save(app, f"/console/endpoints/{endpoint_id}?notice={notice}")

        return run_changing(app, act)


def form_values(endpoint: dict[str, Any]) -> dict[str, str]:
    """An endpoint as the form's field values."""
    rate = endpoint.get("rate_limit_per_second")
    return {
        "url": endpoint["url"],
        "description": endpoint.get("description") or "",
        "event_types": ", ".join(endpoint.get("event_types") or []),
        "max_concurrency": str(endpoint["max_concurrency"]),
        "rate_limit_per_second": "" if rate is None else f"{rate:g}",
        "retry_on_4xx": "yes" if endpoint.get("retry_on_4xx") else "",
        "content_filter": _json(endpoint.get("content_filter")),
        "input_transformer": _json(endpoint.get("input_transformer")),
    }


def changes_from_form(
    current: dict[str, Any], submitted: dict[str, str]
) -> tuple[dict[str, Any], dict[str, str]]:
    """The update request the form asks for (only fields that differ from `current`; an
    emptied filter, transformer or rate limit is cleared), and the fields that could not
    even be read (not a number, not JSON)."""
    changes: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if current.get("kind", "https") == "https" and "url" in submitted:
        url = submitted["url"].strip()
        if url != current["url"]:
            changes["url"] = url
    description = submitted.get("description", "").strip()
    if description != (current.get("description") or ""):
        changes["description"] = description
    types = [t.strip() for t in submitted.get("event_types", "").split(",") if t.strip()]
    if types != list(current.get("event_types") or []):
        changes["event_types"] = types
    try:
        concurrency = int(submitted.get("max_concurrency", "").strip())
        if concurrency != current["max_concurrency"]:
            changes["max_concurrency"] = concurrency
    except ValueError:
        errors["max_concurrency"] = "max concurrency: a whole number between 1 and 1000"
    rate_text = submitted.get("rate_limit_per_second", "").strip()
    if not rate_text:
        if current.get("rate_limit_per_second") is not None:
            changes["clear_rate_limit"] = True
    else:
        try:
            rate = float(rate_text)
            if rate != current.get("rate_limit_per_second"):
                changes["rate_limit_per_second"] = rate
        except ValueError:
            errors["rate_limit_per_second"] = "rate limit: a number of deliveries per second"
    retry = submitted.get("retry_on_4xx") == "yes"
    if retry != bool(current.get("retry_on_4xx")):
        changes["retry_on_4xx"] = retry
    for name, label in (("content_filter", "filter"), ("input_transformer", "transform")):
        text = submitted.get(name, "").strip()
        if not text:
            if current.get(name) is not None:
                changes[f"clear_{name}"] = True
            continue
        try:
            value = json.loads(text)
        except ValueError as err:
            errors[name] = f"{label}: not JSON ({err})"
            continue
        if not isinstance(value, dict):
            errors[name] = f"{label}: must be a JSON object"
        elif value != current.get(name):
            changes[name] = value
    return changes, errors


def field_of(err: BadRequest) -> str:
    """The form field a service refusal is about ('form' when it names none)."""
    if isinstance(err, UnsafeURL):
        return "url"
    message = str(err).lower()
    return next((field for prefix, field in _PREFIXES if message.startswith(prefix)), "form")


def _model_errors(err: ValidationError) -> dict[str, str]:
    errors: dict[str, str] = {}
    for problem in err.errors():
        where = str(problem["loc"][0]) if problem["loc"] else "form"
        field = where if where in FIELDS else "form"
        errors.setdefault(field, f"{where.replace('_', ' ')}: {problem['msg']}")
    return errors


def _json(value: Any) -> str:
    return "" if value is None else json.dumps(value, indent=2, sort_keys=True)


def _after_save(app: APIGatewayRestResolver, location: str) -> Response[str]:
    """Back to the endpoint: htmx is told to load it as a page (HX-Redirect), a plain form
    post is sent there (303)."""
    if web.header_of(app, "HX-Request") == "true":
        headers = {"HX-Redirect": location, **web.security_headers()}
        return Response(status_code=200, content_type=web.HTML, body="", headers=headers)
    return web.redirect(location)
