"""Retention: the ledger stays the size of its retention window (docs/decisions/0039-0041).

A run, at `as_of` (now, or a time given for a preview or a test):

1. day partitions are created for yesterday through `partitions_ahead_days` ahead;
2. for each day partition old enough for the shortest retention, oldest first: when every
   tenant's events of the day are past that tenant's retention (its override, else the global
   `ledger_retention_days`), no restore hold covers it and no delivery is unfinished, the day
   is archived and its partitions dropped whole; otherwise the expired tenants' events that no
   unfinished delivery holds are archived and deleted, a slice at a time;
3. dedupe keys older than `dedupe_retention_days` whose event has left are pruned.

A day that may go whole is archived in slices, each in its own transaction, across runs when
one run has not the time; its drop checks the slices and is one transaction (decision 0118).
The expired tenants' share of a day that others keep goes a slice at a time too, each slice
archived and deleted in one transaction. The archive objects are written first, and an
archive that fails rolls its transaction back, so nothing is removed that is not archived.
The pieces' own work (their objects, checks and deletes) is `hookline.day_archive`'s. A day's drop
gives way to the pipeline: it waits for a lock at most `lock_wait_ms`, and a day that could not
have its locks is tried again, then left to the next run (decision 0116).

Reconcile runs it on its schedule (`scheduled_retention`): a whole run in the first run of
each hour, and in the others only a day in progress goes on.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from time import sleep
from typing import Any

from hookline.archive import ArchiveStore
from hookline.config import HooklineConfig
from hookline.day_archive import (
    RetentionReport,
    Tally,
    archive_slice,
    check_slices,
    retire_share_slice,
    write_archive,
)
from hookline.db import Connection, Database
from hookline.errors import (
    ArchiveUnavailable,
    BadRequest,
    DeliveryStillOpen,
    LedgerBusy,
    NotFound,
)
from hookline.records import frozen
from hookline.repositories import retention as repo


@frozen
class RetentionPolicy:
    """How long things stay."""

    ledger_days: int = 90
    dedupe_days: int = 30
    partitions_ahead_days: int = 7
    # A day's transaction waits at most this long for each lock: a day's drop waits for at most
    # five (four parents, the day's deliveries), so what it holds while waiting is let go within
    # Postgres's default deadlock_timeout (1 s). A day that could not have its locks is tried
    # this many times, a pause longer each time (decision 0116).
    lock_wait_ms: int = 200
    tries_per_day: int = 5
    # A day past retention is archived in slices of about this many events, each in its own
    # transaction, across runs if need be (decision 0118): ~10 s a slice with ten endpoints.
    # A slice holds at most this many deliveries too, so that many endpoints per event do not
    # make one longer than a run.
    slice_events: int = 50_000
    slice_deliveries: int = 500_000
    # A slice of the share of a day that others keep holds its ids for the delete: ~0.4 KB a
    # delivery in memory (`bench/retention_archive.py --kept`), so ~40 MB at this many.
    share_slice_deliveries: int = 100_000

    def __post_init__(self) -> None:
        for name in ("ledger_days", "dedupe_days", "partitions_ahead_days", "lock_wait_ms",
                     "tries_per_day", "slice_events", "slice_deliveries",
                     "share_slice_deliveries"):  # fmt: skip
            if getattr(self, name) <= 0:
                raise BadRequest(f"retention: {name} must be at least 1, not {getattr(self, name)}")

    @property
    def lock_wait(self) -> timedelta:
        """How long a day's transaction waits for each lock."""
        return timedelta(milliseconds=self.lock_wait_ms)


def ensure_partitions(db: Database, *, as_of: datetime, ahead_days: int) -> int:
    """Create the day partitions of yesterday through `ahead_days` ahead; returns how many."""
    made = 0
    with db.connection() as conn:
        for offset in range(-1, ahead_days + 1):
            made += repo.create_day_partitions(conn, (as_of + timedelta(days=offset)).date())
    return made


