"""Runner and continuation of a recorded replay (docs/decisions/0021): a run claims the row,
replays with progress on it, and finishes it with the summary; a run near its time limit
hands off (where it got to and the summary so far, on the row) and starts the next run —
the replay function invoked again asynchronously, or in this process when there is none —
which claims the row only as the run it was handed off to. After MAX_RUNS runs it fails."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from hookline.db import Database
from hookline.errors import HooklineError
from hookline.queues import DeliveryQueues
from hookline.replay.context import ReplayOptions
from hookline.replay.request import parse_request
from hookline.replay.result import ReplayResult, Resume
from hookline.replay.runner import Replayer
from hookline.replay.starters import Continue
from hookline.repositories import replay as repo

log = logging.getLogger(__name__)

MAX_RUNS = 1_000  # runs of one replay before it fails (a loop guard: ~83 h of 5-minute runs)
PROGRESS_EVERY_SECONDS = 1.0  # at most one progress write per second


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
