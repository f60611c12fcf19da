"""The immutable event ledger and its outbox."""

from __future__ import annotations

import json
import re
from dataclasses import field
from datetime import timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.pq import ExecStatus, TransactionStatus
from psycopg.rows import tuple_row
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.ids import new_id
from hookline.records import frozen
from hookline.sqlfiles import query

if TYPE_CHECKING:
    from hookline.repositories.deliveries import Enqueued


@frozen
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


@frozen
class Stored:
    """Where an event landed: its id, and whether it was already there."""

    id: str
    duplicate: bool


@frozen
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
        rows = _accept_rows(conn, params)
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"unknown tenant {event.tenant_id}") from err
    if not rows:
        return Received(Stored(id=_original(conn, params), duplicate=True))
    # (event_id, fanned_out, id, endpoint_id, tenant_group, enqueue_seq): a head row, then
    # one row per delivery.
    head = rows[0]
    to_send = [Enqueued(str(r[2]), str(r[3]), str(r[4]), int(r[5] or 0)) for r in rows[1:]]
    return Received(Stored(str(head[0]), False), bool(head[1]), to_send)


def _accept_rows(conn: Connection, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The rows of `accept_event`. On a UTF-8 autocommit connection outside a transaction
    (the receiver's and the API's pooled ones) the statement goes to libpq as is, unnamed as
    psycopg sends it: psycopg's cursor layer (a cursor and its adaptation state per
    statement, the query's conversion, dict rows, its generators) cost the receiver more
    Python than the rest of the round trip, for one statement of known parameters and
    columns (decision 0077). Any other connection (a caller's transaction) runs it through
    psycopg, which keeps its transaction handling."""
    if (
        not conn.autocommit
        or conn.pgconn.transaction_status != TransactionStatus.IDLE
        or conn.info.encoding != "utf-8"
    ):
        with conn.cursor(row_factory=tuple_row) as cursor:
            return cursor.execute(query("accept_event"), params).fetchall()
    text, names = _positional(query("accept_event"))
    values: list[bytes | None] = []
    types: list[int] = []
    formats: list[int] = []
    for name in names:
        value, oid, binary = _dump(params[name])
        values.append(value)
        types.append(oid)
        formats.append(binary)
    with conn.lock:
        result = conn.pgconn.exec_params(text, values, types, formats)
    if result.status != ExecStatus.TUPLES_OK:
        raise psycopg.errors.error_from_result(result, encoding="utf-8")
    get = result.get_value
    return [
        (
            _text(get(row, 0)),
            get(row, 1) == b"t",
            _text(get(row, 2)),
            _text(get(row, 3)),
            _text(get(row, 4)),
            int(seq) if (seq := get(row, 5)) is not None else None,
        )
        for row in range(result.ntuples)
    ]


_NAMED = re.compile(r"%\((\w+)\)s")
_BYTEA, _JSONB, _INTERVAL = 17, 3802, 1186


@lru_cache(maxsize=4)
def _positional(text: str) -> tuple[bytes, tuple[str, ...]]:
    """A named query's `%(name)s` placeholders as libpq's `$n`, and the names in order."""
    names: list[str] = []

    def number(match: re.Match[str]) -> str:
        if match[1] not in names:
            names.append(match[1])
        return f"${names.index(match[1]) + 1}"

    converted = _NAMED.sub(number, text)
    if "%" in converted:
        raise ValueError("only %(name)s placeholders are supported")
    return converted.encode(), tuple(names)


def _dump(value: Any) -> tuple[bytes | None, int, int]:
    """(bytes, type oid, 1 if binary) of one parameter, as psycopg's dumpers send it: text as
    `unknown` for the server to type, bytes as binary bytea, Jsonb as jsonb text, timedelta as
    an interval."""
    if value is None:
        return None, 0, 0
    if isinstance(value, str):
        if "\x00" in value:  # libpq would cut a text parameter at a NUL; psycopg refuses it
            raise psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
        return value.encode(), 0, 0
    if isinstance(value, bytes):
        return value, _BYTEA, 1
    if isinstance(value, Jsonb):
        return json.dumps(value.obj).encode(), _JSONB, 0
    if isinstance(value, timedelta):
        return (
            f"{value.days} days {value.seconds} seconds {value.microseconds} us".encode(),
            _INTERVAL,
            0,
        )
    raise TypeError(f"no libpq dumper for {type(value).__name__}")


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode()


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
