"""The immutable event ledger and its outbox."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.ids import new_id
from hookline.sqlfiles import query


@dataclass(frozen=True)
class NewEvent:
    """An event about to enter the ledger."""

    tenant_id: str
    origin: str  # source id, or "publish"
    type: str
    dedupe_key: str
    payload: bytes
    source_id: str | None = None
    content_type: str = "application/json"
    headers: dict[str, str] | None = None
    # The receive span's W3C traceparent, kept on the outbox row for fan-out; None (NULL, no
    # bytes) unless tracing is on and the event was sampled (decision 0070).
    traceparent: str | None = None


@dataclass(frozen=True)
class Stored:
    """Where an event landed: its id, and whether it was already there."""

    id: str
    duplicate: bool


def store_event(conn: Connection, event: NewEvent) -> Stored:
    """Write the event and its outbox row atomically, or find the original of a duplicate."""
    params = {
        "id": new_id("evt"),
        "tenant_id": event.tenant_id,
        "source_id": event.source_id,
        "origin": event.origin,
        "type": event.type,
        "dedupe_key": event.dedupe_key,
        "payload": event.payload,
        "content_type": event.content_type,
        "headers": Jsonb(event.headers or {}),
        "traceparent": event.traceparent,
    }
    try:
        row = conn.execute(query("insert_event"), params).fetchone()
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"unknown tenant {event.tenant_id}") from err
    if row is not None:
        return Stored(id=_get(row, "id"), duplicate=False)
    # The conflicting row is committed (ON CONFLICT waited for it); this new statement sees it.
    original = conn.execute(query("find_event_id_by_dedupe_key"), params).fetchone()
    if original is None:  # pragma: no cover - only if the original was deleted meanwhile
        raise RuntimeError("duplicate event vanished")
    return Stored(id=_get(original, "id"), duplicate=True)


def get_event(conn: Connection, event_id: str) -> dict[str, Any]:
    """One event with its payload and fan-out time."""
    row = conn.execute(query("get_event"), {"id": event_id}).fetchone()
    if row is None:
        raise NotFound(f"no event {event_id}")
    return dict(row)


def list_events(
    conn: Connection,
    *,
    tenant_id: str | None = None,
    type: str | None = None,
    source_id: str | None = None,
    limit: int = 50,
) -> list[dict[str, Any]]:
    """The newest events first, optionally filtered."""
    params = {"tenant_id": tenant_id, "type": type, "source_id": source_id, "limit": limit}
    return [dict(r) for r in conn.execute(query("list_events"), params).fetchall()]


def _get(row: Any, key: str) -> str:
    # Works for dict rows (the pool) and tuple rows (a caller's own connection).
    return str(row[key] if isinstance(row, dict) else row[0])
