"""Endpoints: subscriber URLs of a tenant, with their signing secrets and health."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.ids import new_id
from hookline.repositories.api import Page, one_or_not_found
from hookline.secretbox import reveal, seal
from hookline.signing import PRIVATE_KEY_PREFIX, public_key
from hookline.sqlfiles import query


def create_endpoint(
    conn: Connection,
    *,
    tenant_id: str,
    url: str,
    secret: str,
    description: str = "",
    event_types: Sequence[str] = (),
    max_concurrency: int = 5,
    rate_limit_per_second: float | None = None,
    headers: dict[str, str] | None = None,
    retry_on_4xx: bool = False,
    content_filter: dict[str, Any] | None = None,
    input_transformer: dict[str, Any] | None = None,
    kind: str = "https",
    role_arn: str | None = None,
    destination: dict[str, Any] | None = None,
    ordering: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Insert an endpoint and its first signing secret (stored encrypted), in one
    transaction."""
    params = {
        "id": new_id("ep"),
        "tenant_id": tenant_id,
        "url": url,
        "description": description,
        "event_types": list(event_types),
        "max_concurrency": max_concurrency,
        "rate_limit_per_second": rate_limit_per_second,
        "headers": Jsonb(headers or {}),
        "retry_on_4xx": retry_on_4xx,
        "content_filter": _json_or_none(content_filter),
        "input_transformer": _json_or_none(input_transformer),
        "kind": kind,
        "role_arn": role_arn,
        "destination": Jsonb(destination or {}),
        "ordering": _json_or_none(ordering),
    }
    try:
        with conn.transaction():
            row = conn.execute(query("insert_endpoint"), params).fetchone()
            conn.execute(
                query("insert_endpoint_secret"),
                _secret_row(conn, str(params["id"]), secret),
            )
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"no tenant {tenant_id}") from err
    assert row is not None
    return dict(row)


def _secret_row(conn: Connection, endpoint_id: str, secret: str) -> dict[str, Any]:
    # An Ed25519 key keeps its public key beside it, for the API to show (decision 0067).
    public = public_key(secret) if secret.startswith(PRIVATE_KEY_PREFIX) else None
    return {"endpoint_id": endpoint_id, "secret": seal(conn, secret), "public_key": public}


def _json_or_none(value: dict[str, Any] | None) -> Jsonb | None:
    return None if value is None else Jsonb(value)


def get_endpoint(conn: Connection, endpoint_id: str) -> dict[str, Any]:
    """One endpoint (without secrets), or NotFound."""
    row = conn.execute(query("get_endpoint"), {"id": endpoint_id}).fetchone()
    if row is None:
        raise NotFound(f"no endpoint {endpoint_id}")
    return dict(row)


