"""Selection: which deliveries (or, for a refanout, which ledger events) a request picks, in
a stable order, so that a run stopped part-way resumes after the last id it dealt with."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookline.replay.context import Run
from hookline.replay.result import SAMPLE_SIZE, ReplayResult, Resume
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import replay as repo


def select_deliveries(run: Run) -> list[str]:
    """The request's deliveries, oldest first, at most its limit (`truncated` if more)."""
    request, result = run.request, run.result
    limit = request.limit + 1  # one more tells that there were more
    with run.db.connection() as conn:
        if request.selector == "delivery_ids":
            ids = repo.deliveries_by_ids(conn, request.delivery_ids, limit=limit)
            missing = [i for i in request.delivery_ids if i not in set(ids)]
            if missing:
                # Counted as selected-and-skipped, so the totals add up to what was asked.
                result.skip("not_found", len(missing))
                result.selected += len(missing)
                result.notes.append("not found: " + ", ".join(missing[:SAMPLE_SIZE]))
        elif request.selector == "event_ids":
            note_unknown_events(conn, request.event_ids, result)
            ids = repo.deliveries_by_events(conn, request.event_ids, request.states, limit=limit)
        elif request.selector == "endpoint":
            assert request.endpoint_id is not None and request.window is not None
            endpoint_repo.get_endpoint(conn, request.endpoint_id)  # NotFound, clearly
            ids = repo.deliveries_by_endpoint(
                conn, request.endpoint_id, request.window, request.states, limit=limit
            )
        else:
            assert request.window is not None
            ids = repo.deliveries_by_window(conn, request.window, request.states, limit=limit)
    if len(ids) > request.limit:
        ids = ids[: request.limit]
        result.truncated = True
        result.notes.append(
            f"more than {request.limit} deliveries matched; only the oldest {request.limit} "
            "were taken: run again, or raise limit"
        )
    return ids


def rest_of_deliveries(run: Run, resume: Resume) -> list[str]:
    """The selection after `resume.after`, at most what was left of it."""
    request = run.request
    limit, after = resume.remaining, resume.after
    if limit <= 0:
        return []
    with run.db.connection() as conn:
        if request.selector == "delivery_ids":
            return repo.deliveries_by_ids(conn, request.delivery_ids, limit=limit, after=after)
        if request.selector == "event_ids":
            return repo.deliveries_by_events(
                conn, request.event_ids, request.states, limit=limit, after=after
            )
        assert request.window is not None
        if request.selector == "endpoint":
            assert request.endpoint_id is not None
            return repo.deliveries_by_endpoint(
                conn, request.endpoint_id, request.window, request.states, limit=limit,
                after=after,
            )  # fmt: skip
        return repo.deliveries_by_window(
            conn, request.window, request.states, limit=limit, after=after
        )


def select_events(run: Run) -> list[str]:
    """A refanout's ledger events, oldest first, at most the request's limit."""
    request, result = run.request, run.result
    limit = request.limit + 1
    with run.db.connection() as conn:
        if request.selector == "event_ids":
            known = note_unknown_events(conn, request.event_ids, result)
            events = [e for e in request.event_ids if e in known]
        elif request.selector == "endpoint":
            assert request.endpoint_id is not None and request.window is not None
            endpoint = endpoint_repo.get_endpoint(conn, request.endpoint_id)
            if not endpoint["enabled"]:
                result.notes.append(
                    f"endpoint {request.endpoint_id} is disabled: nothing to create"
                )
            events = repo.events_for_endpoint(
                conn, request.endpoint_id, request.window, limit=limit
            )
        else:
            assert request.window is not None
            events = repo.events_by_window(conn, request.window, limit=limit)
    if len(events) > request.limit:
        events = events[: request.limit]
        result.truncated = True
        result.notes.append(
            f"more than {request.limit} events matched; only the oldest {request.limit} "
            "were taken: run again (existing deliveries are left alone), or raise limit"
        )
    result.events = len(events)
    result.sample_event_ids = events[:SAMPLE_SIZE]
    return events


def rest_of_events(run: Run, resume: Resume) -> list[str]:
    """The refanout's events after `resume.after`, at most what was left of them."""
    request = run.request
    limit, after = resume.remaining, resume.after
    if limit <= 0:
        return []
    with run.db.connection() as conn:
        if request.selector == "event_ids":
            known = repo.known_events(conn, request.event_ids)
            events = [e for e in request.event_ids if e in known]
            if after in events:
                events = events[events.index(after) + 1 :]
            return events[:limit]
        assert request.window is not None
        if request.selector == "endpoint":
            assert request.endpoint_id is not None
            return repo.events_for_endpoint(
                conn, request.endpoint_id, request.window, limit=limit, after=after
            )
        return repo.events_by_window(conn, request.window, limit=limit, after=after)


def note_unknown_events(conn: Any, event_ids: Sequence[str], result: ReplayResult) -> set[str]:
    """Those of `event_ids` in the ledger; the others are noted on the result."""
    known = repo.known_events(conn, event_ids)
    unknown = [e for e in event_ids if e not in known]
    if unknown:
        result.notes.append(
            f"{len(unknown)} event id(s) not in the ledger: " + ", ".join(unknown[:SAMPLE_SIZE])
        )
    return known
