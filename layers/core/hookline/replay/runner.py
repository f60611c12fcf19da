"""The runner: carries out one replay request — selection, then sending, refanout or redrive —
and files its one audit entry (a run that continues elsewhere leaves that to the last run)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from hookline.db import Database
from hookline.errors import HooklineError
from hookline.queues import DeliveryQueues
from hookline.replay.context import Progress, ReplayOptions, Run
from hookline.replay.redrive import redrive
from hookline.replay.refanout import refanout
from hookline.replay.request import ReplayRequest, parse_request
from hookline.replay.result import ReplayResult, Resume
from hookline.replay.selection import (
    rest_of_deliveries,
    rest_of_events,
    select_deliveries,
    select_events,
)
from hookline.replay.sending import replay_deliveries
from hookline.repositories import audit as audit_repo

log = logging.getLogger(__name__)


class Replayer:
    """Runs replay requests; holds its collaborators, no state between runs."""

    def __init__(
        self,
        db: Database,
        queues: DeliveryQueues,
        options: ReplayOptions,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.db = db
        self.queues = queues
        self.options = options
        self.sleep = sleep
        self.monotonic = monotonic

    def run(
        self,
        request: ReplayRequest,
        *,
        keep_going: Callable[[], bool] = lambda: True,
        progress: Progress | None = None,
        continues: bool = False,
        carried: ReplayResult | None = None,
        resume: Resume | None = None,
    ) -> ReplayResult:
        """Carry out a request and audit it. A failure part-way is audited with what was
        done so far (`progress` has seen that result, with its audit id), then raised.

        With `continues`, a run stopped by `keep_going` is not audited: it returns with
        `resume` set, and the caller runs the rest later with `carried` (this result) and
        `resume`; counts go on from the carried result, and the run that finishes audits the
        whole replay once."""
        if carried is not None and resume is not None:
            result = replace(carried, stopped_early=False, not_reached=0, resume=None)
        else:
            result, resume = ReplayResult(request.selector, request.dry_run), None

        def report() -> None:
            if progress is not None:
                progress(result)

        run = Run(
            self.db, self.queues, self.options, request, result, keep_going, report,
            sleep=self.sleep, monotonic=self.monotonic,
        )  # fmt: skip
        began, before = self.monotonic(), result.seconds
        report()
        try:
            _dispatch(run, resume)
        except BaseException as err:
            result.error = str(err) if isinstance(err, HooklineError) else type(err).__name__
            result.seconds = before + self.monotonic() - began
            try:
                self._audit(request, result)
            except Exception:  # the original error matters more; the log keeps this one
                log.exception("could not write the audit entry of a failed replay")
            raise
        result.seconds = before + self.monotonic() - began
        if result.stopped_early:
            if continues and result.resume is not None:
                return result  # the next run carries on; it audits the whole replay
            result.not_reached = result.selected - result.processed
            left = (
                f": {result.not_reached} not reached were left as they were"
                if result.not_reached
                else ""
            )
            result.notes.append(
                f"stopped before the time ran out{left}; run the same replay again to continue"
            )
        result.resume = None
        self._audit(request, result)
        return result

    def _audit(self, request: ReplayRequest, result: ReplayResult) -> None:
        """File the run under its requester; the entry's id lands in `result.audit_id`."""
        object_type, object_id = request.audit_object()
        with self.db.connection() as conn:
            result.audit_id = audit_repo.write_audit(
                conn,
                actor=request.requested_by,
                action="replay",
                object_type=object_type,
                object_id=object_id,
                params={
                    "reason": request.reason,
                    "request": request.parameters(),
                    "result": {k: v for k, v in result.as_dict().items() if k != "audit_id"},
                },
            )


def _dispatch(run: Run, resume: Resume | None) -> None:
    """Select and act: redrive, refanout, or replay the selected deliveries."""
    request, result = run.request, run.result
    if request.selector == "redrive_dlq":
        # The DLQ shrinks as it is moved: a next run just carries on (up to the limit).
        assert request.redrive_group is not None
        redrive(run, request.redrive_group)
        if result.stopped_early:
            result.resume = Resume()
    elif request.refanout:
        events = select_events(run) if resume is None else rest_of_events(run, resume)
        refanout(run, events, resume)
    else:
        if resume is None:
            ids = select_deliveries(run)
            result.selected += len(ids)
        else:
            ids = rest_of_deliveries(run, resume)
            # Changed meanwhile (no longer in the selected states): nothing to do for them.
            result.skip("no_longer_selected", resume.remaining - len(ids))
        run.report()
        stopped = replay_deliveries(run, ids)
        if stopped is not None:
            after = ids[stopped - 1] if stopped else (resume.after if resume else None)
            result.resume = Resume(after=after, remaining=len(ids) - stopped)


def run_replay(
    db: Database,
    queues: DeliveryQueues,
    doc: Any,
    options: ReplayOptions,
    *,
    keep_going: Callable[[], bool] = lambda: True,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Validate a request document, carry it out, and return the summary (the handler's and
    the CLI's one call). Raises BadRequest, or NotFound for an unknown endpoint."""
    request = parse_request(doc, groups=queues.config.group_names)
    replayer = Replayer(db, queues, options)
    return replayer.run(request, keep_going=keep_going, progress=progress).as_dict()
