"""Inbound sources: a provider configuration of a tenant."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.ids import new_id
from hookline.repositories.api import Page, one_or_not_found
from hookline.secretbox import reveal, seal
from hookline.sqlfiles import query


@dataclass(frozen=True)
class Source:
    """What the receiver needs to verify a request of one source."""

    id: str
    tenant_id: str
    name: str
    scheme: str
    secrets: tuple[str, ...]
    tolerance_seconds: int
    enabled: bool
    options: dict[str, Any] = field(default_factory=dict)


def create_source(
    conn: Connection,
    *,
    tenant_id: str,
    name: str,
    scheme: str,
    secrets: Sequence[str],
    tolerance_seconds: int,
    options: dict[str, Any],
) -> dict[str, Any]:
    """Insert a source and return it (without its secrets, which are stored encrypted)."""
    params = {
        "id": new_id("src"),
        "tenant_id": tenant_id,
        "name": name,
        "scheme": scheme,
        "secrets": [seal(conn, s) for s in secrets],
        "tolerance_seconds": tolerance_seconds,
        "options": Jsonb(options),
    }
    try:
        row = conn.execute(query("insert_source"), params).fetchone()
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"no tenant {tenant_id}") from err
    assert row is not None
    return dict(row)


def get_source(conn: Connection, source_id: str) -> Source:
    """The source with its secrets (decrypted), or NotFound."""
    row = conn.execute(query("get_source"), {"id": source_id}).fetchone()
    if row is None:
        raise NotFound("unknown source")
    return _source(conn, row)


def _source(conn: Connection, row: Any) -> Source:
    return Source(
        id=row["id"],
        tenant_id=row["tenant_id"],
        name=row["name"],
        scheme=row["scheme"],
        secrets=tuple(reveal(conn, s) for s in row["secrets"]),
        tolerance_seconds=row["tolerance_seconds"],
        enabled=row["enabled"],
        options=dict(row["options"]),
    )


def list_sources(conn: Connection, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
    """Sources (without secrets), optionally of one tenant."""
    return [dict(r) for r in conn.execute(query("list_sources"), {"tenant_id": tenant_id})]


def set_source_enabled(conn: Connection, source_id: str, enabled: bool) -> None:
    """Enable or disable a source; NotFound if it does not exist."""
    if (
        conn.execute(query("set_source_enabled"), {"id": source_id, "enabled": enabled}).fetchone()
        is None
    ):
        raise NotFound(f"no source {source_id}")


# -- the management API: scoped to the caller's tenant, deleted sources not found --------------
# `tenant` is the caller's scope: None for an operator, else its tenant id. Another tenant's
# source, and a deleted one, is NotFound — the same answer as one that never existed.


def get_in_scope(conn: Connection, tenant: str | None, source_id: str) -> dict[str, Any]:
    """One live source in scope (without its secrets), or NotFound."""
    return one_or_not_found(
        conn, "scoped_get_source", {"id": source_id, "tenant": tenant}, "source"
    )


def list_in_scope(
    conn: Connection, tenant: str | None, page: Page, *, tenant_id: str | None = None
) -> list[dict[str, Any]]:
    """Live sources in scope (without secrets), newest first."""
    params = {"tenant": tenant, "tenant_id": tenant_id, "after": page.after, "limit": page.limit}
    return [dict(r) for r in conn.execute(query("scoped_list_sources"), params)]


def set_enabled_in_scope(
    conn: Connection, tenant: str | None, source_id: str, enabled: bool
) -> None:
    """Enable or disable a live source in scope; NotFound otherwise."""
    params = {"id": source_id, "tenant": tenant, "enabled": enabled}
    one_or_not_found(conn, "scoped_set_source_enabled", params, "source")


def lock_in_scope(conn: Connection, tenant: str | None, source_id: str) -> Source:
    """A live source in scope with its secrets (decrypted), locked until the transaction
    ends; NotFound otherwise."""
    row = one_or_not_found(
        conn, "scoped_lock_source", {"id": source_id, "tenant": tenant}, "source"
    )
    return _source(conn, row)


def set_secrets_in_scope(
    conn: Connection, tenant: str | None, source_id: str, secrets: Sequence[str]
) -> None:
    """Replace a live source's secrets (sealed here)."""
    sealed = [seal(conn, s) for s in secrets]
    one_or_not_found(
        conn,
        "scoped_set_source_secrets",
        {"id": source_id, "tenant": tenant, "secrets": sealed},
        "source",
    )


def update_in_scope(
    conn: Connection, tenant: str | None, source_id: str, changes: dict[str, Any]
) -> None:
    """Change a live source's name, tolerance or options (absent: kept); NotFound otherwise."""
    options = changes.get("options")
    params = {
        "id": source_id,
        "tenant": tenant,
        "name": changes.get("name"),
        "tolerance_seconds": changes.get("tolerance_seconds"),
        "options": Jsonb(options) if options is not None else None,
    }
    one_or_not_found(conn, "scoped_update_source", params, "source")


def delete_in_scope(conn: Connection, tenant: str | None, source_id: str) -> dict[str, Any]:
    """Soft-delete a live source in scope: disabled for good, secrets wiped; returns it."""
    return one_or_not_found(
        conn, "scoped_delete_source", {"id": source_id, "tenant": tenant}, "source"
    )
