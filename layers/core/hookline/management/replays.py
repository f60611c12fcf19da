"""Replays through the API (docs/decisions/0016): a request is validated and confined to the
caller's scope, recorded as a `replays` row, and run elsewhere — by the replay function
invoked asynchronously on AWS, or by a background thread of this process locally — because a
paced replay outlives API Gateway's 29 seconds. The runner reports progress on the row and
finishes it with the replay summary and the id of its audit entry.

A runner that dies leaves its row `running`; `fail_stale` (run on every read and create)
marks it failed once it has not reported for RUNNING_QUIET, and an `accepted` row nobody
started for ACCEPTED_QUIET likewise.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import DatabaseUnavailable, HooklineError, NotFound
from hookline.ids import new_id
from hookline.management.access import Caller
from hookline.management.service import page_of, paged
from hookline.queues import DeliveryQueues
from hookline.replay import Replayer, ReplayOptions, ReplayRequest, ReplayResult, parse_request
from hookline.repositories import api as api_repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import replays as repo
from hookline.repositories.replay import Window

log = logging.getLogger(__name__)

RUNNING_QUIET = timedelta(minutes=5)  # no heartbeat for this long: the runner is gone
ACCEPTED_QUIET = timedelta(minutes=15)  # never claimed for this long: it was never started
PROGRESS_EVERY_SECONDS = 1.0  # at most one progress write per second
SHOWN_MISSING = 5


class ReplayNotStarted(DatabaseUnavailable):
    """The replay was recorded but its runner could not be started (503: try again)."""


# -- creating ---------------------------------------------------------------------------------


def create_replay(
    db: Database,
    caller: Caller,
    body: dict[str, Any],
    *,
    groups: Sequence[str],
    start: Callable[[str], None],
) -> dict[str, Any]:
    """Validate a replay request as the caller may make it, record it, and `start` its runner.

    The requester is the caller. A tenant caller replays only its own tenant: ids it cannot
    see are answered as unknown (404, like ids that do not exist), a window is confined to
    its tenant, and moving a dead-letter queue (shared by a tenant group) is 403.
    """
    doc = {k: v for k, v in body.items() if v is not None}
    if doc.get("redrive_dlq"):
        caller.require_operator("redrive a dead-letter queue (it holds every tenant's messages)")
    request = parse_request({**doc, "requested_by": caller.principal}, groups=groups)
    with db.connection() as conn, conn.transaction():
        request, tenant_id = _confine(conn, caller, request)
        row = repo.insert_replay(
            conn,
            id=new_id("rpl"),
            scope=caller.scope,
            tenant_id=tenant_id,
            requested_by=request.requested_by,
            reason=request.reason,
            request=_stored_request(request),
        )
    try:
        start(row["id"])
    except Exception as err:
        log.exception("could not start replay %s", row["id"])
        with db.connection() as conn:
            repo.finish_replay(
                conn,
                row["id"],
                state="failed",
                result={"error": f"the replay runner could not be started ({type(err).__name__})"},
                audit_id=None,
            )
        raise ReplayNotStarted(
            "the replay could not be started; nothing was replayed, try again"
        ) from err
    return get_replay(db, caller, row["id"])


def _confine(conn: Any, caller: Caller, request: ReplayRequest) -> tuple[ReplayRequest, str | None]:
    """The request limited to what the caller may see, and the one tenant it touches (None:
    several, or the whole deployment)."""
    scope = caller.tenant
    if request.selector in ("delivery_ids", "event_ids"):
        what = "deliveries" if request.selector == "delivery_ids" else "events"
        ids = list(request.delivery_ids or request.event_ids)
        seen = repo.visible_tenants(conn, what, scope, ids)
        missing = [i for i in ids if i not in seen]
        if missing:
            noun = "delivery" if what == "deliveries" else "event"
            shown = ", ".join(missing[:SHOWN_MISSING])
            extra = len(missing) - SHOWN_MISSING
            more = f" and {extra} more" if extra > 0 else ""
            raise NotFound(f"no {noun} {shown}{more}")
        tenants = set(seen.values())
        return request, (tenants.pop() if len(tenants) == 1 else None)
    if request.selector == "endpoint":
        assert request.endpoint_id is not None
        endpoint = endpoint_repo.get_in_scope(conn, scope, request.endpoint_id)
        return request, str(endpoint["tenant_id"])
    if request.selector == "window":
        assert request.window is not None
        wanted = request.window.tenant_id
        if wanted is not None:
            api_repo.get_tenant(conn, scope, wanted)  # another tenant's: not found
        tenant = wanted or scope
        window = Window(request.window.since, request.window.until, tenant, request.window.types)
        return replace(request, window=window), tenant
    return request, None  # redrive_dlq: operators only, every tenant of the group


def _stored_request(request: ReplayRequest) -> dict[str, Any]:
    """The request as it will run: the window in absolute times, defaults filled in."""
    return {k: v for k, v in request.parameters().items() if k != "selector"}


# -- reading ----------------------------------------------------------------------------------


def _out(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != "scope"}


def get_replay(db: Database, caller: Caller, replay_id: str) -> dict[str, Any]:
    """One replay in scope (a tenant sees the replays confined to it)."""
    with db.connection() as conn:
        fail_stale(conn)
        return _out(repo.get_replay(conn, caller.tenant, replay_id))


def list_replays(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    state: str | None,
    cursor: str | None,
    limit: int,
) -> dict[str, Any]:
    """Replays in scope, newest first."""
    page = page_of(cursor, limit)
    with db.connection() as conn:
        fail_stale(conn)
        rows = repo.list_replays(
            conn,
            caller.tenant,
            tenant_id=tenant_id,
            state=state,
            after=page.after,
            limit=page.limit,
        )
    return paged([_out(r) for r in rows], limit)


def fail_stale(conn: Any) -> list[str]:
    """Mark failed the replays whose runner has gone quiet (see the module docstring)."""
    failed = repo.fail_stale_replays(
        conn, running_quiet=RUNNING_QUIET, accepted_quiet=ACCEPTED_QUIET
    )
    if failed:
        log.warning("replays whose runner stopped reporting marked failed: %s", failed)
    return failed


# -- running ----------------------------------------------------------------------------------


def start_payload(replay_id: str) -> bytes:
    """The asynchronous invocation of the replay function that runs a recorded replay."""
    return json.dumps({"replay_id": replay_id}).encode()


def run_recorded_replay(
    db: Database,
    queues: DeliveryQueues,
    options: ReplayOptions,
    replay_id: str,
    *,
    keep_going: Callable[[], bool] = lambda: True,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any] | None:
    """Run a recorded replay: claim it, replay with progress on its row, and finish it with
    the summary (succeeded) or the error (failed). None when it was not waiting to run (a
    second delivery of the same invocation, or a replay already marked failed)."""
    with db.connection() as conn:
        row = repo.claim_replay(conn, replay_id)
    if row is None:
        log.info("replay %s is not waiting to run; nothing to do", replay_id)
        return None
    latest: list[ReplayResult] = []
    last_write = [float("-inf")]

    def progress(result: ReplayResult) -> None:
        if not latest:
            latest.append(result)
        now = clock()
        if now - last_write[0] < PROGRESS_EVERY_SECONDS:
            return
        last_write[0] = now
        with db.connection() as conn:
            repo.record_progress(conn, replay_id, result.processed, result.selected or None)

    doc = {**row["request"], "requested_by": row["requested_by"], "reason": row["reason"]}
    try:
        request = parse_request(doc, groups=queues.config.group_names)
        result = Replayer(db, queues, options).run(
            request, keep_going=keep_going, progress=progress
        )
    except Exception as err:
        partial = latest[0] if latest else None
        summary = partial.as_dict() if partial is not None else {}
        summary["error"] = str(err) if isinstance(err, HooklineError) else type(err).__name__
        if not isinstance(err, HooklineError):
            log.exception("replay %s failed", replay_id)
        with db.connection() as conn:
            repo.finish_replay(
                conn,
                replay_id,
                state="failed",
                result=summary,
                audit_id=partial.audit_id if partial is not None else None,
                done=partial.processed if partial is not None else None,
            )
        return summary
    summary = result.as_dict()
    with db.connection() as conn:
        repo.finish_replay(
            conn,
            replay_id,
            state="succeeded",
            result=summary,
            audit_id=result.audit_id,
            done=result.processed,
            total=result.selected,
        )
    return summary


# Local runs: replays in threads of this process; tests and `hookline dev` may wait for them.
_threads: list[threading.Thread] = []
_threads_lock = threading.Lock()


def start_in_thread(target: Callable[[], object], replay_id: str) -> None:
    """Run a recorded replay in a daemon thread of this (long-lived, local) process."""
    thread = threading.Thread(target=target, name=f"replay-{replay_id}", daemon=True)
    with _threads_lock:
        _threads[:] = [t for t in _threads if t.is_alive()]
        _threads.append(thread)
    thread.start()


def wait_for_local_replays(timeout: float = 30.0) -> bool:
    """Wait for this process's replay threads; False if some are still running."""
    deadline = time.monotonic() + timeout
    with _threads_lock:
        running = list(_threads)
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in running)
