"""The tenant portal's management: links (a short-lived signed URL that opens the portal for
one tenant: `hookline portal link`, and the API route `POST /v1/tenants/{id}/portal-links`)
and each tenant's portal settings (title, logo, accent colour, which sites may frame it)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management.access import Caller
from hookline.management.audit import audit
from hookline.repositories import api as repo
from hookline.repositories import console as console_repo
from hookline.sessions import portal_link
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


DEFAULTS: dict[str, Any] = {"title": None, "logo_url": None, "accent": None, "frame_ancestors": []}
_ACCENT = re.compile(r"^#[0-9a-f]{6}$")
_ORIGIN = re.compile(r"^https://[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?(:[0-9]{1,5})?$")
_LOGO = re.compile(r"^https://[^\s\"'<>]{1,490}$")
MAX_FRAME_ANCESTORS = 5


def get_portal_settings(db: Database, caller: Caller, tenant_id: str) -> dict[str, Any]:
    """A tenant's portal settings in the caller's scope (defaults when never set)."""
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
        row = console_repo.get_portal_settings(conn, tenant_id)
    found = {**DEFAULTS, **({k: v for k, v in row.items() if k != "tenant_id"} if row else {})}
    found["frame_ancestors"] = list(found["frame_ancestors"] or [])
    return found


def set_portal_settings(
    db: Database, caller: Caller, tenant_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Replace a tenant's portal settings (operators only), checked and audited.

    The accent colour becomes CSS and the frame ancestors a CSP header: each is held to a
    strict shape (`#rrggbb`; `https://host[:port]` origins) so neither can carry anything else.
    """
    caller.require_operator("change a tenant's portal settings")
    title = (body.get("title") or "").strip() or None
    if title is not None and len(title) > 100:
        raise BadRequest("title is at most 100 characters")
    logo = (body.get("logo_url") or "").strip() or None
    if logo is not None and not _LOGO.match(logo):
        raise BadRequest("logo_url must be an https URL")
    accent = (body.get("accent") or "").strip().lower() or None
    if accent is not None and not _ACCENT.match(accent):
        raise BadRequest("accent must be a colour like #1f5fbf")
    ancestors = [a.strip().lower().rstrip("/") for a in body.get("frame_ancestors") or []]
    ancestors = [a for a in ancestors if a]
    if len(ancestors) > MAX_FRAME_ANCESTORS:
        raise BadRequest(f"at most {MAX_FRAME_ANCESTORS} frame ancestors")
    for origin in ancestors:
        if not _ORIGIN.match(origin):
            raise BadRequest(
                f"frame ancestor {origin!r} must be an origin like https://app.example"
            )
    values = {"title": title, "logo_url": logo, "accent": accent, "frame_ancestors": ancestors}
    with db.connection() as conn, conn.transaction():
        repo.get_tenant(conn, caller.tenant, tenant_id)
        console_repo.put_portal_settings(conn, tenant_id, values)
        audit(conn, caller, "set_portal_settings", "tenant", tenant_id, values)
    return values
