"""Replays through the API (docs/decisions/0016): a request is validated and confined to the
caller's scope, recorded as a `replays` row, and run elsewhere — by the replay function
invoked asynchronously on AWS, or by a background thread of this process locally — because a
paced replay outlives API Gateway's 29 seconds. The runner reports progress on the row and
finishes it with the replay summary and the id of its audit entry.

A replay larger than one run (docs/decisions/0021) continues: a run near its time limit
hands off (where it got to and the summary so far, on the row) and starts the next run —
the replay function invoked again asynchronously, or in this process when there is none —
which claims the row only as the run it was handed off to. After MAX_RUNS runs it fails.

`sweep` (a step of every reconcile run) re-invokes a hand-off nobody claimed for
HANDOFF_QUIET (up to MAX_REINVOKES times; the claim makes a late original harmless), marks
failed a runner that has not reported for RUNNING_QUIET, and an `accepted` row nobody
started for ACCEPTED_QUIET.
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
from hookline.replay import (
    Replayer,
    ReplayOptions,
    ReplayRequest,
    ReplayResult,
    Resume,
    parse_request,
)
from hookline.repositories import api as api_repo
from hookline.repositories import audit as audit_repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import replays as repo
from hookline.repositories.replay import Window
from hookline.settings import Settings

log = logging.getLogger(__name__)

RUNNING_QUIET = timedelta(minutes=5)  # no heartbeat for this long: the runner is gone
ACCEPTED_QUIET = timedelta(minutes=15)  # never claimed for this long: it was never started
HANDOFF_QUIET = timedelta(minutes=2)  # a next run not started by then: its invocation was lost
MAX_REINVOKES = 3  # re-invocations of one lost hand-off before the replay fails
MAX_RUNS = 1_000  # runs of one replay before it fails (a loop guard: ~83 h of 5-minute runs)
PROGRESS_EVERY_SECONDS = 1.0  # at most one progress write per second
SHOWN_MISSING = 5


class ReplayNotStarted(DatabaseUnavailable):
    """The replay was recorded but its runner could not be started (503: try again)."""


Continue = Callable[[str, int], None]  # start run `run` of replay `replay_id` elsewhere


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


_INTERNAL = ("scope", "resume", "handed_off_at", "reinvoked")


def _out(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _INTERNAL}


def get_replay(db: Database, caller: Caller, replay_id: str) -> dict[str, Any]:
    """One replay in scope (a tenant sees the replays confined to it)."""
    with db.connection() as conn:
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
        rows = repo.list_replays(
            conn,
            caller.tenant,
            tenant_id=tenant_id,
            state=state,
            after=page.after,
            limit=page.limit,
        )
    return paged([_out(r) for r in rows], limit)


def sweep(db: Database, start: Continue | None = None) -> dict[str, int]:
    """Reconcile's step for replays (see the module docstring): re-invoke lost hand-offs,
    fail dead runners. `start` defaults to `continuation_starter` of the settings."""
    with db.connection() as conn:
        lost = repo.lost_continuations(
            conn, handoff_quiet=HANDOFF_QUIET, max_reinvokes=MAX_REINVOKES
        )
        # Failed and audited together: every replay has its one audit entry, a dead runner's
        # too (it did part of the work and wrote none).
        with conn.transaction():
            failed = repo.fail_stale_replays(
                conn,
                running_quiet=RUNNING_QUIET,
                accepted_quiet=ACCEPTED_QUIET,
                handoff_quiet=HANDOFF_QUIET,
                max_reinvokes=MAX_REINVOKES,
            )
            for row in failed:
                repo.set_audit_id(conn, row["id"], _audit_abandoned(conn, row))
    if failed:
        log.warning("replays whose runner stopped marked failed: %s", [row["id"] for row in failed])
    if lost:
        if start is None:
            from hookline.settings import get_settings

            start = continuation_starter(get_settings())
        for replay_id, runs in lost:
            log.warning(
                "replay %s: run %d was never started; invoking it again", replay_id, runs + 1
            )
            try:
                start(replay_id, runs + 1)
            except Exception:  # the next sweep tries again, up to MAX_REINVOKES
                log.exception("could not re-invoke replay %s", replay_id)
    return {"replays_failed": len(failed), "replays_continued": len(lost)}


def _audit_abandoned(conn: Any, row: dict[str, Any]) -> int:
    """The audit entry of a replay the sweep failed: filed as its runner would have filed it
    (requester, reason, request), with the summary so far and why it failed."""
    from hookline.settings import get_settings

    doc = {**row["request"], "requested_by": row["requested_by"], "reason": row["reason"]}
    try:
        request = parse_request(doc, groups=get_settings().config.group_names)
        (object_type, object_id), parameters = request.audit_object(), request.parameters()
    except HooklineError:  # recorded by an older version: filed under the replay itself
        (object_type, object_id), parameters = ("replay", row["id"]), row["request"]
    return audit_repo.write_audit(
        conn,
        actor=row["requested_by"],
        action="replay",
        object_type=object_type,
        object_id=object_id,
        params={
            "reason": row["reason"],
            "request": parameters,
            "result": row["result"],
            "replay_id": row["id"],
        },
    )


# -- running ----------------------------------------------------------------------------------


def start_payload(replay_id: str, run: int = 1) -> bytes:
    """The asynchronous invocation of the replay function that runs a recorded replay (`run`:
    which run of it; the first when left out)."""
    doc: dict[str, Any] = {"replay_id": replay_id}
    if run != 1:
        doc["run"] = run
    return json.dumps(doc).encode()


def invoker(settings: Settings, function_name: str) -> Continue:
    """Start a run of a recorded replay in the replay function, asynchronously."""

    def invoke(replay_id: str, run: int) -> None:
        from hookline.aws import client

        client("lambda", settings).invoke(
            FunctionName=function_name,
            InvocationType="Event",
            Payload=start_payload(replay_id, run),
        )

    return invoke


def continuation_starter(settings: Settings) -> Continue:
    """How reconcile starts a lost next run: the replay function when it is configured (AWS),
    else a background thread of this process (local)."""
    if settings.replay_function_name:
        return invoker(settings, settings.replay_function_name)

    def in_thread(replay_id: str, run: int) -> None:
        from hookline.db import get_database
        from hookline.runtime import delivery_queues, replay_options

        def target() -> None:
            try:
                run_recorded_replay(
                    get_database(),
                    delivery_queues(settings),
                    replay_options(settings),
                    replay_id,
                    run=run,
                )
            except Exception:  # the sweep fails it when its heartbeat stops
                log.exception("local replay run %d of %s failed", run, replay_id)

        start_in_thread(target, replay_id)

    return in_thread


def run_recorded_replay(
    db: Database,
    queues: DeliveryQueues,
    options: ReplayOptions,
    replay_id: str,
    *,
    run: int = 1,
    keep_going: Callable[[], bool] | None = None,
    budget: Callable[[], Callable[[], bool]] = lambda: lambda: True,
    continue_elsewhere: Continue | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Any] | None:
    """Run a recorded replay: claim it as run `run`, replay with progress on its row, and
    finish it with the summary (succeeded) or the error (failed). None when it was not
    waiting for this run (a second delivery of the same invocation, a late one, or a replay
    already finished or failed).

    A run stopped by its `keep_going` (default: a fresh `budget()`) hands off: with
    `continue_elsewhere` that starts the next run (the replay function invoking itself) and
    this returns the summary so far with `continued: true`; without, the next run is claimed
    and run here, with a fresh `budget()`."""
    while True:
        with db.connection() as conn:
            if run == 1:
                row = repo.claim_replay(conn, replay_id)
            else:
                row = repo.claim_continuation(conn, replay_id, run)
        if row is None:
            log.info("replay %s is not waiting for run %d; nothing to do", replay_id, run)
            return None
        summary, handed_off = _run_once(
            db, queues, options, row, run, keep_going or budget(), clock
        )
        if not handed_off:
            return summary
        if continue_elsewhere is not None:
            try:
                continue_elsewhere(replay_id, run + 1)
            except Exception:  # reconcile re-invokes a hand-off nobody claimed
                log.exception("could not start run %d of replay %s", run + 1, replay_id)
            return {**summary, "continued": True, "run": run}
        run, keep_going = run + 1, None


def _run_once(
    db: Database,
    queues: DeliveryQueues,
    options: ReplayOptions,
    row: dict[str, Any],
    run: int,
    keep_going: Callable[[], bool],
    clock: Callable[[], float],
) -> tuple[dict[str, Any], bool]:
    """One run of a claimed replay: (its summary, whether it handed off to a next run)."""
    replay_id = row["id"]
    stored = row["resume"] if run > 1 else None
    carried = ReplayResult.from_summary(stored["result"]) if stored else None
    resume = Resume.from_dict(stored) if stored else None
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
            request,
            keep_going=keep_going,
            progress=progress,
            continues=run < MAX_RUNS,
            carried=carried,
            resume=resume,
        )
    except Exception as err:
        partial = latest[0] if latest else carried
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
        return summary, False
    summary = result.as_dict()
    if result.resume is not None:
        with db.connection() as conn:
            handed = repo.hand_off(
                conn,
                replay_id,
                run=run,
                resume={**result.resume.as_dict(), "result": summary},
                done=result.processed,
                total=result.selected or None,
            )
        if not handed:
            log.warning("replay %s is no longer run %d's; not continued", replay_id, run)
        return summary, handed
    state, error = "succeeded", None
    if result.stopped_early:  # the last run allowed: a loop guard
        state = "failed"
        error = (
            f"stopped after {run} runs, the most one replay may take; "
            f"{result.not_reached} not reached: create the same replay again to continue"
        )
        summary["error"] = error
    with db.connection() as conn:
        repo.finish_replay(
            conn,
            replay_id,
            state=state,
            result=summary,
            audit_id=result.audit_id,
            done=result.processed,
            total=result.selected,
        )
    return summary, False


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
