"""Editing an endpoint, in the console and in the portal: its URL, description, event types,
limits (concurrency, rate), retry on 4xx, content filter (an EventBridge pattern, decision
0044), input transformer (decision 0045) and ordering key (decision 0069) — or, in the
portal, the subset a tenant's customers edit (`PORTAL_FIELDS`).

Only what the form changed is sent, as the API's `PATCH /v1/endpoints/{id}` takes it: checked
by the same request model (`EndpointUpdate`), then `endpoint_service.update_endpoint`, which
validates, saves and audits. A refusal is shown next to the field it is about; through htmx
only the form is swapped (a 400 partial), without JavaScript the page comes back whole.

The add forms share the signing, OAuth2 and TLS part (`_endpoint_security.html`): read here
by `security_fields`, a refusal placed by `refusal`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response
from pydantic import ValidationError

from hookline.console import web
from hookline.db import Database
from hookline.errors import BadRequest, UnsafeURL
from hookline.management import endpoint_service
from hookline.management.access import Caller
from hookline.management.endpoint_models import EndpointUpdate
from hookline.settings import Settings
from hookline.ssrf import check_url

FIELDS = (
    "url", "description", "event_types", "max_concurrency", "rate_limit_per_second",
    "retry_on_4xx", "content_filter", "input_transformer", "auth", "tls", "ordering",
)  # fmt: skip
# What the portal's add form sets; limits stay as the operator left them (decision 0058).
PORTAL_FIELDS = (
    "url", "description", "event_types", "content_filter", "input_transformer", "auth", "tls",
    "ordering",
)  # fmt: skip
# The ordering field's word for one order across the endpoint (`{"key": null}`).
WHOLE_ENDPOINT = "endpoint"
# OAuth2 and mutual TLS (decision 0067): write-only parts of the form, never filled back in.
AUTH_INPUTS = ("token_url", "client_id", "client_secret", "scope", "audience")
TLS_INPUTS = ("client_certificate", "client_key", "ca_bundle")
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
    ("auth", "auth"),
    ("give auth", "auth"),
    ("tls", "tls"),
    ("give tls", "tls"),
    ("ordering", "ordering"),
    ("give ordering", "ordering"),
    ("signing", "signing"),
)


Render = Callable[[str, dict[str, Any], int], Response[str]]


def submit(
    app: APIGatewayRestResolver, render: Render, db: Database, settings: Settings, who: Caller,
    endpoint_id: str, submitted: dict[str, str], *, fields: tuple[str, ...], base: str,
    public_urls_only: bool = False,
) -> Response[str]:  # fmt: skip
    """Save what the edit form changed among `fields` (others are ignored), as `who`: then
    back to `{base}/endpoints/{id}`; or the form again (400) with each refusal next to its
    field. With `public_urls_only` a new URL must resolve to public addresses whatever the
    deployment allows (the portal's rule, decision 0043)."""
    current = endpoint_service.get_endpoint(db, who, endpoint_id)
    changes, errors = changes_from_form(current, submitted, fields)
    if not errors:
        try:
            if public_urls_only and "url" in changes:
                check_url(
                    changes["url"], allow_private=False, allow_http=settings.allow_http_targets
                )
            if public_urls_only and (changes.get("auth") or {}).get("token_url"):
                check_public_token_url(changes["auth"]["token_url"], settings)
            body = EndpointUpdate.model_validate(changes).model_dump(exclude_unset=True)
            if body:
                endpoint_service.update_endpoint(db, settings, who, endpoint_id, body)
            if public_urls_only and "url" in changes:  # checked at connect time too (0059)
                endpoint_service.keep_to_public_targets(db, who, endpoint_id)
        except ValidationError as err:
            errors = _model_errors(err)
        except BadRequest as err:
            errors = {field_of(err): str(err)}
    if errors:
        context = {"endpoint": current, "form": submitted, "errors": errors, "fields": fields}
        partial = web.header_of(app, "HX-Request") == "true"
        return render("_endpoint_form.html" if partial else "endpoint_edit.html", context, 400)
    notice = "saved" if changes else "unchanged"
    return _after_save(app, f"{base}/endpoints/{endpoint_id}?notice={notice}")


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
        "ordering": _ordering_text(endpoint.get("ordering")),
    }


def ordering_of(text: str) -> dict[str, Any]:
    """The API's `ordering` for what the form's ordering field says (decision 0069)."""
    return {"key": None if text == WHOLE_ENDPOINT else text}


