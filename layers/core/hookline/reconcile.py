"""Reconcile: find what is stuck, late or inconsistent, repair it, and report it.

Postgres is the source of truth and SQS only transport, so every repair is a change of
database state followed by the ordinary enqueue: a lost queue message or a crashed worker
shows as an expired lease; an outbox row the fan-out missed shows as an old unfanned row.
Every repair claims its rows with `FOR UPDATE SKIP LOCKED` (or inserts with
`ON CONFLICT DO NOTHING`), so two runs at once never repair, or count, the same row twice.

A run, in order:

1. late outbox rows (older than `late_outbox_after`) are fanned out, counted as late;
2. unheld deliveries past their deadline are dead, with the reason;
3. queued / delivering deliveries whose lease expired are due again now, slots released;
4. fanned-out events of the recent window missing a delivery to an endpoint that matched
   when they arrived get it (to a content-filtered endpoint, only if its pattern matches:
   the fan-out's rule, decision 0056), the window walked by event id a page at a time, at
   most `repair_max_pages` pages or `repair_max_seconds` a run, from where the last run
   stopped (kept in `reconcile_positions`; reaching the window's end starts the next cycle
   at its start, after `repair_cycle_rest`: a cycle re-reads the whole window);
5. provider catch-up (Stripe events, GitHub redeliveries) for sources that enable it;
5b. replays: a lost continuation is invoked again, a dead runner's replay marked failed
    (`hookline.replay.sweep`, passed in as `sweep_replays`);
5c. the operational monitor, when wired (`hookline.operational.monitor`, decision 0068);
6. the ordinary fan-out and enqueue, which sends everything repaired;
6b. day partitions ahead, archive and retention, when wired (`hookline.retention`);
7. checks: deliveries per state, deliveries never attempted, DLQ depth per tenant group,
   what is still late or expired, fan-out pairs in quarantine;
8. a report row, whose `unreconciled` is what is still wrong: DLQ messages, findings not
   repaired, catch-up failures and errors.

Each step runs on its own (decision 0059): a step that raises is an error of the run, named
with its step, and the steps after it run regardless.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from hookline.catchup import CatchupContext, run_catchup
from hookline.db import Database
from hookline.endpoint_auth.expiry import announce_expiring_certificates
from hookline.errors import failure_reason
from hookline.fanout import FanoutOptions, FanoutReport, run_fanout
from hookline.ids import new_id
from hookline.observability import logger
from hookline.queues import DeliveryQueues
from hookline.records import frozen
from hookline.repositories import deliveries as delivery_repo
from hookline.repositories import quarantine as quarantine_repo
from hookline.repositories import reconcile as repo

# Read per DLQ: what waits there, and what someone is looking at right now.
DLQ_ATTRIBUTES = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]

T = TypeVar("T")


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


@frozen
class ReconcileOptions:
    """Thresholds and sizes of a reconcile run."""

    late_outbox_after: timedelta = timedelta(minutes=2)
    never_attempted_after: timedelta = timedelta(hours=1)
    consistency_window: timedelta = timedelta(hours=24)
    batch_size: int = 500
    # Pages of the missing-delivery walk per run (each reads up to batch_size * 20 events):
    # the rest of the window waits for the next run, which resumes there (decision 0056).
    repair_max_pages: int = 200
    # Seconds of the run the walk may take (at least one page): what is left of the run is
    # the later steps', and a walk stopped here, as at the page bound, resumes next run.
    repair_max_seconds: float = 30.0
    # After a cycle reaches the window's end, the next starts no sooner than this: each cycle
    # re-reads every event of the window and each of its pairs (docs/performance.md).
    repair_cycle_rest: timedelta = timedelta(minutes=55)
    sample_size: int = 10  # ids kept in a finding
    report_retention: timedelta = timedelta(days=30)
    catchup_lease: timedelta = timedelta(minutes=10)  # a crashed run's sources free up then
    fanout: FanoutOptions = field(default_factory=FanoutOptions)


# The name of the missing-delivery walk's row in reconcile_positions.
MISSING_DELIVERIES_WALK = "missing_deliveries"


@frozen
class MissingWalk:
    """What one run's part of the missing-delivery walk did."""

    created: list[str]
    cycle: int
    pages: int
    resumed_after: str | None  # None: it started at the window's start
    stopped_after: str | None  # None: it reached the window's end (the cycle is complete)
    stopped_by: str | None  # "max_pages", "max_seconds" or "time": stopped before the end
    lapsed: bool  # the stored position had fallen out of the window: events went unchecked
    resting_until: datetime | None = None  # set when it did not walk: the last cycle's rest

    def as_dict(self) -> dict[str, Any]:
        """The walk as the report's finding."""
        return {
            "cycle": self.cycle,
            "pages": self.pages,
            "resumed_after": self.resumed_after,
            "stopped_after": self.stopped_after,
            "stopped_by": self.stopped_by,
            "lapsed": self.lapsed,
            "resting_until": self.resting_until.isoformat() if self.resting_until else None,
        }


