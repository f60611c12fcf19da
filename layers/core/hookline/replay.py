"""Replay: an operator re-delivers what one selector picks, at a chosen pace, audited.

Selectors (exactly one):

* ``delivery_ids`` — those deliveries;
* ``event_ids`` — every delivery of those events (``states`` narrows);
* ``endpoint_id`` + ``since`` [+ ``until``] — deliveries to one endpoint of events received
  in the window (``states``, default failed and dead);
* ``since`` [+ ``until``] [+ ``tenant_id``] [+ ``event_type``] — deliveries of events
  received in the window (``states``, default failed and dead);
* any event selector with ``refanout: true`` — re-create the selected events' missing
  deliveries from the ledger and send those (never touching the ones that exist);
* ``redrive_dlq: <group>`` — move a tenant group's dead-letter queue back to its queue.

A replayed delivery keeps its id, which is its ``webhook-id``, so receivers can deduplicate.
It starts a new run: queued with a new generation (any older queue message of it becomes
stale), a fresh deadline and retry schedule. One still in flight is skipped, with the reason.
Every replay, dry runs and failures included, writes one audit entry.

A caller that shows progress (the API's replay runs, docs/decisions/0016) passes `progress`:
it is called with the live ReplayResult when the run starts, once the selection is known
(`selected` is then the total) and after every batch; it must be quick (throttle there).

A run that `keep_going` stops (its function's time is running out) sets `result.resume`:
where a later run carries on. Selections are walked in a stable order, so that is the last
id dealt with (docs/decisions/0021). A caller that continues (`continues=True`, the API's
recorded replays) stores it with the summary so far and starts the next run with both; the
audit entry is written once, by the run that finishes. A caller that does not (the console's
and `--function`'s synchronous runs) gets `stopped_early` and `not_reached` instead.
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest, HooklineError
from hookline.queues import BATCH, DeliveryMessage, DeliveryQueues
from hookline.repositories import audit as audit_repo
from hookline.repositories import deliveries as delivery_repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import replay as repo
from hookline.repositories.replay import Window

log = logging.getLogger(__name__)

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead")
WINDOW_DEFAULT_STATES = ("failed", "dead")  # what an operator replays a window for
SAMPLE_SIZE = 10
DEFAULT_LIMIT = 10_000
MAX_LIMIT = 100_000

SELECTOR_FIELDS = (
    "delivery_ids", "event_ids", "endpoint_id", "tenant_id", "event_type", "since", "until",
    "states", "refanout", "redrive_dlq",
)  # fmt: skip
OPTION_FIELDS = ("dry_run", "max_per_second", "limit", "requested_by", "reason")
FIELDS = SELECTOR_FIELDS + OPTION_FIELDS
HOW_TO_SELECT = (
    "say what to replay with one selector: delivery_ids, event_ids, endpoint_id + since, "
    "since (optionally with tenant_id and event_type), or redrive_dlq; "
    "event selectors also take refanout: true"
)
_RELATIVE = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


# -- the request ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayRequest:
    """A validated replay request. `selector` is one of delivery_ids, event_ids, endpoint,
    window, redrive_dlq."""

    selector: str
    requested_by: str
    reason: str
    delivery_ids: tuple[str, ...] = ()
    event_ids: tuple[str, ...] = ()
    endpoint_id: str | None = None
    window: Window | None = None
    states: tuple[str, ...] = ()
    refanout: bool = False
    redrive_group: str | None = None
    dry_run: bool = False
    max_per_second: float | None = None
    limit: int = DEFAULT_LIMIT

    def parameters(self) -> dict[str, Any]:
        """The request as recorded in the audit log (JSON types, defaults filled in)."""
        params: dict[str, Any] = {"selector": self.selector}
        if self.delivery_ids:
            params["delivery_ids"] = list(self.delivery_ids)
        if self.event_ids:
            params["event_ids"] = list(self.event_ids)
        if self.endpoint_id:
            params["endpoint_id"] = self.endpoint_id
        if self.window is not None:
            params["since"] = self.window.since.isoformat()
            params["until"] = self.window.until.isoformat()
            if self.window.tenant_id:
                params["tenant_id"] = self.window.tenant_id
            if self.window.types:
                params["event_type"] = self.window.types[0]
        if self.states:
            params["states"] = list(self.states)
        if self.redrive_group:
            params["redrive_dlq"] = self.redrive_group
        params.update(
            refanout=self.refanout,
            dry_run=self.dry_run,
            max_per_second=self.max_per_second,
            limit=self.limit,
        )
        return params

    def audit_object(self) -> tuple[str, str | None]:
        """(object type, object id) the audit entry is filed under."""
        if self.selector == "redrive_dlq":
            return "dlq", self.redrive_group
        if self.selector == "endpoint":
            return "endpoint", self.endpoint_id
        if self.selector == "window" and self.window is not None and self.window.tenant_id:
            return "tenant", self.window.tenant_id
        if self.selector == "delivery_ids" and len(self.delivery_ids) == 1:
            return "delivery", self.delivery_ids[0]
        if self.selector == "event_ids" and len(self.event_ids) == 1:
            return "event", self.event_ids[0]
        return "deliveries", None


def parse_instant(value: Any, name: str, now: datetime) -> datetime:
    """An ISO 8601 time (UTC when it has no offset) or a duration ago: `90m`, `2h`, `3d`."""
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"{name} must be an ISO 8601 time or a duration ago such as 2h")
    text = value.strip()
    relative = _RELATIVE.match(text)
    if relative:
        return now - timedelta(**{_UNITS[relative[2]]: float(relative[1])})
    if text == "now":
        return now
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise BadRequest(
            f"{name} {text!r} is not a time: use ISO 8601 (2024-05-01T12:00:00Z) "
            "or a duration ago (30m, 2h, 7d)"
        ) from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def parse_request(doc: Any, *, groups: Sequence[str], now: datetime | None = None) -> ReplayRequest:
    """Validate a replay request (a console test event, or what the CLI built).

    Raises BadRequest with a message an operator can act on: unknown fields, no selector or
    two mixed, a bad window, unknown states or groups, missing requested_by or reason.
    """
    now = now or utcnow()
    if not isinstance(doc, Mapping):
        raise BadRequest("a replay request is a JSON object; " + HOW_TO_SELECT)
    unknown = sorted(set(doc) - set(FIELDS))
    if unknown:
        raise BadRequest(
            f"unknown field(s) {', '.join(unknown)}; known fields: {', '.join(FIELDS)}"
        )
    requested_by = _text(doc.get("requested_by"))
    reason = _text(doc.get("reason"))
    if not requested_by or not reason:
        missing = [n for n, v in (("requested_by", requested_by), ("reason", reason)) if not v]
        raise BadRequest(
            f"refused: {' and '.join(missing)} missing. Every replay names who asks for it "
            "(requested_by) and why (reason); both go to the audit log"
        )
    base = ReplayRequest(
        selector="",
        requested_by=requested_by[:200],
        reason=reason[:2000],
        dry_run=_flag(doc, "dry_run"),
        max_per_second=_rate(doc.get("max_per_second")),
        limit=_limit(doc.get("limit")),
    )
    given = [f for f in SELECTOR_FIELDS if doc.get(f) not in (None, False)]
    refanout = _flag(doc, "refanout")

    if "redrive_dlq" in given:
        _only(given, "redrive_dlq", (), "redrive_dlq moves a whole dead-letter queue")
        group = doc["redrive_dlq"]
        if not isinstance(group, str) or group not in groups:
            raise BadRequest(f"redrive_dlq: unknown tenant group {group!r}; known: "
                             + ", ".join(groups))  # fmt: skip
        return replace(base, selector="redrive_dlq", redrive_group=group)

    if "delivery_ids" in given:
        _only(given, "delivery_ids", (), "delivery_ids names the deliveries themselves")
        ids = _id_list(doc, "delivery_ids", base.limit)
        return replace(base, selector="delivery_ids", delivery_ids=ids)

    states_given = "states" in given
    if refanout and states_given:
        raise BadRequest("refanout creates the deliveries that are missing, so it takes no states")

    if "event_ids" in given:
        _only(given, "event_ids", ("states", "refanout"), "event_ids names the events")
        ids = _id_list(doc, "event_ids", base.limit)
        states = _states(doc) if states_given else STATES
        return replace(
            base, selector="event_ids", event_ids=ids, states=() if refanout else states,
            refanout=refanout,
        )  # fmt: skip

    if "endpoint_id" in given:
        _only(
            given, "endpoint_id", ("since", "until", "states", "refanout"),
            "endpoint_id selects by endpoint and window (the tenant is the endpoint's)",
        )  # fmt: skip
        endpoint_id = doc["endpoint_id"]
        if not isinstance(endpoint_id, str) or not endpoint_id.strip():
            raise BadRequest("endpoint_id must be an endpoint id")
        window = _window(doc, now, "endpoint_id")
        states = _states(doc) if states_given else WINDOW_DEFAULT_STATES
        return replace(
            base, selector="endpoint", endpoint_id=endpoint_id.strip(), window=window,
            states=() if refanout else states, refanout=refanout,
        )  # fmt: skip

    if given and set(given) <= {"since", "until", "tenant_id", "event_type", "states", "refanout"}:
        window = _window(doc, now, "tenant_id/event_type")
        tenant_id = doc.get("tenant_id")
        if tenant_id is not None and (not isinstance(tenant_id, str) or not tenant_id.strip()):
            raise BadRequest("tenant_id must be a tenant id")
        event_type = doc.get("event_type")
        if event_type is not None and (not isinstance(event_type, str) or not event_type):
            raise BadRequest("event_type must be an event type, `*` wildcards allowed")
        window = Window(
            window.since,
            window.until,
            tenant_id.strip() if tenant_id else None,
            (event_type,) if event_type else (),
        )
        states = _states(doc) if states_given else WINDOW_DEFAULT_STATES
        return replace(
            base, selector="window", window=window, states=() if refanout else states,
            refanout=refanout,
        )  # fmt: skip

    raise BadRequest(HOW_TO_SELECT)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _flag(doc: Mapping[str, Any], name: str) -> bool:
    value = doc.get(name, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise BadRequest(f"{name} must be true or false")
    return value


def _rate(value: Any) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise BadRequest("max_per_second must be a positive number (deliveries per second)")
    if not math.isfinite(value) or value > 10_000:
        raise BadRequest("max_per_second must be at most 10000; leave it out for no limit")
    return float(value)


def _limit(value: Any) -> int:
    if value is None:
        return DEFAULT_LIMIT
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIMIT:
        raise BadRequest(f"limit must be a whole number from 1 to {MAX_LIMIT}")
    return value


def _only(given: Sequence[str], selector: str, allowed: Sequence[str], why: str) -> None:
    extra = [f for f in given if f != selector and f not in allowed]
    if extra:
        raise BadRequest(
            f"choose one selector: {selector} cannot be combined with {', '.join(extra)} ({why})"
        )


def _id_list(doc: Mapping[str, Any], name: str, limit: int) -> tuple[str, ...]:
    value = doc[name]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise BadRequest(f"{name} must be a non-empty list of ids")
    if not all(isinstance(v, str) and v.strip() for v in value):
        raise BadRequest(f"{name} must be a list of id strings")
    ids = tuple(dict.fromkeys(v.strip() for v in value))
    if len(ids) > limit:
        raise BadRequest(f"{name}: {len(ids)} ids is more than the limit ({limit})")
    return ids


def _states(doc: Mapping[str, Any]) -> tuple[str, ...]:
    value = doc["states"]
    if isinstance(value, str):
        value = [s.strip() for s in value.split(",") if s.strip()]
    if not isinstance(value, list) or not value or not all(isinstance(s, str) for s in value):
        raise BadRequest(f"states must be a non-empty list of: {', '.join(STATES)}")
    unknown = [s for s in value if s not in STATES]
    if unknown:
        raise BadRequest(f"unknown state(s) {', '.join(unknown)}; known: {', '.join(STATES)}")
    return tuple(dict.fromkeys(value))


def _window(doc: Mapping[str, Any], now: datetime, selector: str) -> Window:
    if doc.get("since") is None:
        raise BadRequest(
            f"{selector} needs a window: since (and optionally until), "
            "e.g. since: 2024-05-01T00:00:00Z or since: 6h"
        )
    since = parse_instant(doc["since"], "since", now)
    until = now if doc.get("until") is None else parse_instant(doc["until"], "until", now)
    if since >= until:
        raise BadRequest(
            f"bad window: since ({since.isoformat()}) must be before until ({until.isoformat()})"
        )
    if since > now:
        raise BadRequest(f"bad window: since ({since.isoformat()}) is in the future")
    return Window(since, until)


# -- the run ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ReplayOptions:
    """Deadlines, leases and batch sizes of a replay."""

    deadline: timedelta = timedelta(hours=72)  # of each replayed delivery, from now
    queued_lease: timedelta = timedelta(minutes=15)  # after it, reconcile re-enqueues
    batch_size: int = 100  # deliveries reset per statement when unpaced
    event_batch: int = 500  # events per refanout statement
    refanout_hold: timedelta = timedelta(minutes=5)  # margin before the fan-out takes over
    redrive_visibility_seconds: int = 60  # a crashed redrive's messages reappear in the DLQ


@dataclass(frozen=True)
class Resume:
    """Where a replay stopped by its time limit carries on in its next run."""

    after: str | None = None  # the last delivery (refanout: event) id dealt with; None: none yet
    pending: tuple[str, ...] = ()  # refanout: deliveries created for events up to `after`, unsent
    remaining: int = 0  # deliveries (refanout: events) of the selection after `after`

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {"after": self.after, "pending": list(self.pending), "remaining": self.remaining}

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> Resume:
        """The inverse of `as_dict`."""
        return cls(doc.get("after"), tuple(doc.get("pending") or ()), int(doc.get("remaining", 0)))


@dataclass
class ReplayResult:
    """What a replay did (or, in a dry run, would do).

    `selected` = `enqueued` (or `would_enqueue`) + the sum of `skipped` + `not_reached`.
    """

    selector: str
    dry_run: bool
    selected: int = 0
    enqueued: int = 0
    would_enqueue: int | None = None
    events: int | None = None  # refanout: ledger events selected
    created: int | None = None  # refanout: deliveries re-created
    skipped: dict[str, int] = field(default_factory=dict)
    sample_ids: list[str] = field(default_factory=list)
    sample_event_ids: list[str] = field(default_factory=list)
    truncated: bool = False  # more matched than the limit
    stopped_early: bool = False  # time ran out (Lambda); `not_reached` were left as they were
    not_reached: int = 0
    notes: list[str] = field(default_factory=list)
    error: str | None = None
    audit_id: int | None = None
    seconds: float = 0.0
    resume: Resume | None = None  # set when stopped early: where a next run would carry on

    @classmethod
    def from_summary(cls, summary: Mapping[str, Any]) -> ReplayResult:
        """The result a summary (`as_dict`) describes: a continued replay's counts so far."""
        return cls(
            selector=summary["selector"],
            dry_run=bool(summary["dry_run"]),
            selected=int(summary["selected"]),
            enqueued=int(summary["enqueued"]),
            would_enqueue=summary.get("would_enqueue"),
            events=summary.get("events"),
            created=summary.get("created"),
            skipped=dict(summary.get("skipped") or {}),
            sample_ids=list(summary.get("sample_ids") or []),
            sample_event_ids=list(summary.get("sample_event_ids") or []),
            truncated=bool(summary.get("truncated")),
            notes=list(summary.get("notes") or []),
            audit_id=summary.get("audit_id"),
            seconds=float(summary.get("seconds") or 0.0),
        )

    @property
    def processed(self) -> int:
        """How many selected items have been dealt with so far (sent, skipped, or judged in a
        dry run); equals `selected` less `not_reached` at the end."""
        return self.enqueued + sum(self.skipped.values()) + (self.would_enqueue or 0)

    def skip(self, reason: str, count: int = 1) -> None:
        """Count `count` items skipped for `reason`."""
        if count:
            self.skipped[reason] = self.skipped.get(reason, 0) + count

    def sample(self, ids: Sequence[str]) -> None:
        """Keep the first few ids as a sample."""
        room = SAMPLE_SIZE - len(self.sample_ids)
        if room > 0:
            self.sample_ids.extend(ids[:room])

    def as_dict(self) -> dict[str, Any]:
        """The summary (fields that do not apply are left out)."""
        out: dict[str, Any] = {
            "selector": self.selector,
            "dry_run": self.dry_run,
            "selected": self.selected,
            "enqueued": self.enqueued,
        }
        for name in ("would_enqueue", "events", "created"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        out["skipped"] = dict(sorted(self.skipped.items()))
        out["sample_ids"] = list(self.sample_ids)
        if self.sample_event_ids:
            out["sample_event_ids"] = list(self.sample_event_ids)
        out["truncated"] = self.truncated
        out["stopped_early"] = self.stopped_early
        if self.stopped_early:
            out["not_reached"] = self.not_reached
        if self.notes:
            out["notes"] = list(self.notes)
        if self.error:
            out["error"] = self.error
        out["audit_id"] = self.audit_id
        out["seconds"] = round(self.seconds, 3)
        return out


class Pacer:
    """Spaces sends so that at most `rate` items per second go out (None: no limit)."""

    def __init__(
        self,
        rate: float | None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.rate = rate
        self.sleep = sleep
        self.monotonic = monotonic
        self.started: float | None = None
        self.sent = 0

    def batch(self, unpaced: int) -> int:
        """How many items to send at once: one at a time at slow rates, so the spacing is
        even, up to a fifth of a second's worth at faster ones."""
        if self.rate is None:
            return unpaced
        return max(1, min(unpaced, int(self.rate / 5)))

    def wait(self) -> None:
        """Sleep until the next item may go out."""
        now = self.monotonic()
        if self.started is None:
            self.started = now
        if self.rate is None:
            return
        due = self.started + self.sent / self.rate
        if due > now:
            self.sleep(due - now)

    def done(self, count: int) -> None:
        """`count` items went out."""
        self.sent += count


Progress = Callable[["ReplayResult"], None]


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

        began, before = self.monotonic(), result.seconds
        report()
        try:
            self._dispatch(request, result, keep_going, report, resume)
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

    def _dispatch(
        self,
        request: ReplayRequest,
        result: ReplayResult,
        keep_going: Callable[[], bool],
        report: Callable[[], None],
        resume: Resume | None,
    ) -> None:
        if request.selector == "redrive_dlq":
            # The DLQ shrinks as it is moved: a next run just carries on (up to the limit).
            assert request.redrive_group is not None
            self._redrive(request, request.redrive_group, result, keep_going, report)
            if result.stopped_early:
                result.resume = Resume()
        elif request.refanout:
            if resume is None:
                events = self._select_events(request, result)
            else:
                events = self._rest_of_events(request, resume)
            self._refanout(request, events, result, keep_going, report, resume)
        else:
            if resume is None:
                ids = self._select_deliveries(request, result)
                result.selected += len(ids)
            else:
                ids = self._rest_of_deliveries(request, resume)
                # Changed meanwhile (no longer in the selected states): nothing to do for them.
                result.skip("no_longer_selected", resume.remaining - len(ids))
            report()
            stopped = self._replay(request, ids, result, keep_going, report)
            if stopped is not None:
                after = ids[stopped - 1] if stopped else (resume.after if resume else None)
                result.resume = Resume(after=after, remaining=len(ids) - stopped)

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

    # -- selecting ---------------------------------------------------------------------------

    def _select_deliveries(self, request: ReplayRequest, result: ReplayResult) -> list[str]:
        limit = request.limit + 1  # one more tells that there were more
        with self.db.connection() as conn:
            if request.selector == "delivery_ids":
                ids = repo.deliveries_by_ids(conn, request.delivery_ids, limit=limit)
                missing = [i for i in request.delivery_ids if i not in set(ids)]
                if missing:
                    # Counted as selected-and-skipped, so the totals add up to what was asked.
                    result.skip("not_found", len(missing))
                    result.selected += len(missing)
                    result.notes.append("not found: " + ", ".join(missing[:SAMPLE_SIZE]))
            elif request.selector == "event_ids":
                self._note_unknown_events(conn, request.event_ids, result)
                ids = repo.deliveries_by_events(
                    conn, request.event_ids, request.states, limit=limit
                )
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

    def _rest_of_deliveries(self, request: ReplayRequest, resume: Resume) -> list[str]:
        """The selection after `resume.after`, at most what was left of it."""
        limit, after = resume.remaining, resume.after
        if limit <= 0:
            return []
        with self.db.connection() as conn:
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

    def _rest_of_events(self, request: ReplayRequest, resume: Resume) -> list[str]:
        """The refanout's events after `resume.after`, at most what was left of them."""
        limit, after = resume.remaining, resume.after
        if limit <= 0:
            return []
        with self.db.connection() as conn:
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

    def _select_events(self, request: ReplayRequest, result: ReplayResult) -> list[str]:
        limit = request.limit + 1
        with self.db.connection() as conn:
            if request.selector == "event_ids":
                known = self._note_unknown_events(conn, request.event_ids, result)
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

    @staticmethod
    def _note_unknown_events(conn: Any, event_ids: Sequence[str], result: ReplayResult) -> set[str]:
        known = repo.known_events(conn, event_ids)
        unknown = [e for e in event_ids if e not in known]
        if unknown:
            result.notes.append(
                f"{len(unknown)} event id(s) not in the ledger: " + ", ".join(unknown[:SAMPLE_SIZE])
            )
        return known

    # -- replaying deliveries ----------------------------------------------------------------

    def _replay(
        self,
        request: ReplayRequest,
        ids: Sequence[str],
        result: ReplayResult,
        keep_going: Callable[[], bool],
        report: Callable[[], None],
    ) -> int | None:
        """Replay (or judge) `ids`; where it stopped, as in `_send_paced`."""
        if request.dry_run:
            result.would_enqueue = would = 0
            for chunk in _chunks(ids, 1000):
                with self.db.connection() as conn:
                    judged = repo.judge(conn, chunk)
                for delivery_id in chunk:
                    reason = judged.get(delivery_id, "not_found")
                    if reason is None:
                        would += 1
                        result.sample([delivery_id])
                    else:
                        result.skip(reason)
                result.would_enqueue = would
                report()
            return None
        return self._send_paced(request, ids, result, keep_going, report)

    def _send_paced(
        self,
        request: ReplayRequest,
        ids: Sequence[str],
        result: ReplayResult,
        keep_going: Callable[[], bool],
        report: Callable[[], None],
    ) -> int | None:
        """Reset and send `ids`, a batch at a time, no faster than asked. Each batch is reset
        just before it is sent, so its lease starts when it goes out. Returns the index of the
        first id not reached when `keep_going` stopped it (`stopped_early` is set), else None."""
        pacer = Pacer(request.max_per_second, sleep=self.sleep, monotonic=self.monotonic)
        step = pacer.batch(self.options.batch_size)
        for start in range(0, len(ids), step):
            if not keep_going():
                result.stopped_early = True
                return start
            chunk = ids[start : start + step]
            pacer.wait()
            with self.db.connection() as conn:
                resets = repo.reset(
                    conn, chunk, lease=self.options.queued_lease, deadline=self.options.deadline
                )
            found = {r.id for r in resets}
            result.skip("not_found", sum(1 for i in chunk if i not in found))
            messages = []
            for r in resets:
                if r.skip is not None:
                    result.skip(r.skip)
                else:
                    assert r.seq is not None and r.endpoint_id and r.tenant_group
                    messages.append(DeliveryMessage(r.id, r.seq, r.endpoint_id, r.tenant_group))
            failed = self.queues.send(messages) if messages else []
            if failed:
                # Back to pending, due now: the next fan-out run sends them.
                with self.db.connection() as conn:
                    delivery_repo.return_unsent(conn, [m.delivery_id for m in failed])
                result.skip("send_failed", len(failed))
            failed_ids = {m.delivery_id for m in failed}
            sent = [m.delivery_id for m in messages if m.delivery_id not in failed_ids]
            result.enqueued += len(sent)
            result.sample(sent)
            pacer.done(len(messages))
            report()
        return None

    # -- refanout ----------------------------------------------------------------------------

    def _refanout(
        self,
        request: ReplayRequest,
        events: Sequence[str],
        result: ReplayResult,
        keep_going: Callable[[], bool],
        report: Callable[[], None],
        resume: Resume | None,
    ) -> None:
        """Re-create the events' missing deliveries and send them, a chunk of events at a
        time: each chunk's deliveries are created, held back for the time this replay needs
        to send them at its pace (if it dies first the fan-out sends them when the hold
        ends), then sent. A stop between chunks resumes after the last chunk's last event,
        one within a chunk also with that chunk's unsent deliveries (`pending`)."""
        endpoint_id = request.endpoint_id if request.selector == "endpoint" else None
        if resume is None:
            pairs = missing = 0
            for chunk in _chunks(events, self.options.event_batch):
                with self.db.connection() as conn:
                    p, m = repo.count_missing(conn, chunk, endpoint_id)
                pairs, missing = pairs + p, missing + m
            result.selected = pairs  # the total to show; the count as created replaces it
            if request.dry_run:
                result.would_enqueue = missing
                result.created = 0
                result.skip("delivery_exists", pairs - missing)
                report()
                return
            result.created = 0
            report()
        after = resume.after if resume is not None else None
        pending = list(resume.pending) if resume is not None else []
        if pending:
            stopped = self._send_paced(request, pending, result, keep_going, report)
            if stopped is not None:
                result.resume = Resume(after, tuple(pending[stopped:]), len(events))
                return
        for index in range(0, len(events), self.options.event_batch):
            chunk = events[index : index + self.options.event_batch]
            if not keep_going():
                result.stopped_early = True
                result.resume = Resume(after, (), len(events) - index)
                return
            with self.db.connection() as conn:
                p, m = repo.count_missing(conn, chunk, endpoint_id)
            # Held back long enough for this replay to send them at its pace.
            hold = self.options.refanout_hold
            if request.max_per_second:
                hold += timedelta(seconds=m / request.max_per_second)
            with self.db.connection() as conn:
                p, created = repo.create_missing(
                    conn, chunk, endpoint_id, deadline=self.options.deadline, hold=hold
                )
            result.created = (result.created or 0) + len(created)
            result.skip("delivery_exists", p - len(created))
            after = chunk[-1]
            stopped = self._send_paced(request, created, result, keep_going, report)
            if stopped is not None:
                rest = len(events) - index - len(chunk)
                result.resume = Resume(after, tuple(created[stopped:]), rest)
                return
        result.selected = result.processed  # what was there when each chunk was created

    # -- DLQ redrive -------------------------------------------------------------------------

    def _redrive(
        self,
        request: ReplayRequest,
        group: str,
        result: ReplayResult,
        keep_going: Callable[[], bool],
        report: Callable[[], None],
    ) -> None:
        sqs = self.queues.sqs
        dlq_url = self.queues.dlq_url(group)
        if request.dry_run:
            attributes = sqs.get_queue_attributes(
                QueueUrl=dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
            )["Attributes"]
            depth = int(attributes.get("ApproximateNumberOfMessages", 0))
            result.selected = result.would_enqueue = min(depth, request.limit)
            result.truncated = depth > request.limit
            result.notes.append("a dry run does not receive messages; the count is SQS's estimate")
            return
        queue_url = self.queues.url(group)
        pacer = Pacer(request.max_per_second, sleep=self.sleep, monotonic=self.monotonic)
        empty_receives = 0
        while result.selected < request.limit:
            if not keep_going():
                result.stopped_early = True
                return
            want = min(BATCH, request.limit - result.selected, pacer.batch(BATCH))
            messages = sqs.receive_message(
                QueueUrl=dlq_url,
                MaxNumberOfMessages=want,
                # A short poll first; one long poll confirms the queue is really empty.
                WaitTimeSeconds=1 if empty_receives else 0,
                VisibilityTimeout=self.options.redrive_visibility_seconds,
                MessageAttributeNames=["All"],
                MessageSystemAttributeNames=["MessageGroupId"],
            ).get("Messages", [])
            if not messages:
                empty_receives += 1
                if empty_receives >= 2:
                    return
                continue
            empty_receives = 0
            result.selected += len(messages)
            pacer.wait()
            answer = sqs.send_message_batch(
                QueueUrl=queue_url, Entries=[_redrive_entry(i, m) for i, m in enumerate(messages)]
            )
            failed = {f["Id"] for f in answer.get("Failed", [])}
            sent = [(i, m) for i, m in enumerate(messages) if str(i) not in failed]
            if sent:
                sqs.delete_message_batch(
                    QueueUrl=dlq_url,
                    Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in sent],
                )
            # Not sent: they stay in the DLQ and reappear after the visibility timeout.
            result.skip("send_failed", len(failed))
            result.enqueued += len(sent)
            result.sample([_message_label(m) for _, m in sent])
            pacer.done(len(sent))
            report()
        result.truncated = True
        result.notes.append(f"stopped at the limit ({request.limit}); run again to continue")


def _redrive_entry(index: int, message: Mapping[str, Any]) -> dict[str, Any]:
    """A send entry carrying the DLQ message's body, attributes and group as they were."""
    entry: dict[str, Any] = {"Id": str(index), "MessageBody": message["Body"]}
    attributes = {
        name: {k: v for k, v in value.items() if k in ("DataType", "StringValue", "BinaryValue")}
        for name, value in (message.get("MessageAttributes") or {}).items()
    }
    if attributes:
        entry["MessageAttributes"] = attributes
    group = (message.get("Attributes") or {}).get("MessageGroupId")
    if group:
        entry["MessageGroupId"] = group
    return entry


def _message_label(message: Mapping[str, Any]) -> str:
    """The delivery id of a delivery message, else the SQS message id."""
    try:
        return DeliveryMessage.parse(message["Body"])[0]
    except BadRequest:
        return str(message.get("MessageId", "?"))


def _chunks(items: Sequence[str], size: int) -> Iterator[Sequence[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


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
