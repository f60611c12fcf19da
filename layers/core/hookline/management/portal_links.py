"""Portal links: a short-lived signed URL that opens the tenant portal for one tenant
(`hookline portal link`; the API route `POST /v1/tenants/{id}/portal-links` calls this too)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hookline.console.sessions import portal_link
from hookline.db import Database
from hookline.management.access import Caller
from hookline.management.service import audit
from hookline.repositories import api as repo
from hookline.settings import Settings


def create_portal_link(
    db: Database,
    settings: Settings,
    caller: Caller,
    tenant_id: str,
    *,
    base_url: str,
    ttl: timedelta,
) -> dict[str, Any]:
    """A link to the portal of a tenant in the caller's scope (NotFound otherwise), audited."""
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
        link = portal_link(settings, tenant_id, base_url=base_url, ttl=ttl)
        audit(
            conn, caller, "create_portal_link", "tenant", tenant_id,
            {"expires_at": link["expires_at"]},
        )  # fmt: skip
    return link
