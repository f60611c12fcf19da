"""Quarantined fan-out pairs (decision 0059): an (event, endpoint) pair whose matching raised
is recorded with its reason, so one event's failure never rolls back or blocks the fan-out of
the others; an operator decides it again once the cause is fixed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from hookline.db import Connection
from hookline.errors import failure_reason
from hookline.patterns import event_document, matches
from hookline.records import frozen
from hookline.sqlfiles import query


@frozen
class Undecided:
    """A content-filtered (event, endpoint) pair whose matching raised."""

    event_id: str
    endpoint_id: str
    tenant_id: str
    tenant_group: str
    reason: str


def record(conn: Connection, undecided: Sequence[Undecided], *, stage: str) -> int:
    """Quarantine the pairs (idempotent: a pair already there counts one more failure)."""
    if not undecided:
        return 0
    conn.execute(
        query("quarantine_pairs"),
        {
            "stage": stage,
            "event_ids": [u.event_id for u in undecided],
            "endpoint_ids": [u.endpoint_id for u in undecided],
            "tenant_ids": [u.tenant_id for u in undecided],
            "groups": [u.tenant_group for u in undecided],
            "reasons": [u.reason for u in undecided],
        },
    )
    return len(undecided)


def list_page(
    conn: Connection, *, tenant_id: str | None, limit: int, after: str | None = None
) -> list[dict[str, Any]]:
    """A page of quarantined pairs (of one tenant, or all) after the row whose `key` is
    `after`, by event then endpoint id."""
    params = {"tenant_id": tenant_id, "limit": limit, "after": after}
    return [dict(r) for r in conn.execute(query("list_quarantine"), params)]


@frozen
class QuarantineSize:
    """How much is quarantined, for the metric and the status page."""

    pairs: int
    oldest_seconds: float


def size(conn: Connection) -> QuarantineSize:
    """How many pairs are quarantined, and since when the oldest."""
    row = conn.execute(query("count_quarantine")).fetchone()
    if row is None:
        return QuarantineSize(0, 0.0)
    return QuarantineSize(int(row["n"]), float(row["oldest_seconds"]))


@frozen
class Retried:
    """What a retry decided: deliveries created, pairs released without one (the pattern did
    not match, or the endpoint no longer takes the event) and pairs still failing."""

    delivered: list[tuple[str, str]]
    released: list[tuple[str, str]]
    still_failing: list[Undecided]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready counts and the reasons of what still fails."""
        return {
            "delivered": len(self.delivered),
            "released": len(self.released),
            "still_failing": [
                {"event_id": u.event_id, "endpoint_id": u.endpoint_id, "reason": u.reason}
                for u in self.still_failing
            ],
        }


def retry(
    conn: Connection,
    *,
    tenant_id: str | None,
    event_ids: Sequence[str] | None,
    limit: int,
    deadline: timedelta,
) -> Retried:
    """Decide up to `limit` quarantined pairs again, in one transaction: a pair whose pattern
    now matches gets its delivery (the fan-out's id, so a repeat is harmless), one that does
    not match, or whose endpoint no longer takes the event, leaves quarantine without one, and
    one that raises again stays, with the new reason."""
    delivered: list[tuple[str, str, str, str]] = []
    released: list[tuple[str, str]] = []
    failing: list[Undecided] = []
    with conn.transaction():
        rows = conn.execute(
            query("claim_quarantine_for_retry"),
            {
                "tenant_id": tenant_id,
                "event_ids": list(event_ids) if event_ids is not None else None,
                "limit": limit,
            },
        ).fetchall()
        for row in rows:
            pair = (row["event_id"], row["endpoint_id"])
            try:
                hit = bool(row["eligible"]) and (
                    row["content_filter"] is None
                    or matches(
                        row["content_filter"],
                        event_document(
                            row["type"], row["tenant_id"], row["source_id"], bytes(row["payload"])
                        ),
                    )
                )
            except Exception as err:  # any failure stays this pair's (decision 0059)
                failing.append(Undecided(*pair, row["tenant_id"], row["tenant_group"],
                                         failure_reason("retry", err)))  # fmt: skip
                continue
            if hit:
                delivered.append((*pair, row["tenant_id"], row["tenant_group"]))
            else:
                released.append(pair)
        if delivered:
            conn.execute(
                query("insert_matched_deliveries"),
                {
                    "deadline": deadline,
                    "event_ids": [d[0] for d in delivered],
                    "endpoint_ids": [d[1] for d in delivered],
                    "tenant_ids": [d[2] for d in delivered],
                    "groups": [d[3] for d in delivered],
                },
            )
        done = [(d[0], d[1]) for d in delivered] + released
        if done:
            conn.execute(
                query("release_quarantine"),
                {"event_ids": [d[0] for d in done], "endpoint_ids": [d[1] for d in done]},
            )
        record(conn, failing, stage="retry")
    return Retried([(d[0], d[1]) for d in delivered], released, failing)
