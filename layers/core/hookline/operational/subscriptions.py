"""Who hears about endpoints, and when an endpoint counts as failing: a tenant's opt-in
e-mail addresses and chat webhook, and an endpoint's own thresholds (decision 0068). Each
caller acts within its scope (an operator on any tenant, a tenant on its own)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest, UnsafeURL
from hookline.management import endpoint_service, tenant_service
from hookline.management.access import Caller
from hookline.operational.health import endpoint_health, thresholds
from hookline.repositories import operational as repo
from hookline.settings import Settings
from hookline.ssrf import check_url

EMAIL = re.compile(r"^[^@\s,;<>]{1,64}@[A-Za-z0-9.-]{1,253}\.[A-Za-z]{2,63}$")
MAX_EMAILS = 10


def set_tenant_notifications(
    db: Database, settings: Settings, caller: Caller, tenant_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Opt a tenant in (or out, with empty values) to e-mail and chat messages."""
    tenant_service.get_tenant(db, caller, tenant_id)  # NotFound outside the caller's scope
    emails = body.get("emails") or []
    if len(emails) > MAX_EMAILS:
        raise BadRequest(f"emails: at most {MAX_EMAILS} addresses")
    for email in emails:
        if not isinstance(email, str) or not EMAIL.match(email):
            raise BadRequest(f"emails: {str(email)[:100]!r} is not an e-mail address")
    chat_url = body.get("chat_url") or None
    if chat_url is not None:
        try:
            chat_url = check_url(
                chat_url,
                allow_private=settings.allow_private_targets,
                allow_http=settings.allow_http_targets,
            ).url
        except UnsafeURL as err:  # named as the field it is, not as an endpoint's URL
            raise BadRequest(f"chat_url: {str(err).replace('endpoint URL', 'chat URL')}") from None
    with db.connection() as conn:
        row = repo.put_tenant_notifications(conn, tenant_id, sorted(set(emails)), chat_url)
    return {"tenant_id": row["tenant_id"], "emails": row["emails"], "chat_url": row["chat_url"]}


def get_tenant_notifications(db: Database, caller: Caller, tenant_id: str) -> dict[str, Any]:
    """A tenant's notification targets (empty when it never opted in)."""
    tenant_service.get_tenant(db, caller, tenant_id)
    with db.connection() as conn:
        row = repo.tenant_notifications(conn, tenant_id)
    return {
        "tenant_id": tenant_id,
        "emails": row["emails"] if row else [],
        "chat_url": row["chat_url"] if row else None,
    }


def get_endpoint_health(
    db: Database, settings: Settings, caller: Caller, endpoint_id: str
) -> dict[str, Any]:
    """The health of an endpoint in the caller's scope."""
    endpoint = endpoint_service.get_endpoint(db, caller, endpoint_id)
    deadline = timedelta(hours=settings.config.delivery_deadline_hours)
    with db.connection() as conn:
        return endpoint_health(conn, endpoint, options=settings.operational, deadline=deadline)


def set_endpoint_thresholds(
    db: Database, settings: Settings, caller: Caller, endpoint_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Set an endpoint's failing thresholds (a missing or null one: the default)."""
    endpoint = endpoint_service.get_endpoint(db, caller, endpoint_id)
    after = body.get("failing_after_attempts")
    rate = body.get("failing_error_rate")
    window = body.get("failing_window_seconds")
    if after is not None and not 1 <= after <= 1000:
        raise BadRequest("failing_after_attempts: 1 to 1000")
    if rate is not None and not 0 < rate <= 1:
        raise BadRequest("failing_error_rate: a share, more than 0 and at most 1")
    if window is not None and not 60 <= window <= 86400:
        raise BadRequest("failing_window_seconds: 60 to 86400")
    with db.connection() as conn:
        repo.put_endpoint_thresholds(
            conn, endpoint_id, endpoint["tenant_id"], after_attempts=after, error_rate=rate,
            window_seconds=window,
        )  # fmt: skip
        row = repo.endpoint_health_row(conn, endpoint_id)
    return {"endpoint_id": endpoint_id, **thresholds(row, settings.operational)}
