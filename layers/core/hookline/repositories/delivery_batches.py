"""A deliver batch's claim and its delivered attempts, one statement each (decision 0066), each
calling the function made for the day partition the batch lies in when there is one (decision
0084); and its failed attempts, one statement for them all (decision 0105)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.records import frozen
from hookline.repositories.deliveries import (
    AttemptRecord,
    Claim,
    Finish,
    Job,
    claim_from_row,
    with_events,
)
from hookline.repositories.hot_cursors import CLAIM, FAILED, RECORD, day_execute


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


@frozen
class FailedRecord:
    """A failed attempt as its record writes it: the attempt, the delivery's state after it
    (`finish`, always an attempted one), and whether it counts toward its endpoint's failure
    streak (a 410 Gone disables the endpoint instead)."""

    job: Job
    attempt: AttemptRecord
    finish: Finish
    streak: bool = True


@frozen
class FailuresRecorded:
    """What a record of failed attempts found: the deliveries whose claim still stood, with
    their generation after it, and the failure streaks of the endpoints it counted, by when
    each started."""

    stood: dict[str, int]
    failing_since: dict[str, datetime]


def record_batch_failed(conn: Connection, failed: Sequence[FailedRecord]) -> FailuresRecorded:
    """Failed attempts in one durable statement (run outside a transaction: it is its own):
    each attempt recorded; each counted endpoint's failure streak started unless it has; each
    delivery moved to its `finish` only while its claim stands."""
    if not failed:
        return FailuresRecorded({}, {})
    ids = [f.job.id for f in failed]
    rows = day_execute(
        conn,
        "record_deliveries_failed",
        FAILED,
        ids,
        {
            "ids": ids,
            "seqs": [f.job.seq for f in failed],
            "claimed_until": [f.job.claimed_until for f in failed],
            "attempted_at": [f.attempt.attempted_at for f in failed],
            "duration_ms": [f.attempt.duration_ms for f in failed],
            "statuses": [f.attempt.status for f in failed],
            "excerpts": [f.attempt.excerpt for f in failed],
            "errors": [f.attempt.error for f in failed],
            "headers": [Jsonb(f.attempt.headers) if f.attempt.headers else None for f in failed],
            "states": [f.finish.state for f in failed],
            "next_attempt_at": [f.finish.next_attempt_at for f in failed],
            "lease_expires_at": [f.finish.lease_expires_at for f in failed],
            "bumps": [1 if f.finish.new_generation else 0 for f in failed],
            "reasons": [f.finish.error for f in failed],
            "streak_endpoints": list(dict.fromkeys(f.job.endpoint_id for f in failed if f.streak)),
        },
    ).fetchall()
    return FailuresRecorded(
        {r["id"]: int(r["enqueue_seq"]) for r in rows if r["id"] is not None},
        {r["endpoint_id"]: r["failing_since"] for r in rows if r["endpoint_id"] is not None},
    )
