"""Where a traced event's trace is kept for fan-out: its outbox row (decision 0070)."""

from __future__ import annotations

from collections.abc import Sequence

from hookline.db import Connection
from hookline.records import frozen
from hookline.sqlfiles import query


@frozen
class EventTrace:
    """A delivery's event and the traceparent its receive span left on the outbox row."""

    event_id: str
    traceparent: str


def event_traces(conn: Connection, delivery_ids: Sequence[str]) -> dict[str, EventTrace]:
    """Delivery id -> its event's trace, for the deliveries whose event was traced."""
    if not delivery_ids:
        return {}
    rows = conn.execute(query("event_traces"), {"ids": list(delivery_ids)}).fetchall()
    return {r["delivery_id"]: EventTrace(r["event_id"], r["traceparent"]) for r in rows}