def scheduled_retention(
    db: Database,
    archive: ArchiveStore | None,
    policy: RetentionPolicy,
    *,
    as_of: datetime,
    keep_going: Callable[[], bool],
    first_of_hour: bool,
) -> dict[str, Any]:
    """What a reconcile run does of retention: the whole of it in the first run of each hour
    (a day kept for a long-retention tenant, and the dedupe keys kept with it, are read by
    each whole run, so not every run); in the others the partitions ahead, and the days whose
    archive in slices has begun go on, so a day too large for one run waits minutes for its
    next slices, not an hour (decision 0118)."""
    if first_of_hour:
        return apply_retention(db, archive, policy, as_of=as_of, keep_going=keep_going).as_dict()
    with db.connection() as conn:
        in_progress = repo.days_in_progress(conn)
    if not in_progress:
        made = ensure_partitions(db, as_of=as_of, ahead_days=policy.partitions_ahead_days)
        return {"partitions_created": made, "retention": "next hour"}
    as_of = as_of.astimezone(UTC)
    report = RetentionReport(as_of=as_of, dry_run=False)
    report.partitions_created = ensure_partitions(
        db, as_of=as_of, ahead_days=policy.partitions_ahead_days
    )
    _retire_days(db, archive, policy, in_progress, report, keep_going=keep_going)
    return report.as_dict()


def apply_retention(
    db: Database,
    archive: ArchiveStore | None,
    policy: RetentionPolicy,
    *,
    as_of: datetime,
    dry_run: bool = False,
    keep_going: Callable[[], bool] = lambda: True,
) -> RetentionReport:
    """One retention run (see the module docstring). Without an archive store nothing is
    removed (only counted as an error): nothing leaves that is not archived."""
    as_of = as_of.astimezone(UTC)
    report = RetentionReport(as_of=as_of, dry_run=dry_run)
    if not dry_run:
        report.partitions_created = ensure_partitions(
            db, as_of=as_of, ahead_days=policy.partitions_ahead_days
        )
    with db.connection() as conn:
        days = [day for day, _ in repo.list_day_partitions(conn)]
    _retire_days(db, archive, policy, days, report, keep_going=keep_going)
    with db.connection() as conn:
        report.event_keys_pruned = repo.prune_event_keys(
            conn, before=as_of - timedelta(days=policy.dedupe_days), dry_run=dry_run
        )
        report.events_outside_days = repo.events_outside_days(conn)
    if report.events_outside_days:
        report.errors.append(
            f"{report.events_outside_days} events are outside every day partition (the default "
            "one): retention does not remove them; see docs/operations.md"
        )
    return report


def _retire_days(
    db: Database,
    archive: ArchiveStore | None,
    policy: RetentionPolicy,
    days: list[date],
    report: RetentionReport,
    *,
    keep_going: Callable[[], bool],
) -> None:
    """Archive and remove, oldest first, what of `days` is past retention at the report's
    `as_of`, while `keep_going`; what went and why a day stopped, in the report."""
    as_of, dry_run = report.as_of, report.dry_run
    with db.connection() as conn:
        shortest = min(policy.ledger_days, repo.shortest_override(conn) or policy.ledger_days)
    share = partial(_retire_share, db, archive, policy, report=report, as_of=as_of,
                    keep_going=keep_going)  # fmt: skip
    for day in days:
        if _day_end(day) > as_of - timedelta(days=shortest) or not keep_going():
            break
        if archive is None and not dry_run:
            report.errors.append("no archive bucket configured: nothing removed")
            break
        try:
            if not dry_run and _share_stopped_in(db, day):
                # a run stopped in its share: it goes on first, and the day is planned again
                # by the next run that comes to it
                if not share(day):
                    report.day_in_progress = day.isoformat()
                    break  # out of time again
                continue
            sliced = dry_run or _archive_in_slices(
                db, archive, policy, day, report, as_of=as_of, keep_going=keep_going
            )
            if not sliced:
                report.day_in_progress = day.isoformat()
                break  # out of time: the next run goes on with the day's next slice
            retire = partial(_retire_day, db, archive, policy, day, as_of=as_of, dry_run=dry_run)
            retired = _tried_while_busy(policy, retire)
            retired.add_to(report)
            if report.day_in_progress:
                break  # its slices are to be made again, by the next run
            if retired.share and not share(day):
                report.day_in_progress = day.isoformat()
                break  # out of time: the next run goes on with the day's share
        except (ArchiveUnavailable, LedgerBusy) as err:
            report.errors.append(f"{day}: {err}; its rows are kept, the next run tries again")
            break
        except DeliveryStillOpen as err:
            # A replay made a delivery of the day unfinished meanwhile: the day waits.
            report.errors.append(f"{day}: {err}; its rows are kept")


