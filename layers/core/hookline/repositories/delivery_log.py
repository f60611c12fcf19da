"""The delivery log and a delivery as sent, with what names them (issue 26)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hookline.db import Connection
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories.tenant_walk import walked_tenant
from hookline.sqlfiles import query


def delivery_log(
    conn: Connection,
    tenant: str | None,
    *,
    tenant_id: str | None,
    endpoint_id: str | None,
    state: str | None,
    event_type: str | None,
    since: datetime | None,
    until: datetime | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Deliveries in scope, newest first, with event type, endpoint URL and tenant name."""
    params = {
        "tenant": tenant, "tenant_id": tenant_id, "endpoint_id": endpoint_id, "state": state,
        "event_type": event_type, "since": since, "until": until, "limit": limit,
    }  # fmt: skip
    walked = walked_tenant(tenant, tenant_id, endpoint_id=endpoint_id, state=state)
    if walked is not None:
        rows = conn.execute(
            query("delivery_log_by_tenant"), {**params, "tenant_id": walked}
        ).fetchall()
    else:
        rows = conn.execute(query("delivery_log"), params).fetchall()
    return [dict(r) for r in rows]


def delivery_as_sent(
    conn: Connection, tenant: str | None, delivery_id: str
) -> dict[str, Any] | None:
    """One delivery in scope with its event's bytes and its endpoint's sending settings."""
    row = conn.execute(query("delivery_as_sent"), {"id": delivery_id, "tenant": tenant}).fetchone()
    return None if row is None else dict(row)


def attempts(conn: Connection, delivery_id: str, limit: int) -> list[dict[str, Any]]:
    """A delivery's attempts, oldest first, with their response headers."""
    rows = conn.execute(
        query("delivery_attempts_shown"), {"id": delivery_id, "limit": limit}
    ).fetchall()
    return [dict(r) for r in rows]


def signing_secrets(conn: Connection, endpoint_id: str) -> list[str]:
    """The endpoint's active signing secrets, to recompute a signature (never shown)."""
    return endpoint_repo.active_secrets(conn, endpoint_id)
