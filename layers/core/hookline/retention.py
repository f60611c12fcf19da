"""Retention: the ledger stays the size of its retention window (docs/decisions/0039-0041).

A run, at `as_of` (now, or a time given for a preview or a test):

1. day partitions are created for yesterday through `partitions_ahead_days` ahead;
2. for each day partition old enough for the shortest retention, oldest first: when every
   tenant's events of the day are past that tenant's retention (its override, else the global
   `ledger_retention_days`), no restore hold covers it and no delivery is unfinished, the day
   is archived and its partitions dropped whole; otherwise the expired tenants' events that no
   unfinished delivery holds are archived and deleted set-based;
3. dedupe keys older than `dedupe_retention_days` whose event has left are pruned.

Each day is one transaction: the archive objects are written first, and an archive that fails
rolls the day back, so nothing is removed that is not archived. The day gives way to the
pipeline: it waits for a lock at most `lock_wait_ms`, and a day that could not have its locks
is tried again, then left to the next run (decision 0116).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from itertools import groupby
from operator import itemgetter
from time import sleep
from typing import Any

from hookline.archive import ArchiveStore, gzip_parts, object_key
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import (
    ArchiveUnavailable,
    BadRequest,
    DeliveryStillOpen,
    LedgerBusy,
    NotFound,
)
from hookline.records import frozen
from hookline.repositories import retention as repo

TABLES = ("events", "outbox", "deliveries", "attempts")


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

    def __post_init__(self) -> None:
        for name in ("ledger_days", "dedupe_days", "partitions_ahead_days", "lock_wait_ms",
                     "tries_per_day"):  # fmt: skip
            if getattr(self, name) <= 0:
                raise BadRequest(f"retention: {name} must be at least 1, not {getattr(self, name)}")

    @property
    def lock_wait(self) -> timedelta:
        """How long a day's transaction waits for each lock."""
        return timedelta(milliseconds=self.lock_wait_ms)


@dataclass
class RetentionReport:
    """What a run removed (or would remove): rows per table and tenant, days dropped whole."""

    as_of: datetime
    dry_run: bool
    partitions_created: int = 0
    days_dropped: list[str] = field(default_factory=list)
    removed: dict[str, dict[str, int]] = field(
        default_factory=lambda: {t: defaultdict(int) for t in TABLES}
    )
    kept_unfinished: int = 0
    kept_held: int = 0
    archived_objects: int = 0
    event_keys_pruned: int = 0
    events_outside_days: int = 0
    errors: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "as_of": self.as_of.isoformat(),
            "dry_run": self.dry_run,
            "partitions_created": self.partitions_created,
            "days_dropped": self.days_dropped,
            "removed": {t: dict(sorted(v.items())) for t, v in self.removed.items()},
            "kept_unfinished": self.kept_unfinished,
            "kept_held": self.kept_held,
            "archived_objects": self.archived_objects,
            "event_keys_pruned": self.event_keys_pruned,
            "events_outside_days": self.events_outside_days,
            "errors": self.errors,
        }


def ensure_partitions(db: Database, *, as_of: datetime, ahead_days: int) -> int:
    """Create the day partitions of yesterday through `ahead_days` ahead; returns how many."""
    made = 0
    with db.connection() as conn:
        for offset in range(-1, ahead_days + 1):
            made += repo.create_day_partitions(conn, (as_of + timedelta(days=offset)).date())
    return made


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
        shortest = min(policy.ledger_days, repo.shortest_override(conn) or policy.ledger_days)
        days = [day for day, _ in repo.list_day_partitions(conn)]
    for day in days:
        if _day_end(day) > as_of - timedelta(days=shortest) or not keep_going():
            break
        if archive is None and not dry_run:
            report.errors.append("no archive bucket configured: nothing removed")
            break
        try:
            retire = partial(_retire_day, db, archive, policy, day, as_of=as_of, dry_run=dry_run)
            _tried_while_busy(policy, retire).add_to(report)
        except (ArchiveUnavailable, LedgerBusy) as err:
            report.errors.append(f"{day}: {err}; its rows are kept, the next run tries again")
            break
        except DeliveryStillOpen as err:
            # A replay made a delivery of the day unfinished meanwhile: the day waits.
            report.errors.append(f"{day}: {err}; its rows are kept")
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


