"""The tenant portal's management: links (a short-lived signed URL that opens the portal for
one tenant: `hookline portal link`, and the API route `POST /v1/tenants/{id}/portal-links`),
the sessions they open, and each tenant's portal settings (title, logo, accent colour, which
sites may frame it).

A link opens one session, once (decision 0061): the portal's login page asks to confirm, and
the confirming POST marks the link used and records the session it opens. Links and sessions
are rows, so a link can be revoked (its session ends too), a session signed out, and an
erasure revokes them all. A link points at the deployment's own address or one the operator
listed (`HOOKLINE_PORTAL_BASE_URLS`), never anywhere a caller chooses.
"""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest, NotFound, SessionInvalid
from hookline.ids import new_id
from hookline.management.access import Caller
from hookline.management.audit import audit
from hookline.management.paging import page_of, paged
from hookline.repositories import api as repo
from hookline.repositories import console as console_repo
from hookline.repositories import portal as portal_repo
from hookline.sessions import (
    LINK,
    SESSION,
    TenantSession,
    link_expiry,
    portal_link,
    session_key,
    sign,
    verify,
)
from hookline.settings import Settings


def link_base_url(settings: Settings, own_url: str, requested: str | None) -> str:
    """Where a link points: the deployment's own address (`own_url`, as the caller reached
    it), or one the operator listed; BadRequest (field `base_url`) for anything else."""
    own = own_url.rstrip("/")
    if requested is None:
        return own
    wanted = requested.strip().rstrip("/")
    allowed = {own, *settings.portal_base_urls}
    if wanted not in allowed:
        raise BadRequest(
            f"base_url: {wanted!r} is neither this deployment's address ({own}) nor one of "
            "the portal addresses the operator lists (HOOKLINE_PORTAL_BASE_URLS)"
        )
    return wanted


def create_portal_link(
    db: Database,
    settings: Settings,
    caller: Caller,
    tenant_id: str,
    *,
    own_url: str,
    ttl: timedelta,
    base_url: str | None = None,
) -> dict[str, Any]:
    """A single-use link to the portal of a tenant in the caller's scope (NotFound
    otherwise), recorded and audited: its id (to revoke it), URL and expiry."""
    base = link_base_url(settings, own_url, base_url)
    expires_at = link_expiry(ttl)
    link_id = new_id("pl")
    with db.connection() as conn, conn.transaction():
        repo.get_tenant(conn, caller.tenant, tenant_id)
        portal_repo.insert_link(
            conn, id=link_id, tenant_id=tenant_id, created_by=caller.principal,
            expires_at=expires_at,
        )  # fmt: skip
        link = portal_link(settings, tenant_id, link_id, base_url=base, expires_at=expires_at)
        audit(
            conn, caller, "create_portal_link", "tenant", tenant_id,
            {"link_id": link_id, "expires_at": link["expires_at"]},
        )  # fmt: skip
    return link


def list_portal_links(
    db: Database, caller: Caller, tenant_id: str, *, cursor: str | None, limit: int
) -> dict[str, Any]:
    """A tenant's portal links, newest first (never their tokens)."""
    page = page_of(cursor, limit)
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
        rows = portal_repo.list_links(conn, tenant_id, after=page.after, limit=page.limit)
    return paged(rows, limit)


def revoke_portal_link(
    db: Database, caller: Caller, tenant_id: str, link_id: str
) -> dict[str, Any]:
    """Revoke one link (unusable from now) and end the session it opened, audited."""
    with db.connection() as conn, conn.transaction():
        repo.get_tenant(conn, caller.tenant, tenant_id)
        counts = portal_repo.revoke_link(conn, tenant_id, link_id)
        if not counts.get("links"):
            raise NotFound(f"no portal link {link_id}")
        audit(conn, caller, "revoke_portal_link", "tenant", tenant_id, {"link_id": link_id})
    return {"id": link_id, "revoked": True, "sessions_ended": counts["sessions"]}


def revoke_portal_access(db: Database, caller: Caller, tenant_id: str) -> dict[str, Any]:
    """Revoke every unused link of a tenant and end every portal session of it, audited."""
    with db.connection() as conn, conn.transaction():
        repo.get_tenant(conn, caller.tenant, tenant_id)
        counts = portal_repo.revoke_tenant(conn, tenant_id)
        audit(conn, caller, "revoke_portal_access", "tenant", tenant_id, counts)
    return {"tenant_id": tenant_id, "links_revoked": counts["links"],
            "sessions_ended": counts["sessions"]}  # fmt: skip


def link_to_confirm(db: Database, settings: Settings, token: str) -> TenantSession:
    """The tenant a link opens (checked, not used: the login page asks to confirm first)."""
    link = verify(session_key(settings), LINK, token)
    with db.connection() as conn:
        if not portal_repo.link_is_open(conn, link.nonce, link.tenant_id):
            raise SessionInvalid("this link has been used or revoked: ask for a new one")
    return link


def open_portal_session(db: Database, settings: Settings, token: str) -> tuple[str, TenantSession]:
    """Use a link, once: the session token it opens (the portal's cookie) and its session.
    SessionInvalid when the link is forged, expired, used already or revoked."""
    key = session_key(settings)
    link = verify(key, LINK, token)
    session_id = new_id("pss")
    with db.connection() as conn, conn.transaction():
        expires_at = portal_repo.use_link(conn, link.nonce, link.tenant_id)
        if expires_at is None:
            raise SessionInvalid("this link has been used or revoked: ask for a new one")
        portal_repo.insert_session(
            conn, id=session_id, tenant_id=link.tenant_id, link_id=link.nonce,
            expires_at=expires_at,
        )  # fmt: skip
    opened = TenantSession(link.tenant_id, link.expires_at, session_id)
    return sign(key, SESSION, link.tenant_id, link.expires_at, nonce=session_id), opened


def portal_session(db: Database, settings: Settings, value: str) -> TenantSession:
    """The live session a portal cookie carries; SessionInvalid when it is forged, expired,
    signed out or revoked."""
    found = verify(session_key(settings), SESSION, value)
    with db.connection() as conn:
        live = portal_repo.session_is_live(conn, found.nonce, found.tenant_id)
    if not live:
        raise SessionInvalid("this portal session has ended: open a new portal link")
    return found


def end_portal_session(db: Database, found: TenantSession) -> None:
    """Sign out: the session's cookie opens nothing from now."""
    with db.connection() as conn:
        portal_repo.end_session(conn, found.nonce)


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
