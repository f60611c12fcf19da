"""Tenants and their tenant group."""

from __future__ import annotations

from typing import Any

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.ids import new_id
from hookline.sqlfiles import query


def create_tenant(conn: Connection, *, name: str, tenant_group: str) -> dict[str, Any]:
    """Insert a tenant and return it."""
    row = conn.execute(
        query("insert_tenant"), {"id": new_id("ten"), "name": name, "tenant_group": tenant_group}
    ).fetchone()
    assert row is not None
    return dict(row)


def get_tenant(conn: Connection, tenant_id: str) -> dict[str, Any]:
    """One tenant, or NotFound."""
    row = conn.execute(query("get_tenant"), {"id": tenant_id}).fetchone()
    if row is None:
        raise NotFound(f"no tenant {tenant_id}")
    return dict(row)


def list_tenants(conn: Connection, *, limit: int = 100) -> list[dict[str, Any]]:
    """Tenants in id order."""
    return [dict(r) for r in conn.execute(query("list_tenants"), {"limit": limit}).fetchall()]
