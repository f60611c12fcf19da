"""Deliveries (one event x one endpoint) and their attempts."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.records import frozen
from hookline.repositories.content_matching import content_matches
from hookline.repositories.hot_cursors import CLAIM, RECORD, day_execute
from hookline.sqlfiles import query

# Content filters, ordering keys and the quarantine (hookline.patterns, hookline.ordering,
# hookline.repositories.quarantine) are fan-out's, reconcile's and replay's: imported by the
# functions below that use them, so the deliverer's cold start does not load them.
if TYPE_CHECKING:
    pass


@frozen
class Enqueued:
    """A delivery marked queued, to be sent to its group's queue."""

    id: str
    endpoint_id: str
    tenant_group: str
    seq: int


@frozen
class Job:
    """A claimed delivery with everything needed to send it."""

    id: str
    seq: int
    attempt_count: int
    created_at: datetime
    deadline_at: datetime
    tenant_id: str
    tenant_group: str
    event_id: str
    event_type: str
    payload: bytes
    content_type: str
    endpoint_id: str
    url: str
    headers: dict[str, str]
    retry_on_4xx: bool
    endpoint_enabled: bool
    claimed_until: datetime  # this claim's lease: it identifies the claim when finishing
    source_id: str | None = None
    input_transformer: dict[str, Any] | None = None  # decision 0045
    kind: str = "https"  # decision 0046: else `url` is the target's ARN
    role_arn: str | None = None
    external_id: str | None = None
    destination: dict[str, Any] | None = None
    public_only: bool = False  # public addresses only, at connect time too (decision 0059)
    # Decision 0067: OAuth2 client and mutual TLS material, the secret parts sealed.
    auth: dict[str, Any] | None = None
    auth_secret: str | None = None
    tls: dict[str, Any] | None = None
    tls_key: str | None = None


@frozen
class Finish:
    """How a delivery stands after an attempt (or without one, e.g. endpoint disabled)."""

    state: str  # delivered | failed | dead | queued | pending
    attempted: bool
    status: int | None
    error: str | None
    next_attempt_at: datetime | None = None
    lease_expires_at: datetime | None = None
    new_generation: bool = False


def fan_out_batch(
    conn: Connection, *, limit: int, deadline: timedelta, since: str | None = None
) -> tuple[int, int]:
    """Fan out up to `limit` outbox rows (of the events made from `since` on, a ULID time:
    None, every day's) in one transaction; returns (events, deliveries created). An endpoint with a
    content filter gets a delivery only for the events its pattern matches: the statement
    returns those events, `hookline.patterns` decides, and the matches are inserted before
    the commit. A pair whose matching raises is quarantined
    in the same transaction (decision 0059): the other events' fan-out commits regardless.
    An ordered endpoint's pairs (decision 0069) are keyed here and inserted in ledger order
    (event ids are time-ordered), held behind their key's unfinished deliveries."""
    from hookline.ordering import ordering_key
    from hookline.repositories import quarantine

    with conn.transaction():
        rows = conn.execute(
            query("fan_out_batch"), {"limit": limit, "deadline": deadline, "since": since}
        ).fetchall()
        events, created = int(rows[0]["events"]), int(rows[0]["deliveries"])
        if rows[0]["event_id"] is None:
            return events, created
        matching = content_matches(rows)
        quarantine.record(conn, matching.undecided, stage="fanout")
        orderings: dict[str, Any] = {}
        for row in rows:
            orderings.update(row["orderings"] or {})
        plain = [m for m in matching.matched if m[1] not in orderings]
        ordered = sorted((m for m in matching.matched if m[1] in orderings), key=lambda m: m[0])
        if plain:
            created += conn.execute(
                query("insert_matched_deliveries"), _pairs(plain, deadline)
            ).rowcount
        if ordered:
            params = _pairs(ordered, deadline)
            params["keys"] = [
                ordering_key(orderings[m[1]], matching.documents[m[0]]) for m in ordered
            ]
            row = conn.execute(query("insert_ordered_deliveries"), params).fetchone()
            created += int(row["created"]) if row else 0
    return events, created