def _ordering_text(ordering: dict[str, Any] | None) -> str:
    if ordering is None:
        return ""
    return WHOLE_ENDPOINT if ordering.get("key") is None else str(ordering["key"])


def changes_from_form(
    current: dict[str, Any], submitted: dict[str, str], fields: tuple[str, ...] = FIELDS
) -> tuple[dict[str, Any], dict[str, str]]:
    """The update request the form asks for among `fields` (only fields that differ from
    `current`; an emptied filter, transformer or rate limit is cleared), and the fields that
    could not even be read (not a number, not JSON)."""
    changes: dict[str, Any] = {}
    errors: dict[str, str] = {}
    if "url" in fields and current.get("kind", "https") == "https" and "url" in submitted:
        url = submitted["url"].strip()
        if url != current["url"]:
            changes["url"] = url
    description = submitted.get("description", "").strip()
    if "description" in fields and description != (current.get("description") or ""):
        changes["description"] = description
    types = [t.strip() for t in submitted.get("event_types", "").split(",") if t.strip()]
    if "event_types" in fields and types != list(current.get("event_types") or []):
        changes["event_types"] = types
    if "max_concurrency" in fields:
        _limit_changes(current, submitted, changes, errors)
    for name, label in (("content_filter", "filter"), ("input_transformer", "transform")):
        text = submitted.get(name, "").strip()
        if name not in fields:
            continue
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
    if "ordering" in fields and "ordering" in submitted:
        text = submitted["ordering"].strip()
        if text != _ordering_text(current.get("ordering")):
            if not text:
                changes["clear_ordering"] = True
            else:
                changes["ordering"] = ordering_of(text)
    if "auth" in fields and current.get("kind", "https") == "https":
        _auth_changes(submitted, changes)
    return changes, errors


def _auth_changes(submitted: dict[str, str], changes: dict[str, Any]) -> None:
    """OAuth2 and mutual TLS: filled in, a part replaces the whole of it (the secret or key
    included); ticked, it is removed; left empty, it stays as it is."""
    oauth2, tls = _oauth2_of(submitted), _tls_of(submitted)
    if submitted.get("clear_auth") == "yes":
        changes["clear_auth"] = True
    elif oauth2:
        changes["auth"] = oauth2
    if submitted.get("clear_tls") == "yes":
        changes["clear_tls"] = True
    elif tls:
        changes["tls"] = tls


def security_fields(submitted: dict[str, str]) -> dict[str, Any]:
    """What an add form's signing, OAuth2 and mutual-TLS parts ask for: `signing` as chosen,
    `auth` and `tls` when any of their inputs is filled in."""
    fields: dict[str, Any] = {"signing": submitted.get("signing") or "hmac"}
    oauth2, tls = _oauth2_of(submitted), _tls_of(submitted)
    if oauth2:
        fields["auth"] = oauth2
    if tls:
        fields["tls"] = tls
    return fields


def _oauth2_of(submitted: dict[str, str]) -> dict[str, Any] | None:
    oauth2 = {k: submitted.get(f"oauth2_{k}", "").strip() for k in AUTH_INPUTS}
    if not any(oauth2.values()):
        return None
    return {"type": "oauth2_client_credentials", **{k: v or None for k, v in oauth2.items()}}


def _tls_of(submitted: dict[str, str]) -> dict[str, Any] | None:
    tls = {k: submitted.get(f"tls_{k}", "").strip() for k in TLS_INPUTS}
    if not any(tls.values()):
        return None
    return {k: (v + "\n") if v else None for k, v in tls.items()}


def refusal(err: BadRequest) -> dict[str, Any]:
    """An add form's context for a refusal: `errors` by field; `error` (shown by the URL, as
    the form always did) unless the refusal is about signing, OAuth2 or TLS."""
    field = field_of(err)
    shown_by_url = None if field in ("auth", "tls", "signing") else str(err)
    return {"error": shown_by_url, "errors": {field: str(err)}}


def check_public_token_url(url: str, settings: Settings) -> None:
    """The portal's rule for URLs (decision 0043) held to an OAuth2 token URL."""
    try:
        check_url(url, allow_private=False, allow_http=settings.allow_http_targets)
    except UnsafeURL as err:
        raise BadRequest(
            f"auth.token_url: {str(err).replace('endpoint URL', 'token URL')}"
        ) from None


def _limit_changes(
    current: dict[str, Any], submitted: dict[str, str], changes: dict[str, Any],
    errors: dict[str, str],
) -> None:  # fmt: skip
    """Max concurrency, rate limit and retry on 4xx: the operator's fields."""
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
