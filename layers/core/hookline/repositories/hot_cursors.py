"""The deliverer's per-message statements on cursors kept per connection (decision 0078), its
claim and record through the copies of their functions for the day partition the deliveries
lie in (decision 0084)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import date
from typing import Any, TypeVar

from psycopg import Cursor
from psycopg.errors import UndefinedFunction, UndefinedTable
from psycopg.pq import TransactionStatus

from hookline.db import Connection
from hookline.ids import ulid_day
from hookline.sqlfiles import query

# The deliverer's statements run on a cursor kept per connection and statement (decision
# 0078): psycopg keeps a cursor's adaptation state while it runs the same statement again,
# which a new cursor per execute builds anew (~50 µs of ~250 per claim on this machine). The
# cursors hang on their connection, so they go with it when the pool replaces it.
_CURSORS = "_hookline_cursors"


def hot_execute(
    conn: Connection, sql: str, params: dict[str, Any], *, binary: bool = False
) -> Cursor[Any]:
    """Run one of the deliverer's per-message statements on `conn`'s cursor for it (a
    connection serves one thread at a time, so its cursors do too). With `binary` the answer
    comes in Postgres's binary format: a claim's payloads, timestamps and numbers are then
    neither written out as text by the server nor parsed back here (a payload as hex doubles
    its bytes; decision 0098)."""
    cursors: dict[tuple[str, bool], Cursor[Any]] | None = getattr(conn, _CURSORS, None)
    if cursors is None:
        cursors = {}
        setattr(conn, _CURSORS, cursors)
    cursor = cursors.get((sql, binary))
    if cursor is None or cursor.closed:
        cursor = cursors[(sql, binary)] = conn.cursor(binary=binary)
    return cursor.execute(sql, params)


T = TypeVar("T")

# The functions with a copy per day partition (migrations 0036 and 0048)
CLAIM = "hookline_claim_batch"
RECORD = "hookline_record_batch_delivered"
FAILED = "hookline_record_batch_failed"
# A batch whose deliveries lie in two to four days runs a statement per day, each through its
# day's copies; one spanning more runs one statement through the functions over the parent,
# which open every day's partition. `bench/batch_days.py` (99 day partitions): a batch's claim
# and record cost 1.7 ms of backend CPU split by day against 3.4 in one statement over two
# days, 3.0-3.5 against 4.6-5.3 over four; over more days the runs disagree (each day's
# statements add ~0.7 ms, the parent's cost depends on the plan it keeps; decision 0103).
MOST_DAYS_SPLIT = 4
# (statement, day) -> the statement's text calling the day's copy of its function
_DAY_TEXTS: dict[tuple[str, str], str] = {}


def _day_text(statement: str, function: str, day: str) -> str:
    """The statement `statement` calling `function`'s copy for `day` (YYYYMMDD) instead of
    `function` (names made here from constants and a date, never from input)."""
    text = _DAY_TEXTS.get((statement, day))
    if text is None:
        text = query(statement).replace(f"{function}(", f"{function}_d{day}(", 1)
        _DAY_TEXTS[(statement, day)] = text
    return text


def day_parts(items: Sequence[T], delivery_id: Callable[[T], str]) -> list[list[T]]:
    """`items` in the parts that run a batch statement each: one per UTC day their delivery
    ids lie in when those are two to `MOST_DAYS_SPLIT` days, else all of them in one (which
    `day_execute` runs through one day's copies, or the parent's functions)."""
    if not items:
        return []
    ids = [delivery_id(item) for item in items]
    first = ulid_day(min(ids))
    if first is None or first == ulid_day(max(ids)):  # ids sort by time: one day, all of them
        return [list(items)]
    parts: dict[date | None, list[T]] = {}
    for item, item_id in zip(items, ids, strict=True):
        parts.setdefault(ulid_day(item_id), []).append(item)
    if len(parts) <= MOST_DAYS_SPLIT and None not in parts:
        return list(parts.values())
    return [list(items)]


def day_execute(
    conn: Connection,
    statement: str,
    function: str,
    ids: Sequence[str],
    params: dict[str, Any],
    *,
    binary: bool = False,
) -> Cursor[Any]:
    """Run `statement` (which calls `function`) through `function`'s copy for the day partition
    every one of `ids` lies in, or as written when the ids span days or that day has no copy
    (its partition not made yet, or dropped by retention). A day's copy hands deliveries
    outside its partition to `function` itself, so the day read from the ids decides only the
    speed. Inside a caller's transaction the statement runs as written (a missing copy's error
    would end that transaction). `binary` as `hot_execute`'s."""
    first = ulid_day(min(ids)) if ids else None
    idle = conn.info.transaction_status == TransactionStatus.IDLE
    if idle and first is not None and first == ulid_day(max(ids)):
        try:
            text = _day_text(statement, function, f"{first:%Y%m%d}")
            return hot_execute(conn, text, params, binary=binary)
        except (UndefinedFunction, UndefinedTable):  # no copy for the day, or no partition
            pass
    return hot_execute(conn, query(statement), params, binary=binary)
