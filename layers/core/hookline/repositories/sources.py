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
