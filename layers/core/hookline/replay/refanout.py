"""Refanout: re-create, from the ledger, the deliveries the selected events are missing, and
send those (never touching the ones that exist)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from hookline.replay.context import Run, chunks
from hookline.replay.result import Resume
from hookline.replay.sending import send_paced
from hookline.repositories import replay as repo


def refanout(run: Run, events: Sequence[str], resume: Resume | None) -> None:
    """Re-create the events' missing deliveries and send them, a chunk of events at a time:
    each chunk's deliveries are created, held back for the time this replay needs to send them
    at its pace (if it dies first the fan-out sends them when the hold ends), then sent. A
    stop between chunks resumes after the last chunk's last event, one within a chunk also
    with that chunk's unsent deliveries (`pending`)."""
    request, result, options = run.request, run.result, run.options
    endpoint_id = request.endpoint_id if request.selector == "endpoint" else None
    if resume is None:
        pairs = missing = 0
        for chunk in chunks(events, options.event_batch):
            with run.db.connection() as conn:
                p, m = repo.count_missing(conn, chunk, endpoint_id)
            pairs, missing = pairs + p, missing + m
        result.selected = pairs  # the total to show; the count as created replaces it
        if request.dry_run:
            result.would_enqueue = missing
            result.created = 0
            result.skip("delivery_exists", pairs - missing)
            run.report()
            return
        result.created = 0
        run.report()
    after = resume.after if resume is not None else None
    pending = list(resume.pending) if resume is not None else []
    if pending:
        stopped = send_paced(run, pending)
        if stopped is not None:
            result.resume = Resume(after, tuple(pending[stopped:]), len(events))
            return
    for index in range(0, len(events), options.event_batch):
        chunk = events[index : index + options.event_batch]
        if not run.keep_going():
            result.stopped_early = True
            result.resume = Resume(after, (), len(events) - index)
            return
        with run.db.connection() as conn:
            p, m = repo.count_missing(conn, chunk, endpoint_id)
        # Held back long enough for this replay to send them at its pace.
        hold = options.refanout_hold
        if request.max_per_second:
            hold += timedelta(seconds=m / request.max_per_second)
        with run.db.connection() as conn:
            p, created, held = repo.create_missing(
                conn, chunk, endpoint_id, deadline=options.deadline, hold=hold
            )
        result.created = (result.created or 0) + len(created)
        result.skip("delivery_exists", p - len(created))
        # An ordered endpoint's go out through their key's gate (decision 0069).
        result.enqueued += len(held)
        result.sample([c for c in created if c in held])
        to_send = [c for c in created if c not in held]
        after = chunk[-1]
        stopped = send_paced(run, to_send)
        if stopped is not None:
            rest = len(events) - index - len(chunk)
            result.resume = Resume(after, tuple(to_send[stopped:]), rest)
            return
    result.selected = result.processed  # what was there when each chunk was created
