"""Replay: invoked from the AWS console with a JSON test event, or by `hookline replay
--function`. The event is the replay request (docs/operations.md has one per selector); the
answer is its summary, or a clear JSON error — never a stack trace.

The management API invokes it asynchronously with `{"replay_id": "rpl_..."}` for a replay it
recorded (docs/decisions/0016): the function runs that row's request, with progress and the
result written on the row. A recorded replay larger than one invocation hands off near the
time limit and invokes this function again, asynchronously, with `{"replay_id": ..., "run":
n}` (docs/decisions/0021); only the run it was handed off to claims it. The console's
synchronous requests cannot continue: they answer `stopped_early` with `not_reached`.

It restores from the archive too (docs/decisions/0051): `{"restore": {"tenant_id", "since",
"until", "reason", "requested_by"[, "dry_run"]}}` from the console (answered with the counts),
and `{"restore_id": "rst_..."}` for a restore the management API recorded."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aws_lambda_powertools.metrics import MetricUnit
from aws_lambda_powertools.utilities.typing import LambdaContext

from hookline.db import get_database
from hookline.errors import ArchiveUnavailable, DatabaseUnavailable, HooklineError, NotFound
from hookline.observability import flush_traces, logger, metrics
from hookline.replay import run_recorded_replay, run_replay
from hookline.restore_requests import parse_restore, restore_now, run_recorded_restore
from hookline.runtime import (
    archive_store,
    delivery_queues,
    replay_invoker,
    replay_options,
    restore_options,
)
from hookline.settings import get_settings

# Stop starting new batches when less than this is left of the invocation (the summary and
# the audit entry still have to be written).
RESERVE_MS = 15_000


def error_answer(err: Exception, request_id: str) -> dict[str, Any]:
    """A failure as the caller sees it: a kind and a message, no stack trace, no secret."""
    if isinstance(err, NotFound):
        kind, message = "not_found", str(err)
    elif isinstance(err, DatabaseUnavailable):
        kind, message = "unavailable", f"{err}; nothing was replayed, try again later"
    elif isinstance(err, ArchiveUnavailable):
        kind, message = "unavailable", str(err)
    elif isinstance(err, HooklineError):
        kind, message = "bad_request", str(err)
    else:
        kind = "internal"
        message = (
            f"the replay failed ({type(err).__name__}); see the function's logs for {request_id}"
        )
    return {"ok": False, "error": {"type": kind, "message": message}}


@logger.inject_lambda_context(log_event=True)  # the request is the audit trail's too
@flush_traces
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Validate the request, replay, and answer with the summary."""
    settings = get_settings()
    keep_going = lambda: context.get_remaining_time_in_millis() > RESERVE_MS  # noqa: E731
    if "replay_id" in event and set(event) <= {"replay_id", "run"}:
        return run_recorded(event, keep_going, context)
    if set(event) in ({"restore"}, {"restore_id"}):
        return restore(event, context)
    try:
        summary = run_replay(
            get_database(),
            delivery_queues(settings),
            event,
            replay_options(settings),
            keep_going=keep_going,
        )
    except HooklineError as err:
        logger.warning("replay refused", extra={"error": str(err)})
        return error_answer(err, context.aws_request_id)
    except Exception as err:
        logger.exception("replay failed")
        return error_answer(err, context.aws_request_id)
    metrics.add_metric(name="ReplayEnqueued", unit=MetricUnit.Count, value=summary["enqueued"])
    logger.info("replay done", extra={"summary": summary})
    return {"ok": True, **summary}


def run_recorded(
    event: dict[str, Any], keep_going: Callable[[], bool], context: LambdaContext
) -> dict[str, Any]:
    """Run (one run of) a replay the API recorded; its row holds the request, where the
    previous run stopped, progress and result. Near the time limit it invokes this function
    (by its own name) for the next run."""
    request_id = context.aws_request_id
    replay_id, run = event["replay_id"], event.get("run", 1)
    if not isinstance(replay_id, str) or not replay_id.startswith("rpl_"):
        return error_answer(HooklineError("replay_id must be a replay id (rpl_...)"), request_id)
    if isinstance(run, bool) or not isinstance(run, int) or run < 1:
        return error_answer(HooklineError("run must be a whole number from 1"), request_id)
    settings = get_settings()
    logger.append_keys(replay_id=replay_id, run=run)
    try:
        summary = run_recorded_replay(
            get_database(),
            delivery_queues(settings),
            replay_options(settings),
            replay_id,
            run=run,
            keep_going=keep_going,
            continue_elsewhere=replay_invoker(settings, context.function_name),
        )
    except Exception as err:  # the row turns failed when its heartbeat stops
        logger.exception("recorded replay failed")
        return error_answer(err, request_id)
    if summary is None:
        return {"ok": True, "replay_id": replay_id, "run": run, "ran": False}
    if "error" not in summary and not summary.get("continued"):  # counted once, at the end
        metrics.add_metric(name="ReplayEnqueued", unit=MetricUnit.Count, value=summary["enqueued"])
    logger.info("recorded replay done", extra={"summary": summary})
    return {"ok": "error" not in summary, "replay_id": replay_id, "ran": True, **summary}


def restore(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """A restore from the archive: the console's request, or one the API recorded."""
    settings = get_settings()
    db = get_database()
    archive, options = archive_store(settings), restore_options(settings, db)
    try:
        if "restore_id" in event:
            restore_id = event["restore_id"]
            if not isinstance(restore_id, str) or not restore_id.startswith("rst_"):
                raise HooklineError("restore_id must be a restore id (rst_...)")
            logger.append_keys(restore_id=restore_id)
            result = run_recorded_restore(db, archive, restore_id, options)
            if result is None:
                return {"ok": True, "restore_id": restore_id, "ran": False}
            logger.info("recorded restore done", extra={"result": result})
            return {"ok": "error" not in result, "restore_id": restore_id, "ran": True, **result}
        result = restore_now(db, archive, parse_restore(event["restore"]), options)
    except HooklineError as err:
        logger.warning("restore refused or failed", extra={"error": str(err)})
        return error_answer(err, context.aws_request_id)
    except Exception as err:
        logger.exception("restore failed")
        return error_answer(err, context.aws_request_id)
    logger.info("restore done", extra={"result": result})
    return {"ok": True, **result}
