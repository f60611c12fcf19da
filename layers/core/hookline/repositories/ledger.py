"""The immutable event ledger and its outbox."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.ids import new_id
from hookline.sqlfiles import query

if TYPE_CHECKING:
    from hookline.repositories.deliveries import Enqueued


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


@dataclass(frozen=True)
class Received:
    """An event stored by `accept_event`: where it landed and, when it was fanned out in the
    same statement, its deliveries (queued with a lease: to be sent once committed)."""

    stored: Stored
    fanned_out: bool = False
    to_send: list[Enqueued] = field(default_factory=list)


def store_event(conn: Connection, event: NewEvent) -> Stored:
    """Write the event and its outbox row atomically, or find the original of a duplicate."""
    params = _event_params(event)
    try:
        row = conn.execute(query("insert_event"), params).fetchone()
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"unknown tenant {event.tenant_id}") from err
    if row is not None:
        return Stored(id=_get(row, "id"), duplicate=False)
    return Stored(id=_original(conn, params), duplicate=True)


def accept_event(
    conn: Connection, event: NewEvent, *, deadline: timedelta, lease: timedelta
) -> Received:
    """As `store_event`, and fan the event out in the same statement when its tenant has no
    content-filtered or ordered endpoint (decision 0076): its deliveries are created queued
    with `lease` and returned, for the caller to send after the commit."""
    from hookline.repositories.deliveries import Enqueued  # only a fanned-out event's path

    params = {**_event_params(event), "deadline": deadline, "lease": lease}
    try:
        rows = conn.execute(query("accept_event"), params).fetchall()
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"unknown tenant {event.tenant_id}") from err
    if not rows:
        return Received(Stored(id=_original(conn, params), duplicate=True))
    head = rows[0]
    to_send = [
        Enqueued(r["id"], r["endpoint_id"], r["tenant_group"], r["enqueue_seq"]) for r in rows[1:]
    ]
    return Received(Stored(head["event_id"], False), bool(head["fanned_out"]), to_send)


def _original(conn: Connection, params: dict[str, Any]) -> str:
    """The event id a duplicate dedupe key belongs to."""
    # The conflicting row is committed (ON CONFLICT waited for it); this new statement sees it.
    original = conn.execute(query("find_event_id_by_dedupe_key"), params).fetchone()
    if original is None:  # pragma: no cover - only if the original was deleted meanwhile
        raise RuntimeError("duplicate event vanished")
    return _get(original, "id")


def _event_params(event: NewEvent) -> dict[str, Any]:
    return {
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