def _tried_while_busy(policy: RetentionPolicy, retire: Callable[[], Tally]) -> Tally:
    """What `retire` (one day's transaction) did; while the pipeline holds the day's tables,
    it is tried again after a pause, up to `tries_per_day` times, then the last LedgerBusy is
    raised (the run ends; the next tries again). A try rolled back removed nothing and counts
    for nothing; its archive objects are written again under the same keys."""
    for attempt in range(1, policy.tries_per_day):
        try:
            return retire()
        except LedgerBusy:
            sleep((policy.lock_wait * attempt).total_seconds())
    return retire()


def _retire_day(
    db: Database,
    archive: ArchiveStore | None,
    policy: RetentionPolicy,
    day: date,
    *,
    as_of: datetime,
    dry_run: bool,
) -> Tally:
    """Archive and remove what of one day is past retention, in one transaction; what it
    removed (or would), and what it kept. A day past retention for every tenant, its slices
    archived (`_archive_in_slices`; a day without events has none), is checked and dropped;
    otherwise the expired tenants' rows are archived and deleted."""
    tally = Tally()
    with (
        db.connection() as conn,
        conn.transaction(),
        repo.giving_way(conn, lock_wait=policy.lock_wait),
    ):
        bounds = repo.day_bounds(conn, day)
        plan = _DayPlan.of(conn, bounds, policy, as_of=as_of)
        tally.kept_held, tally.kept_unfinished = plan.kept_held, plan.kept_unfinished
        if not plan.expired and plan.tenants:
            return tally
        if plan.whole and not dry_run:
            assert archive is not None
            if plan.tenants and not check_slices(conn, archive, bounds, tally):
                tally.in_progress = day  # the next run slices it again
                return tally
            repo.drop_day_partitions(conn, day)
            repo.forget_slices(conn, day)
            repo.forget_share(conn, day)
            tally.dropped = day
            return tally
        if not dry_run:
            # the expired tenants' share, for `_retire_share` (a day no longer whole is no
            # longer in progress: its slices' objects stay, its record goes)
            repo.forget_slices(conn, day)
            tally.share = True
            return tally
        # a dry run: what would go, counted in this transaction
        selection = None if plan.whole else [t.tenant_id for t in plan.expired]
        write_archive(conn, None, bounds, selection, tally, "dry-run")
    return tally


@frozen
class _DayPlan:
    """Who has events in a day, which of them are past retention and what keeps them, and
    whether the whole day may go."""

    tenants: list[repo.DayTenant]
    expired: list[repo.DayTenant]
    kept_held: int
    kept_unfinished: int
    whole: bool

    @classmethod
    def of(
        cls, conn: Connection, bounds: repo.DayBounds, policy: RetentionPolicy, *, as_of: datetime
    ) -> _DayPlan:
        end = _day_end(bounds.day)
        tenants = repo.day_tenants(conn, bounds, as_of=as_of)
        expired = [
            t for t in tenants
            if not t.held and end <= as_of - timedelta(days=t.retention_days or policy.ledger_days)
        ]  # fmt: skip
        whole = len(expired) == len(tenants) and not any(t.unfinished for t in tenants)
        return cls(
            tenants, expired, kept_held=sum(t.events for t in tenants if t.held),
            kept_unfinished=sum(t.unfinished for t in expired), whole=whole,
        )  # fmt: skip

    @property
    def archivable(self) -> bool:
        """Whether the day is one to archive in slices: it may go whole, and it has events."""
        return self.whole and bool(self.tenants)


def _share_stopped_in(db: Database, day: date) -> bool:
    """Whether a run stopped in the day's share."""
    with db.connection() as conn:
        return repo.share_position(conn, day) is not None


