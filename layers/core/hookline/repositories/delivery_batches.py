"""A deliver batch's claim and its delivered attempts, one statement each (decision 0066), each
calling the function made for the day partition the batch lies in when there is one (decision
0084)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg.errors import UndefinedFunction, UndefinedTable
from psycopg.pq import TransactionStatus
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.ids import ulid_day
from hookline.repositories.deliveries import AttemptRecord, Claim, Job, claim_from_row
from hookline.repositories.hot_cursors import hot_execute
from hookline.sqlfiles import query

CLAIM = "hookline_claim_batch"
RECORD = "hookline_record_batch_delivered"
# (statement, day) -> the statement's text calling the day's copy of its function
_TEXTS: dict[tuple[str, str], str] = {}


def _text(statement: str, function: str, day: str) -> str:
    """The statement `statement` calling `function`'s copy for `day` (YYYYMMDD) instead of
    `function` (names made here from constants and a date, never from input)."""
    text = _TEXTS.get((statement, day))
    if text is None:
        text = query(statement).replace(f"{function}(", f"{function}_d{day}(", 1)
        _TEXTS[(statement, day)] = text
    return text


def _run(conn: Connection, statement: str, function: str, params: dict[str, Any]) -> list[Any]:
    """Run `statement` through the copy of `function` for the day partition every id of the
    batch lies in, or through `function` itself when the ids span days or that day has no copy
    (its partition not made yet, or dropped by retention). A day's copy hands a batch outside
    its partition to `function` itself, so the day read from the ids decides only the speed.
    Inside a caller's transaction only `function` itself is called (a missing copy's error
    would end that transaction)."""
    ids = params["ids"]
    first = ulid_day(min(ids)) if ids else None
    idle = conn.info.transaction_status == TransactionStatus.IDLE
    if idle and first is not None and first == ulid_day(max(ids)):
        try:
            return hot_execute(
                conn, _text(statement, function, f"{first:%Y%m%d}"), params
            ).fetchall()
        except (UndefinedFunction, UndefinedTable):  # no copy for the day, or no partition
            pass
    return hot_execute(conn, query(statement), params).fetchall()


def claim_batch_to_send(
    conn: Connection,
    messages: Sequence[tuple[str, int]],
    lease: timedelta,
    now: datetime,
) -> dict[tuple[str, int], Claim]:
    """`claim_to_send` for every (delivery id, generation) of a batch in one statement (run
    outside a transaction: it is its own). Returns the claims that held, by (id, generation),
    each with its slot or the wait before one; a message missing from the answer is stale,
    finished or taken."""
    rows = _run(
        conn,
        "claim_deliveries_to_send",
        CLAIM,
        {
            "ids": [m[0] for m in messages],
            "seqs": [m[1] for m in messages],
            "lease": lease,
            "now": now,
            "lease_seconds": lease.total_seconds(),
        },
    )
    return {(r["id"], r["enqueue_seq"]): claim_from_row(r) for r in rows}


def record_batch_delivered(
    conn: Connection, delivered: Sequence[tuple[Job, AttemptRecord]]
) -> set[str]:
    """`record_delivered` for every delivered attempt of a batch in one durable statement:
    each attempt recorded; each delivery finished (its slot freed) only while its claim
    stands. Returns the ids whose claim still stood."""
    if not delivered:
        return set()
    rows = _run(
        conn,
        "record_deliveries_delivered",
        RECORD,
        {
            "ids": [job.id for job, _ in delivered],
            "seqs": [job.seq for job, _ in delivered],
            "claimed_until": [job.claimed_until for job, _ in delivered],
            "endpoint_ids": [job.endpoint_id for job, _ in delivered],
            "attempted_at": [a.attempted_at for _, a in delivered],
            "duration_ms": [a.duration_ms for _, a in delivered],
            "statuses": [a.status for _, a in delivered],
            "excerpts": [a.excerpt for _, a in delivered],
            "headers": [Jsonb(a.headers) if a.headers else None for _, a in delivered],
        },
    )
    return {r["id"] for r in rows}
