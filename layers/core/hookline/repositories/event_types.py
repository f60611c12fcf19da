"""The event-type catalogue's queries. `tenant` is the caller's scope (None: an operator);
a type of another tenant is not found, exactly like one that does not exist."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import Conflict, NotFound
from hookline.sqlfiles import query

_NOT_FOUND = "no event type {}"


def _row(row: Any, event_type_id: str) -> dict[str, Any]:
    if row is None:
        raise NotFound(_NOT_FOUND.format(event_type_id))
    return dict(row)


def insert_event_type(
    conn: Connection,
    *,
    id: str,
    tenant_id: str,
    name: str,
    description: str,
    schema: dict[str, Any] | bool | None,
) -> dict[str, Any]:
    """A new live type; Conflict when the tenant already has a live type of that name."""
    row = conn.execute(
        query("insert_event_type"),
        {
            "id": id,
            "tenant_id": tenant_id,
            "name": name,
            "description": description,
            "schema": None if schema is None else Jsonb(schema),
        },
    ).fetchone()
    if row is None:
        raise Conflict(f"event type {name} already exists for this tenant; update it instead")
    return dict(row)


def get_event_type(conn: Connection, tenant: str | None, event_type_id: str) -> dict[str, Any]:
    """One type in scope (archived ones too), or NotFound."""
    row = conn.execute(query("get_event_type"), {"id": event_type_id, "tenant": tenant}).fetchone()
    return _row(row, event_type_id)


def list_event_types(
    conn: Connection,
    tenant: str | None,
    *,
    tenant_id: str | None,
    name: str | None,
    archived: bool,
    after: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Types in scope, newest first; archived ones only when asked."""
    params = {
        "tenant": tenant,
        "tenant_id": tenant_id,
        "name": name,
        "archived": archived,
        "after": after,
        "limit": limit,
    }
    return [dict(r) for r in conn.execute(query("list_event_types"), params).fetchall()]


def update_event_type(
    conn: Connection,
    tenant: str | None,
    event_type_id: str,
    *,
    description: str | None,
    schema: dict[str, Any] | bool | None,
    clear_schema: bool,
) -> dict[str, Any]:
    """Change a live type's description or schema; NotFound, or Conflict when archived."""
    row = conn.execute(
        query("update_event_type"),
        {
            "id": event_type_id,
            "tenant": tenant,
            "description": description,
            "schema": None if schema is None else Jsonb(schema),
            "clear_schema": clear_schema,
        },
    ).fetchone()
    if row is None:
        get_event_type(conn, tenant, event_type_id)  # NotFound when not in scope
        raise Conflict(f"event type {event_type_id} is archived; create a new one instead")
    return dict(row)


def archive_event_type(conn: Connection, tenant: str | None, event_type_id: str) -> dict[str, Any]:
    """Retire a type (it stops validating); archiving an archived type changes nothing."""
    row = conn.execute(
        query("archive_event_type"), {"id": event_type_id, "tenant": tenant}
    ).fetchone()
    if row is None:
        return get_event_type(conn, tenant, event_type_id)
    return dict(row)


def schema_version(conn: Connection, tenant_id: str, name: str) -> tuple[str, datetime] | None:
    """(id, updated_at) of the tenant's live type `name` when it has a schema, else None."""
    row = conn.execute(
        query("event_type_schema_version"), {"tenant_id": tenant_id, "name": name}
    ).fetchone()
    return None if row is None else (str(row["id"]), row["updated_at"])


def schema_of(conn: Connection, event_type_id: str) -> Any:
    """The stored schema of a type (None if it has none)."""
    row = conn.execute(query("event_type_schema"), {"id": event_type_id}).fetchone()
    return None if row is None else row["schema"]