def _retire_share(
    db: Database,
    archive: ArchiveStore | None,
    policy: RetentionPolicy,
    day: date,
    *,
    report: RetentionReport,
    as_of: datetime,
    keep_going: Callable[[], bool],
) -> bool:
    """The share of a day that others keep whose tenants are past retention, archived and
    deleted a slice at a time while `keep_going`, from where a run stopped in it; each slice
    its own transaction that plans the slice (who is past retention now, what holds what),
    gives way to the pipeline as a drop does, and notes how far the share is done. Whether
    it reached the day's end."""
    assert archive is not None
    label = f"expired-{as_of.strftime('%Y%m%dT%H%M%SZ')}"
    with db.connection() as conn:
        bounds = repo.day_bounds(conn, day)
        lo = repo.share_position(conn, day) or bounds.lo
    while lo < bounds.hi:
        if not keep_going():
            return False
        with db.connection() as conn:
            end = repo.slice_end(
                conn, bounds, lo, events=policy.slice_events,
                deliveries=policy.share_slice_deliveries,
            )  # fmt: skip
            piece = bounds.between(lo, end)
        retire = partial(_retire_share_slice, db, archive, policy, piece, label, as_of=as_of)
        _tried_while_busy(policy, retire).add_to(report)
        lo = piece.hi
    with db.connection() as conn:
        repo.forget_share(conn, day)
    return True


def _retire_share_slice(
    db: Database,
    archive: ArchiveStore,
    policy: RetentionPolicy,
    piece: repo.DayBounds,
    label: str,
    *,
    as_of: datetime,
) -> Tally:
    """One slice of `_retire_share`, in one transaction."""
    with (
        db.connection() as conn,
        conn.transaction(),
        repo.giving_way(conn, lock_wait=policy.lock_wait),
    ):
        plan = _DayPlan.of(conn, piece, policy, as_of=as_of)
        gone = retire_share_slice(conn, archive, piece, [t.tenant_id for t in plan.expired], label)
        repo.record_share_position(conn, piece.day, piece.hi)
        return gone


def _archive_in_slices(
    db: Database,
    archive: ArchiveStore | None,
    policy: RetentionPolicy,
    day: date,
    report: RetentionReport,
    *,
    as_of: datetime,
    keep_going: Callable[[], bool],
) -> bool:
    """When the whole day may go, archive its slices not yet archived, each in its own
    transaction, while `keep_going` (decision 0118), counting the slices and objects in the
    report as each commits; whether the day is archived to its end (or is not one for a whole
    drop)."""
    assert archive is not None
    with db.connection() as conn:
        bounds = repo.day_bounds(conn, day)
        done = repo.day_slices(conn, day)
        # A day in progress is not planned again (its drop is): the plan reads the whole day.
        # A day without events has nothing to archive: its drop needs no slices.
        if not done and not _DayPlan.of(conn, bounds, policy, as_of=as_of).archivable:
            return True
    lo = done[-1].hi if done else bounds.lo
    while lo < bounds.hi:
        if not keep_going():
            return False
        with db.connection() as conn, conn.transaction():
            end = repo.slice_end(
                conn, bounds, lo, events=policy.slice_events, deliveries=policy.slice_deliveries
            )
            piece = bounds.between(lo, end)
            written = archive_slice(conn, archive, piece)
        lo = piece.hi
        report.slices_archived += 1
        report.archived_objects += written.objects
    return True


def _day_end(day: date) -> datetime:
    return datetime.combine(day + timedelta(days=1), time.min, tzinfo=UTC)


def policy_from_config(config: HooklineConfig) -> RetentionPolicy:
    """The retention policy of a deployment's configuration."""
    return RetentionPolicy(
        ledger_days=config.ledger_retention_days,
        dedupe_days=config.dedupe_retention_days,
        partitions_ahead_days=config.partitions_ahead_days,
    )


def set_tenant_retention(db: Database, tenant_id: str, days: int | None) -> dict[str, Any]:
    """Give a tenant its own ledger retention in days (None: the global one again)."""
    if days is not None and days <= 0:
        raise BadRequest(f"retention must be at least 1 day, not {days}")
    with db.connection() as conn:
        if not repo.set_tenant_retention(conn, tenant_id, days):
            raise NotFound(f"no tenant {tenant_id}")
    return {"tenant_id": tenant_id, "retention_days": days}