def _pairs(matched: list[tuple[str, str, str, str]], deadline: timedelta) -> dict[str, Any]:
    return {
        "deadline": deadline,
        "event_ids": [m[0] for m in matched],
        "endpoint_ids": [m[1] for m in matched],
        "tenant_ids": [m[2] for m in matched],
        "groups": [m[3] for m in matched],
    }


def ordering_in_use(conn: Connection) -> bool:
    """Whether any enabled endpoint is ordered (decision 0069)."""
    row = conn.execute(query("ordering_in_use")).fetchone()
    return bool(row and row["in_use"])


def claim_released_heads(
    conn: Connection, finished_ids: Sequence[str], *, lease: timedelta
) -> list[Enqueued]:
    """The deliveries that finishing `finished_ids` released (decision 0069), marked queued
    with a lease: they must be sent now."""
    rows = conn.execute(
        query("claim_released_heads"), {"ids": list(finished_ids), "lease": lease}
    ).fetchall()
    return [Enqueued(r["id"], r["endpoint_id"], r["tenant_group"], r["enqueue_seq"]) for r in rows]


def hold_new_ordered(conn: Connection, delivery_ids: Sequence[str]) -> set[str]:
    """Of `delivery_ids`, just created pending by a statement that computes no keys (the
    reconciler's repair, a re-fan-out), hold those of ordered endpoints in their keys'
    ledger order and release each key's head (decision 0069); returns the ids it held. Call
    it in the transaction that created them."""
    if not delivery_ids:
        return set()
    from hookline.ordering import ordering_key
    from hookline.patterns import event_document

    rows = conn.execute(query("new_ordered_deliveries"), {"ids": list(delivery_ids)}).fetchall()
    if not rows:
        return set()
    keys = [
        ordering_key(
            r["ordering"],
            event_document(r["type"], r["tenant_id"], r["source_id"], bytes(r["payload"])),
        )
        for r in rows
    ]
    ids = [r["id"] for r in rows]
    conn.execute(query("hold_new_deliveries"), {"ids": ids, "keys": keys})
    return set(ids)


def release_ordered_heads(conn: Connection, pairs: Sequence[tuple[str, str]]) -> int:
    """Release the oldest held delivery of each (endpoint, key) in `pairs` that has nothing
    pending, queued or delivering (decision 0069); returns how many were released."""
    if not pairs:
        return 0
    params = {"endpoint_ids": [p[0] for p in pairs], "keys": [p[1] for p in pairs]}
    row = conn.execute(query("release_ordered_heads"), params).fetchone()
    return int(row["released"]) if row else 0


@frozen
class FanoutRound:
    """What one fan_out_and_claim statement did."""

    events: int  # outbox rows fanned out
    created: int  # new deliveries (all in `to_send`)
    due: int  # due deliveries claimed (all in `to_send`)
    filtered_waiting: bool  # events for content-filtered endpoints wait: fan_out_batch's
    to_send: list[Enqueued]  # marked queued: they must be sent now


def fan_out_and_claim(
    conn: Connection,
    *,
    limit: int,
    deadline: timedelta,
    lease: timedelta,
    due_limit: int,
    since: str | None = None,
) -> FanoutRound:
    """Fan out up to `limit` outbox rows, the new deliveries created queued with a lease, and
    claim up to `due_limit` due deliveries, in one statement; everything claimed must be sent
    now. Events of tenants with a content-filtered endpoint are left to `fan_out_batch`. With
    `since` (a ULID time), only the rows of events and deliveries made from then on are looked
    at (decision 0101); None looks at every day."""
    params = {
        "limit": limit, "deadline": deadline, "lease": lease, "due_limit": due_limit,
        "since": since,
    }  # fmt: skip
    rows = conn.execute(query("fan_out_and_claim"), params).fetchall()
    head = rows[0]
    to_send = [
        Enqueued(r["id"], r["endpoint_id"], r["tenant_group"], r["enqueue_seq"])
        for r in rows
        if r["id"] is not None
    ]
    due = int(head["due"])
    return FanoutRound(
        int(head["events"]), len(to_send) - due, due, bool(head["filtered_waiting"]), to_send
    )


