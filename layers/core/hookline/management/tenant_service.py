"""Tenants through the management API: create (operators only), read and list, each in the
caller's scope (a tenant caller sees itself; another tenant is NotFound)."""

from __future__ import annotations

from typing import Any

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management.access import Caller
from hookline.management.inputs import check_group
from hookline.management.paging import page_of, paged
from hookline.repositories import api as repo
from hookline.repositories import tenants as tenant_repo


def _tenant_out(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "group": row["tenant_group"],
        "created_at": row["created_at"],
        "external_id": row.get("external_id"),
    }


def create_tenant(
    db: Database, config: HooklineConfig, caller: Caller, *, name: str, group: str | None
) -> dict[str, Any]:
    """A new tenant (operators only)."""
    caller.require_operator("create tenants")
    group = check_group(config, group)
    if not name.strip():
        raise BadRequest("a tenant needs a name")
    with db.connection() as conn:
        row = tenant_repo.create_tenant(conn, name=name.strip(), tenant_group=group)
    return get_tenant(db, caller, row["id"])


def get_tenant(db: Database, caller: Caller, tenant_id: str) -> dict[str, Any]:
    """One tenant in scope."""
    with db.connection() as conn:
        return _tenant_out(repo.get_tenant(conn, caller.tenant, tenant_id))


def list_tenants(db: Database, caller: Caller, *, cursor: str | None, limit: int) -> dict[str, Any]:
    """Tenants in scope (a tenant caller sees itself)."""
    with db.connection() as conn:
        rows = repo.list_tenants(conn, caller.tenant, page_of(cursor, limit))
    return paged([_tenant_out(r) for r in rows], limit)
