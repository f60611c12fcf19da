"""What a replay did (or would do), and where a run stopped by its time limit carries on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hookline.records import frozen

SAMPLE_SIZE = 10


@frozen
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