def claim_due(
    conn: Connection, *, limit: int, lease: timedelta, since: str | None = None
) -> list[Enqueued]:
    """Mark up to `limit` due pending deliveries (made from `since` on, a ULID time: None,
    any) queued; they must be sent now."""
    params = {"limit": limit, "lease": lease, "since": since}
    rows = conn.execute(query("claim_due_deliveries"), params).fetchall()
    return [Enqueued(r["id"], r["endpoint_id"], r["tenant_group"], r["enqueue_seq"]) for r in rows]


def return_unsent(conn: Connection, ids: Sequence[str]) -> None:
    """Deliveries whose queue message could not be sent go back to pending."""
    if ids:
        conn.execute(query("return_unsent_deliveries"), {"ids": list(ids)})


def oldest_pending_outbox_age(conn: Connection) -> float:
    """Seconds since the oldest outbox row still waiting for fan-out was written."""
    row = conn.execute(query("oldest_pending_outbox_age")).fetchone()
    return float(row["seconds"]) if row else 0.0


@frozen
class Claim:
    """What `claim_to_send` took: the job, and for a sendable one its secrets and slot."""

    job: Job
    endpoint_deleted: bool
    sealed_secrets: list[str]  # active secrets, newest first, still sealed; [] if not sendable
    wait_seconds: float | None  # 0: slot taken; > 0: no slot, wait; None: not sendable


def job_from_row(r: dict[str, Any]) -> Job:
    return Job(
        id=r["id"],
        seq=r["enqueue_seq"],
        attempt_count=r["attempt_count"],
        created_at=r["created_at"],
        deadline_at=r["deadline_at"],
        tenant_id=r["tenant_id"],
        tenant_group=r["tenant_group"],
        event_id=r["event_id"],
        event_type=r["event_type"],
        payload=bytes(r["payload"]),
        content_type=r["content_type"],
        endpoint_id=r["endpoint_id"],
        url=r["url"],
        headers=dict(r["headers"]),
        retry_on_4xx=r["retry_on_4xx"],
        endpoint_enabled=r["enabled"],
        claimed_until=r["claimed_until"],
        source_id=r.get("source_id"),
        input_transformer=r.get("input_transformer"),
        kind=r.get("kind") or "https",
        role_arn=r.get("role_arn"),
        external_id=r.get("external_id"),
        destination=r.get("destination"),
        public_only=bool(r.get("public_only")),
        auth=r.get("auth"),
        auth_secret=r.get("auth_secret"),
        tls=r.get("tls"),
        tls_key=r.get("tls_key"),
    )


def claim_from_row(r: dict[str, Any]) -> Claim:
    """A claim as hookline_claim_batch returns it (one row per claimed delivery)."""
    wait = r["wait_seconds"]
    return Claim(
        job=job_from_row(r),
        endpoint_deleted=r["deleted"],
        sealed_secrets=list(r["secrets"] or []),
        wait_seconds=None if wait is None else float(wait),
    )


