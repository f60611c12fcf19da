"""Replay's queries (`sql/replay.sql`): selecting deliveries and ledger events, resetting
deliveries for a new run, and re-creating missing ones from the ledger; and the `replays` rows
of replays requested through the API — the claim by a runner, the hand-off to the next run
(docs/decisions/0021), progress, result, and the sweep that marks dead runs failed and finds
lost hand-offs."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.records import frozen
from hookline.repositories.content_matching import content_match_arrays
from hookline.repositories.deliveries import hold_new_ordered, release_ordered_heads
from hookline.repositories.retention import mark_slices_changed
from hookline.sqlfiles import query


@frozen
class Window:
    """Events received in [since, until), optionally of one tenant and some event types."""

    since: datetime
    until: datetime
    tenant_id: str | None = None
    types: tuple[str, ...] = ()  # filter patterns (`*` wildcards); empty = every type


@frozen
class Reset:
    """What resetting one delivery came to: its new generation, or why it was skipped."""

    id: str
    skip: str | None
    endpoint_id: str | None = None
    tenant_group: str | None = None
    seq: int | None = None
    held: bool = False  # an ordered endpoint's: held in its key's order, not queued


def _ids(rows: Iterable[Any]) -> list[str]:
    return [str(r["id"]) for r in rows]


def deliveries_by_ids(
    conn: Connection, ids: Sequence[str], *, limit: int, after: str | None = None
) -> list[str]:
    """Those of `ids` that exist, oldest first (after the delivery `after`, if given: every
    selection here resumes after the last id a previous run dealt with)."""
    params = {"ids": list(ids), "limit": limit, "after": after}
    return _ids(conn.execute(query("replay_deliveries_by_ids"), params))


def deliveries_by_events(
    conn: Connection,
    event_ids: Sequence[str],
    states: Sequence[str],
    *,
    limit: int,
    after: str | None = None,
) -> list[str]:
    """Deliveries of the events, in the given states, oldest first."""
    params = {"event_ids": list(event_ids), "states": list(states), "limit": limit, "after": after}
    return _ids(conn.execute(query("replay_deliveries_by_events"), params))


def deliveries_by_endpoint(
    conn: Connection,
    endpoint_id: str,
    window: Window,
    states: Sequence[str],
    *,
    limit: int,
    after: str | None = None,
) -> list[str]:
    """Deliveries to one endpoint of events received in the window, oldest first."""
    params = {
        "after": after,
        "endpoint_id": endpoint_id,
        "since": window.since,
        "until": window.until,
        "states": list(states),
        "limit": limit,
    }
    return _ids(conn.execute(query("replay_deliveries_by_endpoint"), params))


def deliveries_by_window(
    conn: Connection,
    window: Window,
    states: Sequence[str],
    *,
    limit: int,
    after: str | None = None,
) -> list[str]:
    """Deliveries of events received in the window (of a tenant, of some types)."""
    params = {
        "after": after,
        "tenant_id": window.tenant_id,
        "since": window.since,
        "until": window.until,
        "types": list(window.types),
        "states": list(states),
        "limit": limit,
    }
    return _ids(conn.execute(query("replay_deliveries_by_window"), params))


def judge(conn: Connection, ids: Sequence[str]) -> dict[str, str | None]:
    """For each delivery, why a reset would skip it (None: it would be replayed)."""
    rows = conn.execute(query("replay_judge_deliveries"), {"ids": list(ids)}).fetchall()
    return {r["id"]: r["skip"] for r in rows}


def reset(
    conn: Connection, ids: Sequence[str], *, lease: timedelta, deadline: timedelta
) -> list[Reset]:
    """Reset deliveries for a new run (queued, new generation); one Reset per id found.
    An ordered endpoint's are held in their key's order and each key's head released, in the
    same transaction (decision 0069): the fan-out's due arm sends what was released. A slice
    of the archive holding a reset one is written again at its day's drop (decision 0118)."""
    with conn.transaction():
        rows = conn.execute(
            query("replay_reset_deliveries"),
            {"ids": list(ids), "lease": lease, "deadline": deadline},
        ).fetchall()
        mark_slices_changed(conn, [r["id"] for r in rows if r["skip"] is None])
        keys = sorted(
            {(r["endpoint_id"], r["ordering_key"]) for r in rows if r["ordering_key"] is not None}
        )
        release_ordered_heads(conn, keys)
    return [
        Reset(
            r["id"], r["skip"], r["endpoint_id"], r["tenant_group"], r["enqueue_seq"],
            held=r["ordering_key"] is not None,
        )
        for r in rows
    ]  # fmt: skip


