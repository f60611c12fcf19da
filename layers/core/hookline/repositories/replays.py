"""Replays requested through the API: the row each one is recorded as, its claim by a
runner, the hand-off to the next run (docs/decisions/0021), progress, result, and the sweep
that marks dead runs failed and finds lost hand-offs."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.sqlfiles import query


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
