"""The rows behind portal links and sessions (docs/decisions/0061), and the tenant's other
credentials an erasure revokes."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hookline.db import Connection
from hookline.sqlfiles import query


def insert_link(
    conn: Connection, *, id: str, tenant_id: str, created_by: str, expires_at: datetime
) -> None:
    """Record a new portal link."""
    conn.execute(
        query("portal_insert_link"),
        {"id": id, "tenant_id": tenant_id, "created_by": created_by, "expires_at": expires_at},
    )


def link_is_open(conn: Connection, link_id: str, tenant_id: str) -> bool:
    """Whether the link is unused, unrevoked and unexpired."""
    params = {"id": link_id, "tenant_id": tenant_id}
    return conn.execute(query("portal_open_link"), params).fetchone() is not None


def use_link(conn: Connection, link_id: str, tenant_id: str) -> datetime | None:
    """Mark a link used; its expiry, or None when it was used, revoked or expired already."""
    row = conn.execute(query("portal_use_link"), {"id": link_id, "tenant_id": tenant_id}).fetchone()
    return None if row is None else row["expires_at"]


def insert_session(
    conn: Connection, *, id: str, tenant_id: str, link_id: str, expires_at: datetime
) -> None:
    """Record the session a link opened."""
    conn.execute(
        query("portal_insert_session"),
        {"id": id, "tenant_id": tenant_id, "link_id": link_id, "expires_at": expires_at},
    )


def session_is_live(conn: Connection, session_id: str, tenant_id: str) -> bool:
    """Whether the session exists for the tenant, unended and unexpired."""
    params = {"id": session_id, "tenant_id": tenant_id}
    return conn.execute(query("portal_live_session"), params).fetchone() is not None


def end_session(conn: Connection, session_id: str) -> None:
    """End a session (sign-out)."""
    conn.execute(query("portal_end_session"), {"id": session_id})


def list_links(
    conn: Connection, tenant_id: str, *, after: str | None, limit: int
) -> list[dict[str, Any]]:
    """A tenant's links, newest first, with how many live sessions each opened."""
    params = {"tenant_id": tenant_id, "after": after, "limit": limit}
    return [dict(r) for r in conn.execute(query("portal_list_links"), params).fetchall()]


def revoke_link(conn: Connection, tenant_id: str, link_id: str) -> dict[str, int]:
    """Revoke one link and end its session: counts of links and sessions (0 links: none)."""
    row = conn.execute(query("portal_revoke_link"), {"id": link_id, "tenant_id": tenant_id})
    found = row.fetchone()
    return {"links": int(found["links"]), "sessions": int(found["sessions"])} if found else {}


def revoke_tenant(conn: Connection, tenant_id: str) -> dict[str, int]:
    """Revoke every unused link and end every session of a tenant: the counts."""
    found = conn.execute(query("portal_revoke_tenant"), {"tenant_id": tenant_id}).fetchone()
    return {"links": int(found["links"]), "sessions": int(found["sessions"])} if found else {}


def delete_tenant_principals(conn: Connection, tenant_id: str) -> int:
    """Remove every API principal (keys, IAM roles) scoped to the tenant: how many."""
    return conn.execute(query("portal_delete_tenant_principals"), {"tenant_id": tenant_id}).rowcount