def known_events(conn: Connection, event_ids: Sequence[str]) -> set[str]:
    """Those of `event_ids` that are in the ledger."""
    rows = conn.execute(query("replay_known_events"), {"event_ids": list(event_ids)}).fetchall()
    return {r["id"] for r in rows}


def events_by_window(
    conn: Connection, window: Window, *, limit: int, after: str | None = None
) -> list[str]:
    """Ledger events received in the window, oldest first."""
    params = {
        "after": after,
        "tenant_id": window.tenant_id,
        "since": window.since,
        "until": window.until,
        "types": list(window.types),
        "limit": limit,
    }
    return _ids(conn.execute(query("refanout_events_by_window"), params))


def events_for_endpoint(
    conn: Connection, endpoint_id: str, window: Window, *, limit: int, after: str | None = None
) -> list[str]:
    """The endpoint's tenant's events in the window that its filters match, oldest first."""
    params = {
        "after": after,
        "endpoint_id": endpoint_id,
        "since": window.since,
        "until": window.until,
        "limit": limit,
    }
    return _ids(conn.execute(query("refanout_events_for_endpoint"), params))


def _filtered_matches(
    conn: Connection, event_ids: Sequence[str], endpoint_id: str | None, *, record: bool
) -> dict[str, list[str]]:
    """The (event, endpoint) pairs of content-filtered endpoints whose pattern matches, as the
    two arrays the refanout statements take; with `record`, the pairs whose matching raised
    are quarantined (decision 0059), never the chunk's failure."""
    rows = conn.execute(
        query("refanout_filtered_events"),
        {"event_ids": list(event_ids), "endpoint_id": endpoint_id},
    ).fetchall()
    return content_match_arrays(conn, rows, stage="replay" if record else None)


def count_missing(
    conn: Connection, event_ids: Sequence[str], endpoint_id: str | None
) -> tuple[int, int]:
    """(pairs a refanout considers, pairs without a delivery) for the events; an endpoint
    with a content filter counts only for the events its pattern matches."""
    params = {
        "event_ids": list(event_ids),
        "endpoint_id": endpoint_id,
        **_filtered_matches(conn, event_ids, endpoint_id, record=False),
    }
    row = conn.execute(query("refanout_count_missing"), params).fetchone()
    assert row is not None
    return int(row["pairs"]), int(row["missing"])


def create_missing(
    conn: Connection,
    event_ids: Sequence[str],
    endpoint_id: str | None,
    *,
    deadline: timedelta,
    hold: timedelta,
) -> tuple[int, list[str], set[str]]:
    """Create the deliveries the events lack, to content-filtered endpoints only where their
    pattern matches (as the fan-out would); (pairs considered, ids created, those of them
    held in their key's order for an ordered endpoint, decision 0069). A slice of the archive
    holding a created one is written again at its day's drop (decision 0118)."""
    with conn.transaction():
        row = conn.execute(
            query("refanout_create_deliveries"),
            {
                "event_ids": list(event_ids),
                "endpoint_id": endpoint_id,
                "deadline": deadline,
                "hold": hold,
                **_filtered_matches(conn, event_ids, endpoint_id, record=True),
            },
        ).fetchone()
        assert row is not None
        created = list(row["created"])
        held = hold_new_ordered(conn, created)
        mark_slices_changed(conn, created)
    return int(row["pairs"]), created, held


# -- the replays the API records ---------------------------------------------------------


def insert_replay(
    conn: Connection,
    *,
    id: str,
    scope: str,
    tenant_id: str | None,
    requested_by: str,
    reason: str,
    request: dict[str, Any],
) -> dict[str, Any]:
    """Record an accepted replay."""
    row = conn.execute(
        query("insert_replay"),
        {
            "id": id,
            "scope": scope,
            "tenant_id": tenant_id,
            "requested_by": requested_by,
            "reason": reason,
            "request": Jsonb(request),
        },
    ).fetchone()
    assert row is not None
    return dict(row)


def get_replay(conn: Connection, tenant: str | None, replay_id: str) -> dict[str, Any]:
    """One replay in scope, or NotFound."""
    row = conn.execute(query("get_replay"), {"id": replay_id, "tenant": tenant}).fetchone()
    if row is None:
        raise NotFound(f"no replay {replay_id}")
    return dict(row)


