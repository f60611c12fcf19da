"""A deliver batch's claim and its delivered attempts, one statement each (decision 0066), each
calling the function made for the day partition the batch lies in when there is one (decision
0084)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.repositories.deliveries import (
    AttemptRecord,
    Claim,
    Job,
    claim_from_row,
    with_events,
)
from hookline.repositories.hot_cursors import CLAIM, RECORD, day_execute


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
    ids = [m[0] for m in messages]
    rows = day_execute(
        conn,
        "claim_deliveries_to_send",
        CLAIM,
        ids,
        {
            "ids": ids,
            "seqs": [m[1] for m in messages],
            "lease": lease,
            "now": now,
            "lease_seconds": lease.total_seconds(),
        },
        binary=True,
    ).fetchall()
    return {(r["id"], r["enqueue_seq"]): claim_from_row(r) for r in with_events(conn, rows)}


def record_batch_delivered(
    conn: Connection, delivered: Sequence[tuple[Job, AttemptRecord]]
) -> set[str]:
    """`record_delivered` for every delivered attempt of a batch in one durable statement:
    each attempt recorded; each delivery finished (its slot freed) only while its claim
    stands. Returns the ids whose claim still stood."""
    if not delivered:
        return set()
    ids = [job.id for job, _ in delivered]
    rows = day_execute(
        conn,
        "record_deliveries_delivered",
        RECORD,
        ids,
        {
            "ids": ids,
            "seqs": [job.seq for job, _ in delivered],
            "claimed_until": [job.claimed_until for job, _ in delivered],
            "endpoint_ids": [job.endpoint_id for job, _ in delivered],
            "attempted_at": [a.attempted_at for _, a in delivered],
            "duration_ms": [a.duration_ms for _, a in delivered],
            "statuses": [a.status for _, a in delivered],
            "excerpts": [a.excerpt for _, a in delivered],
            "headers": [Jsonb(a.headers) if a.headers else None for _, a in delivered],
        },
    ).fetchall()
    return {r["id"] for r in rows}