def _tried_while_busy(policy: RetentionPolicy, retire: Callable[[], _Tally]) -> _Tally:
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
) -> _Tally:
    """Archive and remove what of one day is past retention, in one transaction; what it
    removed (or would), and what it kept."""
    end = _day_end(day)
    tally = _Tally()
    with (
        db.connection() as conn,
        conn.transaction(),
        repo.giving_way(conn, lock_wait=policy.lock_wait),
    ):
        bounds = repo.day_bounds(conn, day)
        tenants = repo.day_tenants(conn, bounds, as_of=as_of)
        expired = [
            t for t in tenants
            if not t.held and end <= as_of - timedelta(days=t.retention_days or policy.ledger_days)
        ]  # fmt: skip
        tally.kept_held = sum(t.events for t in tenants if t.held)
        tally.kept_unfinished = sum(t.unfinished for t in expired)
        whole = len(expired) == len(tenants) and not any(t.unfinished for t in tenants)
        if not expired and tenants:
            return tally
        selection = None if whole else [t.tenant_id for t in expired]
        label = f"{'day' if whole else 'expired'}-{as_of.strftime('%Y%m%dT%H%M%SZ')}"
        tally.keep_ids = not whole
        selected = repo.archive_selection(conn, bounds, selection, with_ids=not whole)
        with closing(selected) as rows:  # tenant order
            for tenant_id, of_tenant in groupby(rows, key=itemgetter("tenant_id")):
                lines = tally.lines(tenant_id, of_tenant)
                if dry_run:
                    deque(lines, maxlen=0)  # counted, not written
                else:
                    assert archive is not None
                    archive.put_parts(object_key(tenant_id, day, label), gzip_parts(lines))
        tally.dropped = day if whole else None
        if dry_run:
            return tally
        if whole:
            repo.drop_day_partitions(conn, day)
        elif tally.event_ids:
            repo.delete_events(conn, bounds, tally.event_ids, tally.delivery_ids)
        tally.objects = len(tally.counts)
    return tally


@dataclass
class _Tally:
    """What one day's transaction did, for the report once it committed (a day rolled back
    counts for nothing): its archive counted as the lines pass on their way to the store,
    which are not kept (decision 0117), per tenant its events, deliveries and attempts; for a
    day not dropped whole the ids its delete removes; what it kept; the objects written; and
    the day, if dropped whole."""

    keep_ids: bool = False
    kept_held: int = 0
    kept_unfinished: int = 0
    objects: int = 0
    dropped: date | None = None
    counts: dict[str, list[int]] = field(default_factory=dict)
    event_ids: list[str] = field(default_factory=list)
    delivery_ids: list[str] = field(default_factory=list)

    def lines(self, tenant_id: str, rows: Iterable[dict[str, Any]]) -> Iterator[str]:
        """The tenant's archive lines, each counted as it passes."""
        counts = self.counts.setdefault(tenant_id, [0, 0, 0])
        for row in rows:
            counts[0] += 1
            counts[1] += row["deliveries"]
            counts[2] += row["attempts"]
            if self.keep_ids:
                self.event_ids.append(row["id"])
                self.delivery_ids += row["delivery_ids"]
            yield row["line"]

    def add_to(self, report: RetentionReport) -> None:
        """Add what the day removed (or would) and kept to the report."""
        report.kept_held += self.kept_held
        report.kept_unfinished += self.kept_unfinished
        report.archived_objects += self.objects
        removed = report.removed
        for tenant_id, (events, deliveries, attempts) in self.counts.items():
            removed["events"][tenant_id] += events
            removed["outbox"][tenant_id] += events
            removed["deliveries"][tenant_id] += deliveries
            removed["attempts"][tenant_id] += attempts
        if self.dropped is not None:
            report.days_dropped.append(self.dropped.isoformat())


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