def list_endpoints(conn: Connection, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
    """Endpoints (without secrets), optionally of one tenant."""
    return [dict(r) for r in conn.execute(query("list_endpoints"), {"tenant_id": tenant_id})]


def set_endpoint_enabled(
    conn: Connection, endpoint_id: str, *, enabled: bool, reason: str | None = None
) -> dict[str, Any]:
    """Enable an endpoint (clearing its failure streak) or disable it with a reason."""
    row = conn.execute(
        query("set_endpoint_enabled"),
        {"id": endpoint_id, "enabled": enabled, "reason": None if enabled else reason},
    ).fetchone()
    if row is None:
        raise NotFound(f"no endpoint {endpoint_id}")
    return dict(row)


def disable_endpoint_if_enabled(
    conn: Connection, endpoint_id: str, reason: str
) -> dict[str, Any] | None:
    """Disable an enabled endpoint; None when it was already disabled (or is gone)."""
    row = conn.execute(
        query("disable_endpoint_if_enabled"), {"id": endpoint_id, "reason": reason}
    ).fetchone()
    return dict(row) if row else None


def rotate_secret(conn: Connection, endpoint_id: str, new_secret: str, overlap: timedelta) -> None:
    """Add a new current secret; the old ones keep signing until `overlap` has passed."""
    get_endpoint(conn, endpoint_id)
    with conn.transaction():
        conn.execute(
            query("expire_endpoint_secrets"), {"endpoint_id": endpoint_id, "overlap": overlap}
        )
        conn.execute(
            query("insert_endpoint_secret"),
            _secret_row(conn, endpoint_id, new_secret),
        )


def active_secrets(conn: Connection, endpoint_id: str) -> list[str]:
    """Secrets that sign right now (decrypted), newest first."""
    rows = conn.execute(query("active_endpoint_secrets"), {"endpoint_id": endpoint_id}).fetchall()
    return [reveal(conn, r["secret"]) for r in rows]


# -- the management API: scoped to the caller's tenant, deleted endpoints not found ------------
# `tenant` is the caller's scope: None for an operator, else its tenant id. Another tenant's
# endpoint, and a deleted one, is NotFound — the same answer as one that never existed.


def get_in_scope(conn: Connection, tenant: str | None, endpoint_id: str) -> dict[str, Any]:
    """One live endpoint in scope (without secrets), or NotFound."""
    return one_or_not_found(
        conn, "scoped_get_endpoint", {"id": endpoint_id, "tenant": tenant}, "endpoint"
    )


def lock_in_scope(conn: Connection, tenant: str | None, endpoint_id: str) -> dict[str, Any]:
    """A live endpoint in scope (id, tenant_id), locked until the transaction ends, so a
    concurrent delete waits or wins; NotFound otherwise."""
    return one_or_not_found(
        conn, "scoped_lock_endpoint", {"id": endpoint_id, "tenant": tenant}, "endpoint"
    )


def list_in_scope(
    conn: Connection,
    tenant: str | None,
    page: Page,
    *,
    tenant_id: str | None = None,
    enabled: bool | None = None,
) -> list[dict[str, Any]]:
    """Live endpoints in scope (without secrets), newest first."""
    params = {
        "tenant": tenant,
        "tenant_id": tenant_id,
        "enabled": enabled,
        "after": page.after,
        "limit": page.limit,
    }
    return [dict(r) for r in conn.execute(query("scoped_list_endpoints"), params)]


def update_in_scope(
    conn: Connection, tenant: str | None, endpoint_id: str, changes: dict[str, Any]
) -> None:
    """Change the given fields of a live endpoint in scope (None keeps a field)."""
    params: dict[str, Any] = {
        "id": endpoint_id,
        "tenant": tenant,
        "url": changes.get("url"),
        "description": changes.get("description"),
        "event_types": changes.get("event_types"),
        "max_concurrency": changes.get("max_concurrency"),
        "rate_limit_per_second": changes.get("rate_limit_per_second"),
        "clear_rate_limit": bool(changes.get("clear_rate_limit")),
        "headers": Jsonb(changes["headers"]) if changes.get("headers") is not None else None,
        "retry_on_4xx": changes.get("retry_on_4xx"),
        "content_filter": _json_or_none(changes.get("content_filter")),
        "clear_filter": bool(changes.get("clear_content_filter")),
        "input_transformer": _json_or_none(changes.get("input_transformer")),
        "clear_transform": bool(changes.get("clear_input_transformer")),
        "role_arn": changes.get("role_arn"),
        "destination": _json_or_none(changes.get("destination")),
        "ordering": _json_or_none(changes.get("ordering")),
        "clear_ordering": bool(changes.get("clear_ordering")),
    }
    one_or_not_found(conn, "scoped_update_endpoint", params, "endpoint")
    if params["clear_ordering"]:
        conn.execute(query("release_endpoint_held"), {"id": endpoint_id})


def set_enabled_in_scope(
    conn: Connection, tenant: str | None, endpoint_id: str, enabled: bool, reason: str | None
) -> None:
    """Enable (clearing the failure streak) or disable a live endpoint in scope."""
    params = {
        "id": endpoint_id,
        "tenant": tenant,
        "enabled": enabled,
        "reason": None if enabled else reason,
    }
    one_or_not_found(conn, "scoped_set_endpoint_enabled", params, "endpoint")


def delete_in_scope(conn: Connection, tenant: str | None, endpoint_id: str) -> dict[str, Any]:
    """Soft-delete a live endpoint in scope: disabled for good, its signing secrets wiped;
    returns it as it now stands."""
    return one_or_not_found(
        conn, "scoped_delete_endpoint", {"id": endpoint_id, "tenant": tenant}, "endpoint"
    )


def keep_public(conn: Connection, tenant: str | None, endpoint_id: str) -> None:
    """Mark the endpoint (in scope) as reaching public addresses only, for good."""
    conn.execute(query("keep_endpoint_public"), {"id": endpoint_id, "tenant": tenant})