def list_replays(
    conn: Connection,
    tenant: str | None,
    *,
    tenant_id: str | None,
    state: str | None,
    after: str | None,
    limit: int,
) -> list[dict[str, Any]]:
    """Replays in scope, newest first."""
    params = {
        "tenant": tenant,
        "tenant_id": tenant_id,
        "state": state,
        "after": after,
        "limit": limit,
    }
    return [dict(r) for r in conn.execute(query("list_replays"), params).fetchall()]


def claim_replay(conn: Connection, replay_id: str) -> dict[str, Any] | None:
    """Take an accepted replay to run it; None when it is not (any longer) accepted."""
    row = conn.execute(query("claim_replay"), {"id": replay_id}).fetchone()
    return None if row is None else dict(row)


def claim_continuation(conn: Connection, replay_id: str, run: int) -> dict[str, Any] | None:
    """Take a replay handed off by run `run - 1` to run it as run `run`; None when it is not
    (any longer) waiting for that run."""
    row = conn.execute(query("claim_continuation"), {"id": replay_id, "run": run}).fetchone()
    return None if row is None else dict(row)


def hand_off(
    conn: Connection,
    replay_id: str,
    *,
    run: int,
    resume: dict[str, Any],
    done: int,
    total: int | None,
) -> bool:
    """Record where run `run` stopped, for the next run; False if the row is no longer this
    run's (finished, failed by the sweep, or already handed off)."""
    row = conn.execute(
        query("hand_off_replay"),
        {"id": replay_id, "run": run, "resume": Jsonb(resume), "done": done, "total": total},
    ).fetchone()
    return row is not None


def record_progress(conn: Connection, replay_id: str, done: int, total: int | None) -> None:
    """How far a running replay is; also its heartbeat."""
    conn.execute(query("replay_progress"), {"id": replay_id, "done": done, "total": total})


def finish_replay(
    conn: Connection,
    replay_id: str,
    *,
    state: str,
    result: dict[str, Any],
    audit_id: int | None,
    done: int | None = None,
    total: int | None = None,
) -> dict[str, Any] | None:
    """The final state and result of a replay (None if it had already finished)."""
    row = conn.execute(
        query("finish_replay"),
        {
            "id": replay_id,
            "state": state,
            "result": Jsonb(result),
            "audit_id": audit_id,
            "done": done,
            "total": total,
        },
    ).fetchone()
    return None if row is None else dict(row)


def fail_stale_replays(
    conn: Connection,
    *,
    running_quiet: timedelta,
    accepted_quiet: timedelta,
    handoff_quiet: timedelta,
    max_reinvokes: int,
) -> list[dict[str, Any]]:
    """Mark failed the replays whose runner went quiet, and those handed off whose next run
    never started although re-invoked `max_reinvokes` times; their id, requester, reason,
    request and result (the summary so far, with the error), for their audit entries."""
    rows = conn.execute(
        query("fail_stale_replays"),
        {
            "running_quiet": running_quiet,
            "accepted_quiet": accepted_quiet,
            "handoff_quiet": handoff_quiet,
            "max_reinvokes": max_reinvokes,
        },
    ).fetchall()
    return [dict(r) for r in rows]


def set_audit_id(conn: Connection, replay_id: str, audit_id: int) -> None:
    """Link a replay to its audit entry."""
    conn.execute(query("set_replay_audit_id"), {"id": replay_id, "audit_id": audit_id})


def lost_continuations(
    conn: Connection, *, handoff_quiet: timedelta, max_reinvokes: int
) -> list[tuple[str, int]]:
    """(id, runs so far) of the replays handed off and not claimed for `handoff_quiet`, each
    counted as re-invoked now (so a concurrent sweep does not take it too)."""
    rows = conn.execute(
        query("lost_continuations"),
        {"handoff_quiet": handoff_quiet, "max_reinvokes": max_reinvokes},
    ).fetchall()
    return [(str(r["id"]), int(r["runs"])) for r in rows]


def visible_tenants(
    conn: Connection, what: str, tenant: str | None, ids: list[str]
) -> dict[str, str]:
    """{id: tenant id} of those `ids` (deliveries or events) the scope `tenant` may see."""
    name = {"deliveries": "replay_visible_deliveries", "events": "replay_visible_events"}[what]
    rows = conn.execute(query(name), {"ids": ids, "tenant": tenant}).fetchall()
    return {str(r["id"]): str(r["tenant_id"]) for r in rows}
