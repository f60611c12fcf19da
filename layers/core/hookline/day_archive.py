"""A day's archive objects, written from the ledger a piece at a time (decisions 0117, 0118):
a slice of a day that goes whole, archived and recorded; its check at the drop; and a slice
of the expired tenants' share of a day that others keep, archived and deleted. Each is one
transaction of the caller's; `hookline.retention` decides what goes and when, and says it in
the report (`RetentionReport`)."""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import groupby
from operator import itemgetter
from typing import Any

from hookline.archive import ArchiveStore, gzip_parts, object_key
from hookline.db import Connection
from hookline.repositories import retention as repo

TABLES = ("events", "outbox", "deliveries", "attempts")


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
    slices_archived: int = 0
    day_in_progress: str | None = None
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
            "slices_archived": self.slices_archived,
            "day_in_progress": self.day_in_progress,
            "event_keys_pruned": self.event_keys_pruned,
            "events_outside_days": self.events_outside_days,
            "errors": self.errors,
        }


@dataclass
class Tally:
    """What one day's transaction did, for the report once it committed (a day rolled back
    counts for nothing): its archive counted as the lines pass on their way to the store,
    which are not kept (decision 0117), per tenant its events, deliveries and attempts; for a
    day not dropped whole the ids its delete removes; what it kept; the objects written; and
    the day, if dropped whole."""

    keep_ids: bool = False
    share: bool = False  # the day is kept by some: its expired tenants' share goes by slices
    kept_held: int = 0
    kept_unfinished: int = 0
    objects: int = 0
    in_progress: date | None = None
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
        if self.in_progress is not None:
            report.day_in_progress = self.in_progress.isoformat()
        removed = report.removed
        for tenant_id, (events, deliveries, attempts) in self.counts.items():
            removed["events"][tenant_id] += events
            removed["outbox"][tenant_id] += events
            removed["deliveries"][tenant_id] += deliveries
            removed["attempts"][tenant_id] += attempts
        if self.dropped is not None:
            report.days_dropped.append(self.dropped.isoformat())


def write_archive(
    conn: Connection,
    archive: ArchiveStore | None,
    bounds: repo.DayBounds,
    tenants: list[str] | None,
    tally: Tally,
    label: str,
) -> None:
    """The archive of `bounds` (of `tenants`, or all), an object per tenant under `label`;
    only counted in `tally` when there is no store (a dry run)."""
    with closing(
        repo.archive_selection(conn, bounds, tenants, with_ids=tally.keep_ids)
    ) as rows:  # tenant order
        for tenant_id, of_tenant in groupby(rows, key=itemgetter("tenant_id")):
            lines = tally.lines(tenant_id, of_tenant)
            if archive is None:
                deque(lines, maxlen=0)  # counted, not written
            else:
                archive.put_parts(object_key(tenant_id, bounds.day, label), gzip_parts(lines))
                tally.objects += 1


def archive_slice(conn: Connection, archive: ArchiveStore, piece: repo.DayBounds) -> Tally:
    """Write a slice's objects, labelled by its first millisecond (a slice written again
    replaces them), and record it, its rows of `attempts` counted before it is read (one
    added meanwhile then shows as a change at the drop)."""
    before = repo.slice_rows(conn, piece)
    written = Tally()
    write_archive(conn, archive, piece, None, written, f"day-{piece.lo[4:]}")
    repo.record_slice(conn, piece, written.counts, attempt_rows=before.attempt_rows)
    return written


def check_slices(
    conn: Connection, archive: ArchiveStore, bounds: repo.DayBounds, tally: Tally
) -> bool:
    """In the day's drop: whether its archived slices cover it, end to end (if not, they are
    forgotten, to be made again); each one's events and rows of `attempts` counted again, and
    the slice archived again if they changed since (a replay's attempt, a restore, an erasure,
    an event that was unfinished; a change that leaves neither is not seen); what the day's
    objects hold added to the tally."""
    done = repo.day_slices(conn, bounds.day)
    edges = [bounds.lo] + [p.hi for p in done]
    if [p.lo for p in done] != edges[:-1] or edges[-1] != bounds.hi:
        repo.forget_slices(conn, bounds.day)
        return False
    for piece_done in done:
        piece = bounds.between(piece_done.lo, piece_done.hi)
        counts = piece_done.counts
        if piece_done.changed or repo.slice_rows(conn, piece) != piece_done.rows:
            again = archive_slice(conn, archive, piece)
            counts, tally.objects = again.counts, tally.objects + again.objects
        for tenant_id, held in counts.items():
            total = tally.counts.setdefault(tenant_id, [0, 0, 0])
            total[:] = [a + b for a, b in zip(total, held, strict=True)]
    return True


def retire_share_slice(
    conn: Connection, archive: ArchiveStore, piece: repo.DayBounds, tenants: list[str], label: str
) -> Tally:
    """Archive the `tenants`' events of the slice `piece` that no unfinished delivery holds, and
    delete them with their rows, in the caller's transaction (an archive that fails rolls the
    slice back); what went. Its objects are labelled by the run's `label` and the slice's
    first millisecond."""
    gone = Tally(keep_ids=True)
    if tenants:
        write_archive(conn, archive, piece, tenants, gone, f"{label}-{piece.lo[4:]}")
    if gone.event_ids:
        repo.delete_events(conn, piece, gone.event_ids, gone.delivery_ids)
    return gone
