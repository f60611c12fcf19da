"""The management API's queries: tenant-scoped reads and lists, endpoint updates, the test
event, API principals and idempotency keys.

`tenant` is the caller's scope: None for an operator, else the caller's tenant id. A row of
another tenant is not found — the same answer as a row that does not exist.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.records import frozen
from hookline.repositories.tenant_walk import walked_tenant
from hookline.sqlfiles import query


@frozen
class Page:
    """Where a page starts (after this id) and how many rows it holds."""

    after: str | None = None
    limit: int = 50


def one_or_not_found(
    conn: Connection, name: str, params: dict[str, Any], what: str
) -> dict[str, Any]:
    """The one row query `name` returns, or NotFound("no <what> <id>"): how the API's scoped
    reads answer an id that is unknown, deleted or another tenant's alike."""
    row = conn.execute(query(name), params).fetchone()
    if row is None:
        raise NotFound(f"no {what} {params.get('id')}")
    return dict(row)


def _many(conn: Connection, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    return [dict(r) for r in conn.execute(query(name), params).fetchall()]


# -- principals ---------------------------------------------------------------------------


def find_principal_scope(conn: Connection, principals: Sequence[str]) -> str | None:
    """The scope of the first known principal among `principals` (the exact one first)."""
    if not principals:
        return None
    row = conn.execute(
        query("find_api_principal"), {"principals": list(principals), "first": principals[0]}
    ).fetchone()
    return str(row["scope"]) if row else None


def upsert_principal(
    conn: Connection, principal: str, scope: str, description: str = ""
) -> dict[str, Any]:
    """Map a principal to a scope (a tenant id, or `*`)."""
    row = conn.execute(
        query("upsert_api_principal"),
        {"principal": principal, "scope": scope, "description": description},
    ).fetchone()
    assert row is not None
    return dict(row)


def list_principals(conn: Connection) -> list[dict[str, Any]]:
    """Every API principal and its scope."""
    return _many(conn, "list_api_principals", {})


def delete_principal(conn: Connection, principal: str) -> None:
    """Forget a principal; NotFound if unknown."""
    if conn.execute(query("delete_api_principal"), {"principal": principal}).fetchone() is None:
        raise NotFound(f"no principal {principal}")


# -- idempotency ----------------------------------------------------------------------------


def reserve_idempotency_key(
    conn: Connection, scope: str, key: str, request_hash: str, ttl: timedelta
) -> bool:
    """Claim a key for a request being served now; False if it is known and younger than
    `ttl` (an older one is claimed afresh)."""
    row = conn.execute(
        query("reserve_idempotency_key"),
        {"scope": scope, "key": key, "request_hash": request_hash, "ttl": ttl},
    ).fetchone()
    return row is not None


def purge_idempotency_keys(conn: Connection, ttl: timedelta, batch: int) -> int:
    """Forget up to `batch` answers older than `ttl`; how many went."""
    return conn.execute(query("purge_idempotency_keys"), {"ttl": ttl, "batch": batch}).rowcount


def get_idempotency_key(conn: Connection, scope: str, key: str) -> dict[str, Any] | None:
    """The request hash and stored answer (status None while in progress) of a key."""
    row = conn.execute(query("get_idempotency_key"), {"scope": scope, "key": key}).fetchone()
    return dict(row) if row else None


def complete_idempotency_key(
    conn: Connection, scope: str, key: str, status: int, response: Any
) -> None:
    """Store the answer of the request that claimed the key."""
    conn.execute(
        query("complete_idempotency_key"),
        {"scope": scope, "key": key, "status": status, "response": Jsonb(response)},
    )


def release_idempotency_key(conn: Connection, scope: str, key: str) -> None:
    """The request failed: forget the claim, so a retry is served afresh."""
    conn.execute(query("release_idempotency_key"), {"scope": scope, "key": key})


# -- tenants, sources, endpoints ------------------------------------------------------------


def get_tenant(conn: Connection, tenant: str | None, tenant_id: str) -> dict[str, Any]:
    """One tenant in scope, or NotFound."""
    return one_or_not_found(conn, "api_get_tenant", {"id": tenant_id, "tenant": tenant}, "tenant")


def list_tenants(conn: Connection, tenant: str | None, page: Page) -> list[dict[str, Any]]:
    """Tenants in scope, newest first."""
    return _many(
        conn, "api_list_tenants", {"tenant": tenant, "after": page.after, "limit": page.limit}
    )


def previous_secrets_expire_at(conn: Connection, endpoint_id: str) -> datetime | None:
    """When the last of an endpoint's rotated-out secrets stops signing (None: none left)."""
    row = conn.execute(query("api_endpoint_secret_expiry"), {"id": endpoint_id}).fetchone()
    return row["previous_expire_at"] if row else None


def insert_test_event(
    conn: Connection,
    *,
    event_id: str,
    tenant_id: str,
    endpoint_id: str,
    type: str,
    payload: bytes,
    deadline: timedelta,
) -> str:
    """A ledger event already fanned out, with one due delivery to one endpoint; the
    delivery's id, made from the pair as the fan-out makes it (decision 0040)."""
    row = conn.execute(
        query("api_insert_test_event"),
        {
            "event_id": event_id,
            "tenant_id": tenant_id,
            "endpoint_id": endpoint_id,
            "type": type,
            "payload": payload,
            "deadline": deadline,
        },
    ).fetchone()
    assert row is not None  # the endpoint was locked in scope, so its tenant exists
    return str(row["id"])


# -- events, deliveries, attempts, status ---------------------------------------------------


def get_event(conn: Connection, tenant: str | None, event_id: str) -> dict[str, Any]:
    """One event in scope with its payload, or NotFound."""
    return one_or_not_found(conn, "api_get_event", {"id": event_id, "tenant": tenant}, "event")


def list_events(
    conn: Connection, tenant: str | None, page: Page, filters: dict[str, Any]
) -> list[dict[str, Any]]:
    """Events in scope, newest first; filters: tenant_id, type, source_id, since, until."""
    params = {
        "tenant": tenant,
        "after": page.after,
        "limit": page.limit,
        **{k: filters.get(k) for k in ("tenant_id", "type", "source_id", "since", "until")},
    }
    return _many(conn, "api_list_events", params)


def get_delivery(conn: Connection, tenant: str | None, delivery_id: str) -> dict[str, Any]:
    """One delivery in scope, or NotFound."""
    return one_or_not_found(
        conn, "api_get_delivery", {"id": delivery_id, "tenant": tenant}, "delivery"
    )


def list_deliveries(
    conn: Connection, tenant: str | None, page: Page, filters: dict[str, Any]
) -> list[dict[str, Any]]:
    """Deliveries in scope, newest first; filters: tenant_id, state, endpoint_id, event_id,
    since, until (creation time)."""
    names = ("tenant_id", "state", "endpoint_id", "event_id", "since", "until")
    params = {
        "tenant": tenant,
        "after": page.after,
        "limit": page.limit,
        **{k: filters.get(k) for k in names},
    }
    walked = walked_tenant(
        tenant,
        filters.get("tenant_id"),
        endpoint_id=filters.get("endpoint_id"),
        event_id=filters.get("event_id"),
        state=filters.get("state"),
    )
    if walked is not None:
        return _many(conn, "api_list_tenant_deliveries", {**params, "tenant_id": walked})
    return _many(conn, "api_list_deliveries", params)


def list_attempts(
    conn: Connection, tenant: str | None, delivery_id: str, after: int | None, limit: int
) -> list[dict[str, Any]]:
    """Attempts of a delivery in scope, oldest first."""
    params = {"delivery_id": delivery_id, "tenant": tenant, "after": after, "limit": limit}
    return _many(conn, "api_list_attempts", params)


def status_summary(conn: Connection, tenant: str | None) -> dict[str, Any]:
    """Deliveries per state, events of the last day, the outbox and endpoint counts."""
    by_state = {
        r["state"]: int(r["n"])
        for r in conn.execute(query("api_status_deliveries"), {"tenant": tenant})
    }
    row = conn.execute(query("api_status_summary"), {"tenant": tenant}).fetchone()
    assert row is not None
    return {"deliveries": by_state, **dict(row)}
