"""The fan-out's content-filter rule, stated once (decisions 0044, 0056, 0059): which
(event, endpoint) pairs an endpoint's content filter lets through, for the fan-out, replay's
re-fan-out and the reconciler's repair."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hookline.db import Connection
from hookline.errors import failure_reason
from hookline.records import frozen

if TYPE_CHECKING:
    from hookline.repositories.quarantine import Undecided


@frozen
class Matching:
    """What matching decided: the (event, endpoint, tenant, group) pairs that matched, and
    those whose matching raised (to quarantine, decision 0059)."""

    matched: list[tuple[str, str, str, str]]
    undecided: list[Undecided]
    documents: dict[str, Any]  # event id -> its document, for ordering keys


def content_matches(rows: Sequence[dict[str, Any]]) -> Matching:
    """The rule fan-out and re-fan-out share (decisions 0044, 0056): an endpoint with a
    content filter gets a delivery of an event exactly when its pattern matches the event's
    document (`event_document`). `rows` are one per event (`event_id`, `tenant_id`,
    `source_id`, `type`, `payload`, the type-matching filtered `endpoint_ids` and their
    `tenant_groups`) with `{endpoint id: pattern}` in `content_filters` on one row or more.
    Whatever raises while deciding one pair (any exception: the document of a payload too
    deep to build, a pattern that fails) makes that pair undecided, never the batch's
    failure (decision 0059). An endpoint among them without a pattern (it is there for its
    ordering, decision 0069) matches every event."""
    from hookline.patterns import event_document, matches
    from hookline.repositories.quarantine import Undecided

    filters: dict[str, Any] = {}
    for row in rows:
        filters.update(row["content_filters"] or {})
    matched: list[tuple[str, str, str, str]] = []
    undecided: list[Undecided] = []
    documents: dict[str, Any] = {}
    for row in rows:
        if row["event_id"] is None or not row["endpoint_ids"]:
            continue
        event_id, tenant_id = row["event_id"], row["tenant_id"]
        pairs = list(zip(row["endpoint_ids"], row["tenant_groups"], strict=True))
        try:
            document = event_document(
                row["type"], tenant_id, row["source_id"], bytes(row["payload"])
            )
        except Exception as err:  # any exception: this event's, not the batch's
            reason = failure_reason("event document", err)
            undecided += [Undecided(event_id, e, tenant_id, g, reason) for e, g in pairs]
            continue
        documents[event_id] = document
        for endpoint_id, group in pairs:
            try:
                hit = endpoint_id not in filters or matches(filters[endpoint_id], document)
            except Exception as err:  # any exception: this pair's
                reason = failure_reason("content filter", err)
                undecided.append(Undecided(event_id, endpoint_id, tenant_id, group, reason))
                continue
            if hit:
                matched.append((event_id, endpoint_id, tenant_id, group))
    return Matching(matched, undecided, documents)


def content_match_arrays(
    conn: Connection, rows: Sequence[dict[str, Any]], *, stage: str | None
) -> dict[str, list[str]]:
    """`content_matches` as the two arrays (`matched_events`, `matched_endpoints`) the
    statements that re-create deliveries take: replay's re-fan-out and the reconciler's
    repair (decision 0056). The undecided pairs are quarantined on `conn` as found by
    `stage` (decision 0059); None (a count, a dry run) records nothing."""
    from hookline.repositories import quarantine

    matching = content_matches(rows)
    if stage is not None:
        quarantine.record(conn, matching.undecided, stage=stage)
    return {
        "matched_events": [m[0] for m in matching.matched],
        "matched_endpoints": [m[1] for m in matching.matched],
    }