@dataclass
class ReconcileReport:
    """What one run found and repaired; `unreconciled` is what is still wrong after it."""

    id: str
    trigger: str
    started_at: datetime
    finished_at: datetime | None = None
    repairs: dict[str, int] = field(default_factory=dict)
    findings: dict[str, Any] = field(default_factory=dict)
    unreconciled: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The report as JSON-ready values."""
        return {
            "id": self.id,
            "trigger": self.trigger,
            "started_at": self.started_at.isoformat(),
            "finished_at": self.finished_at.isoformat() if self.finished_at else None,
            "unreconciled": self.unreconciled,
            "repairs": self.repairs,
            "findings": self.findings,
        }


class Reconciler:
    """Runs reconcile sweeps; one per process, built by `hookline.runtime.get_reconciler`."""

    def __init__(
        self,
        db: Database,
        queues: DeliveryQueues,
        options: ReconcileOptions,
        *,
        catchup: CatchupContext | None = None,
        sweep_replays: Callable[[], Mapping[str, int]] | None = None,
        retention: Callable[[datetime, Callable[[], bool]], dict[str, Any]] | None = None,
        operational: Callable[[datetime], dict[str, Any]] | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.db = db
        self.queues = queues
        self.options = options
        self.catchup = catchup
        self.sweep_replays = sweep_replays
        self.retention = retention
        self.operational = operational  # the operational monitor (decision 0068)
        self.clock = clock

    def run(
        self, *, trigger: str = "schedule", keep_going: Callable[[], bool] = lambda: True
    ) -> ReconcileReport:
        """One sweep: repair, check, store the report and return it. `keep_going` says when
        time runs low; what is left then is reported and picked up by the next run."""
        report = ReconcileReport(new_id("rcn"), trigger, self.clock())
        repairs = report.repairs
        errors: list[str] = []
        incomplete: list[str] = []
        # Each step runs on its own (decision 0059): one step's exception is this run's
        # error, named with its step, and the steps after it still run.
        step = _Steps(errors)
        none_repaired: tuple[list[repo.Repaired], bool] = ([], False)

        late, late_deliveries, complete = step(
            "late_outbox", lambda: self._fan_out_late(keep_going), (0, 0, False)
        )
        repairs["late_outbox_fanned_out"] = late
        repairs["late_outbox_deliveries_created"] = late_deliveries
        if not complete:
            incomplete.append("late_outbox")

        dead, complete = step(
            "deadline",
            lambda: self._drain(
                lambda conn: repo.kill_past_deadline(conn, limit=self.options.batch_size),
                keep_going,
            ),
            none_repaired,
        )
        repairs["deadline_dead"] = len(dead)
        if not complete:
            incomplete.append("deadline")

        requeued, complete = step(
            "expired_leases",
            lambda: self._drain(
                lambda conn: repo.requeue_expired_leases(conn, limit=self.options.batch_size),
                keep_going,
            ),
            none_repaired,
        )
        repairs["lost_messages_requeued"] = sum(1 for r in requeued if r.was == "queued")
        repairs["crashed_deliveries_requeued"] = sum(1 for r in requeued if r.was == "delivering")
        if not complete:
            incomplete.append("expired_leases")
        # after both sweeps: the leases below the floor are all settled (decision 0097)
        floor = step("lease_floor", self._advance_lease_floor, None)
        if floor is not None:
            report.findings["lease_floor"] = floor.isoformat()
        # after the leases: the claims of crashed workers are requeued, and can go
        report.findings["expired_claims_pruned"] = step(
            "expired_claims", self._prune_expired_claims, 0
        )

        walk = step("missing_deliveries", lambda: self._create_missing(keep_going), None)
        missing = walk.created if walk is not None else []
        repairs["missing_deliveries_created"] = len(missing)
        if walk is not None:
            report.findings["missing_deliveries_walk"] = walk.as_dict()
            if walk.stopped_by is not None:
                incomplete.append("missing_deliveries")

        catchup_unreconciled = step("catchup", lambda: self._catch_up(report, keep_going), 0)
        sweep_replays = self.sweep_replays
        if sweep_replays is not None:
            swept: dict[str, int] = step("replays", lambda: dict(sweep_replays()), {})
            repairs.update(swept)

        repairs["certificates_expiring"] = announce_expiring_certificates(
            self.db, report.started_at
        )
        operational = self.operational  # endpoint.failing/recovered, delivery.dead (0068)
        if operational is not None:
            announced: dict[str, Any] = step(
                "operational", lambda: operational(report.started_at), {}
            )
            report.findings["operational"] = announced
        fanout = step(
            "fanout",
            lambda: run_fanout(self.db, self.queues, self.options.fanout, keep_going=keep_going),
            FanoutReport(),
        )
        repairs["enqueued"] = fanout.enqueued
        report.findings["fanned_out_on_time"] = fanout.events
        report.findings["send_failures"] = fanout.send_failures

        retention = self.retention
        if retention is not None:
            # Partitions ahead, archive and retention (hookline.retention): its own errors
            # (an archive that failed keeps its rows) are this run's errors.
            retained: dict[str, Any] = step(
                "retention", lambda: retention(report.started_at, keep_going), {}
            )
            report.findings["retention"] = retained
            errors += [f"retention: {e}" for e in retained.get("errors", [])]

        repaired_ids = [r.id for r in requeued] + missing
        still_wrong = step("checks", lambda: self._check(report, repaired_ids, errors), 0)
        if incomplete:
            report.findings["incomplete"] = incomplete
        if errors:
            report.findings["errors"] = errors
        # A walk stopped at its own page or time bound resumes next run, as catch-up's
        # max_pages does: reported, not wrong. One whose position fell out of the window left
        # events unchecked.
        own_bound = walk is not None and walk.stopped_by in ("max_pages", "max_seconds")
        by_design = 1 if own_bound else 0
        report.unreconciled = (
            still_wrong
            + catchup_unreconciled
            + len(incomplete)
            - by_design
            + (1 if walk is not None and walk.lapsed else 0)
            + len(errors)
        )
        report.finished_at = self.clock()
        with self.db.connection() as conn:
            repo.insert_run(
                conn,
                run_id=report.id,
                trigger=report.trigger,
                started_at=report.started_at,
                finished_at=report.finished_at,
                repairs=report.repairs,
                findings=report.findings,
                unreconciled=report.unreconciled,
            )
            repo.prune_runs(conn, keep=self.options.report_retention)
        return report

    def _fan_out_late(self, keep_going: Callable[[], bool]) -> tuple[int, int, bool]:
        """Fan out late outbox rows: (rows fanned out, deliveries created, complete)."""
        late = created = 0
        while True:
            with self.db.connection() as conn, conn.transaction():
                # Locked here, these rows are the oldest the fan-out below can claim (its own
                # SKIP LOCKED does not skip this transaction's locks), so it takes them.
                ids = repo.lock_late_outbox(
                    conn, age=self.options.late_outbox_after, limit=self.options.batch_size
                )
                if not ids:
                    return late, created, True
                _, made = delivery_repo.fan_out_batch(
                    conn, limit=len(ids), deadline=self.options.fanout.deadline
                )
                fanned = repo.count_fanned_out(conn, ids)
                late += fanned
                created += made
            if fanned < len(ids):
                # Only if an older row was committed meanwhile took a place in the batch:
                # stop rather than re-lock the same rows; the next run takes the rest.
                return late, created, False
            if len(ids) < self.options.batch_size:
                return late, created, True
            if not keep_going():
                return late, created, False

    def _advance_lease_floor(self) -> datetime:
        with self.db.connection() as conn:
            return repo.advance_lease_floor(conn)

    def _prune_expired_claims(self) -> int:
        with self.db.connection() as conn:
            return repo.prune_expired_claims(conn)

    def _drain(
        self, step: Callable[[Any], list[T]], keep_going: Callable[[], bool]
    ) -> tuple[list[T], bool]:
        """Run a batch repair until a batch comes back short: (everything done, complete)."""
        done: list[T] = []
        while True:
            with self.db.connection() as conn:
                batch = step(conn)
            done += batch
            if len(batch) < self.options.batch_size:
                return done, True
            if not keep_going():
                return done, False

    def _create_missing(self, keep_going: Callable[[], bool]) -> MissingWalk:
        """Walk the window's events page by page from where the last run stopped, creating
        the deliveries they lack, until the window's end, `repair_max_pages` pages,
        `repair_max_seconds` or `keep_going` says stop; each page's end is stored, the
        window's end starts a new cycle, which waits out `repair_cycle_rest` from the last
        one's end. Pages go by event id, not "what is missing first": a content-filtered pair
        whose pattern does not match stays missing for good."""
        options = self.options
        name = MISSING_DELIVERIES_WALK
        with self.db.connection() as conn:
            start = repo.walk_position(
                conn, name, window=options.consistency_window, rest=options.repair_cycle_rest
            )
        if start.resting_until is not None:
            return MissingWalk([], start.cycle, 0, None, None, None, False, start.resting_until)
        created: list[str] = []
        after, pages, stopped_by, dense = start.after, 0, None, False
        began = time.monotonic()
        while True:
            with self.db.connection() as conn:
                page = repo.create_missing_deliveries(
                    conn,
                    window=options.consistency_window,
                    deadline=options.fanout.deadline,
                    limit=options.batch_size,
                    after=after,
                    dense=dense,
                )
                dense = page.full
                pages += 1
                created += page.created
                if not page.more or page.last is None:
                    repo.finish_walk_cycle(conn, name, cycle=start.cycle)
                    after = None
                    break
                after = page.last
                repo.advance_walk(conn, name, cycle=start.cycle, after=after)
            if pages >= options.repair_max_pages:
                stopped_by = "max_pages"
                break
            if time.monotonic() - began >= options.repair_max_seconds:
                stopped_by = "max_seconds"
                break
            if not keep_going():
                stopped_by = "time"
                break
        return MissingWalk(
            created, start.cycle, pages, start.after, after, stopped_by, start.lapsed
        )

    def _catch_up(self, report: ReconcileReport, keep_going: Callable[[], bool]) -> int:
        """Provider catch-up; returns how many sources failed or gave something up."""
        report.repairs["catchup_events_stored"] = 0
        report.repairs["redeliveries_requested"] = 0
        if self.catchup is None:
            return 0
        results = run_catchup(self.catchup, lease=self.options.catchup_lease, keep_going=keep_going)
        wrong = 0
        for result in results:
            report.repairs["catchup_events_stored"] += result.stored
            report.repairs["redeliveries_requested"] += result.redeliveries_requested
            wrong += (1 if result.error else 0) + result.redeliveries_exhausted
        if results:
            report.findings["catchup"] = {r.source_id: r.as_dict() for r in results}
        return wrong

    def _check(self, report: ReconcileReport, repaired: list[str], errors: list[str]) -> int:
        """Fill the findings; returns the count of what is still wrong."""
        findings = report.findings
        options = self.options
        with self.db.connection() as conn:
            findings["deliveries_by_state"] = repo.deliveries_by_state(conn)
            count, sample = repo.never_attempted(
                conn, age=options.never_attempted_after, exclude=repaired,
                sample=options.sample_size,
            )  # fmt: skip
            late = repo.count_late_outbox(conn, age=options.late_outbox_after)
            expired = repo.count_expired_leases(conn)
            findings["oldest_pending_outbox_seconds"] = round(
                delivery_repo.oldest_pending_outbox_age(conn), 3
            )
            held = quarantine_repo.size(conn)
        findings["never_attempted"] = {"count": count, "sample": sample}
        findings["late_outbox_remaining"] = late
        findings["expired_leases_remaining"] = expired
        # Pairs whose matching raised wait for an operator's retry (decision 0059): wrong
        # until then.
        findings["fanout_quarantined"] = held.pairs
        depths = self.dlq_depths(errors)
        findings["dlq_depth"] = depths
        return sum(depths.values()) + count + late + expired + held.pairs

    def dlq_depths(self, errors: list[str]) -> dict[str, int]:
        """Messages in each tenant group's DLQ; a group that cannot be read is an error."""
        depths: dict[str, int] = {}
        for group in self.queues.config.group_names:
            try:
                attributes = self.queues.sqs.get_queue_attributes(
                    QueueUrl=self.queues.dlq_url(group), AttributeNames=DLQ_ATTRIBUTES
                )["Attributes"]
            except Exception as err:  # botocore raises many kinds; report, never stop the run
                code = getattr(err, "response", {}).get("Error", {}).get("Code", "")
                errors.append(f"cannot read the {group} DLQ ({type(err).__name__} {code})".strip())
                continue
            depths[group] = sum(int(attributes.get(name, 0)) for name in DLQ_ATTRIBUTES)
        return depths


class _Steps:
    """Runs each reconcile step on its own: an exception (any) becomes the run's error named
    with its step (a short reason, never a trace) and the step's fallback, so the steps after
    it still run (decision 0059)."""

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors

    def __call__(self, name: str, run: Callable[[], T], fallback: T) -> T:
        try:
            return run()
        except Exception as err:  # any exception: this step's, never the run's
            logger.exception("reconcile step failed", extra={"step": name})
            self.errors.append(failure_reason(name, err))
            return fallback
