"""The event-type catalogue through the API: create, read, list, update and archive a
tenant's types, each in the caller's scope (docs/decisions/0015). Changes are audited."""

from __future__ import annotations

from typing import Any

from hookline.catalogue_limits import DEFAULT_LIMITS, CatalogueLimits
from hookline.db import Database
from hookline.ids import new_id
from hookline.management.access import Caller
from hookline.management.audit import audit
from hookline.management.paging import page_of, paged
from hookline.repositories import api as api_repo
from hookline.repositories import event_types as repo


def _out(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "archived": row["archived_at"] is not None}


def create_event_type(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    name: str,
    description: str,
    schema: dict[str, Any] | None,
    limits: CatalogueLimits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """A new type in the caller's tenant (an operator names the tenant); its schema, if any,
    must be a valid JSON Schema within `limits`. Conflict when a live type already has the
    name."""
    from hookline.event_catalogue import check_schema, validate_name  # jsonschema: on use

    tenant = caller.tenant_for(tenant_id)
    validate_name(name)
    if schema is not None:
        check_schema(schema, limits)
    with db.connection() as conn, conn.transaction():
        api_repo.get_tenant(conn, caller.tenant, tenant)
        row = repo.insert_event_type(
            conn,
            id=new_id("ety"),
            tenant_id=tenant,
            name=name,
            description=description,
            schema=schema,
        )
        audit(conn, caller, "create", "event_type", row["id"], {"name": name})
    return _out(row)


def get_event_type(db: Database, caller: Caller, event_type_id: str) -> dict[str, Any]:
    """One type in scope (archived ones too)."""
    with db.connection() as conn:
        return _out(repo.get_event_type(conn, caller.tenant, event_type_id))


def list_event_types(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    name: str | None,
    archived: bool,
    cursor: str | None,
    limit: int,
) -> dict[str, Any]:
    """Types in scope, newest first; archived ones only with `archived`."""
    page = page_of(cursor, limit)
    with db.connection() as conn:
        rows = repo.list_event_types(
            conn,
            caller.tenant,
            tenant_id=tenant_id,
            name=name,
            archived=archived,
            after=page.after,
            limit=page.limit,
        )
    return paged([_out(r) for r in rows], limit)


def update_event_type(
    db: Database,
    caller: Caller,
    event_type_id: str,
    changes: dict[str, Any],
    limits: CatalogueLimits = DEFAULT_LIMITS,
) -> dict[str, Any]:
    """Change a live type's description and/or schema (`schema: None` removes it); a new
    schema must be within `limits`."""
    from hookline.event_catalogue import check_schema  # jsonschema: on use

    clear_schema = "schema" in changes and changes["schema"] is None
    schema = changes.get("schema")
    if schema is not None:
        check_schema(schema, limits)
    with db.connection() as conn, conn.transaction():
        row = repo.update_event_type(
            conn,
            caller.tenant,
            event_type_id,
            description=changes.get("description"),
            schema=schema,
            clear_schema=clear_schema,
        )
        audited = {
            "description": "description" in changes,
            "schema": "removed" if clear_schema else ("replaced" if schema is not None else None),
        }
        audit(conn, caller, "update", "event_type", event_type_id, audited)
    return _out(row)


def archive_event_type(db: Database, caller: Caller, event_type_id: str) -> dict[str, Any]:
    """Retire a type: it stops validating payloads and leaves the lists; its name is free
    for a new definition. Archiving twice changes nothing."""
    with db.connection() as conn, conn.transaction():
        before = repo.get_event_type(conn, caller.tenant, event_type_id)
        row = repo.archive_event_type(conn, caller.tenant, event_type_id)
        if before["archived_at"] is None:
            audit(conn, caller, "archive", "event_type", event_type_id, {"name": row["name"]})
    return _out(row)