def with_events(conn: Connection, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A claim's rows with their events: a day's claim function reads each event from the day's
    partition of events, and a delivery whose event is not there comes back without it
    (decision 0100); those are read here through the parent. A row whose event is nowhere is
    left out, as the claim's join over the parent leaves it out."""
    missing = [r["event_id"] for r in rows if r["event_type"] is None]
    if not missing:
        return rows
    found = {e["id"]: e for e in conn.execute(query("events_of_claims"), {"ids": missing})}
    kept = []
    for r in rows:
        if r["event_type"] is None:
            event = found.get(r["event_id"])
            if event is None:
                continue
            r = {**r, "event_type": event["type"], "payload": event["payload"],
                 "content_type": event["content_type"],
                 "source_id": event["source_id"]}  # fmt: skip
        kept.append(r)
    return kept


def claim_to_send(
    conn: Connection,
    delivery_id: str,
    seq: int,
    lease: timedelta,
    now: datetime,
) -> Claim | None:
    """The deliverer's claim in one statement that commits without waiting for the disk
    (behind RDS Proxy too, decision 0081): claim this
    generation, then — only if the endpoint is enabled and `now` is before the deadline —
    take a slot (the claim's in-flight row holds one, decision 0085; without one the claim is
    held without it) and read the endpoint's active secrets. The batch claim's body for one
    message. Run it outside a transaction (it is its own). None if stale, finished or taken."""
    rows = day_execute(
        conn,
        "claim_delivery_to_send",
        CLAIM,
        [delivery_id],
        {
            "id": delivery_id,
            "seq": seq,
            "lease": lease,
            "now": now,
            "lease_seconds": lease.total_seconds(),
        },
        binary=True,
    ).fetchall()
    return next((claim_from_row(r) for r in with_events(conn, rows)), None)


def defer(conn: Connection, job: Job, lease: timedelta) -> None:
    """Give a claimed delivery back to the queue without counting an attempt: its claim kept
    for `lease` without a slot, for the message that comes back (it writes only the unlogged
    in-flight table, so it commits without waiting for the disk, decision 0085)."""
    conn.execute(
        query("defer_delivery"),
        {"id": job.id, "lease": lease, "seq": job.seq, "claimed_until": job.claimed_until},
    )


def park(conn: Connection, job: Job, wait: timedelta) -> None:
    """A delivery deferred too often in a row: pending, due after `wait`, for fan-out to
    enqueue (no attempt counted); only while this claim stands. Its message is dropped."""
    conn.execute(
        query("park_deferred_delivery"),
        {"id": job.id, "wait": wait, "seq": job.seq, "claimed_until": job.claimed_until},
    )


@frozen
class AttemptRecord:
    """One HTTP try as recorded in `attempts`."""

    attempted_at: datetime
    duration_ms: int
    status: int | None
    excerpt: str | None
    error: str | None
    headers: dict[str, str] | None = None  # the response's, bounded by the deliverer

    def params(self, job: Job) -> dict[str, Any]:
        return {
            "id": job.id,
            "attempted_at": self.attempted_at,
            "duration_ms": self.duration_ms,
            "status": self.status,
            "excerpt": self.excerpt,
            "error": self.error,
            "headers": Jsonb(self.headers) if self.headers else None,
        }


def record_delivered(conn: Connection, job: Job, attempt: AttemptRecord) -> int | None:
    """A delivered attempt in one statement: the attempt recorded; the delivery finished (its
    slot freed) only while this claim stands; the endpoint's failure streak ended. Returns
    the generation, or None if this claim no longer stood (nothing but the attempt was
    written)."""
    row = day_execute(
        conn,
        "record_delivered",
        RECORD,
        [job.id],
        {
            **attempt.params(job),
            "seq": job.seq,
            "claimed_until": job.claimed_until,
            "endpoint_id": job.endpoint_id,
        },
    ).fetchone()
    return None if row is None else job.seq


def finish(conn: Connection, job: Job, outcome: Finish) -> int | None:
    """Move the delivery to its state after an attempt; returns its generation, or None if
    this claim no longer stands (its lease ran out and another run took the delivery over)."""
    row = conn.execute(
        query("finish_attempt"),
        {
            "id": job.id,
            "seq": job.seq,
            "claimed_until": job.claimed_until,
            "state": outcome.state,
            "attempted": 1 if outcome.attempted else 0,
            "next_attempt_at": outcome.next_attempt_at,
            "lease_expires_at": outcome.lease_expires_at,
            "bump": 1 if outcome.new_generation else 0,
            "status": outcome.status,
            "error": outcome.error,
        },
    ).fetchone()
    return int(row["enqueue_seq"]) if row else None


def get_delivery(conn: Connection, delivery_id: str) -> dict[str, Any]:
    """One delivery, or NotFound."""
    row = conn.execute(query("get_delivery"), {"id": delivery_id}).fetchone()
    if row is None:
        raise NotFound(f"no delivery {delivery_id}")
    return dict(row)


def list_attempts(conn: Connection, delivery_id: str) -> list[dict[str, Any]]:
    """Every attempt of a delivery, oldest first."""
    return [dict(r) for r in conn.execute(query("list_attempts"), {"id": delivery_id})]
