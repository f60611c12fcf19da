"""The sweep, a step of every reconcile run (docs/decisions/0021): it re-invokes a hand-off
nobody claimed for HANDOFF_QUIET (up to MAX_REINVOKES times; the claim makes a late original
harmless), marks failed a runner that has not reported for RUNNING_QUIET, and an `accepted`
row nobody started for ACCEPTED_QUIET. Each replay it fails gets its audit entry."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.errors import HooklineError
from hookline.replay.request import parse_request
from hookline.replay.starters import Continue
from hookline.repositories import audit as audit_repo
from hookline.repositories import replay as repo

log = logging.getLogger(__name__)

RUNNING_QUIET = timedelta(minutes=5)  # no heartbeat for this long: the runner is gone
ACCEPTED_QUIET = timedelta(minutes=15)  # never claimed for this long: it was never started
HANDOFF_QUIET = timedelta(minutes=2)  # a next run not started by then: its invocation was lost
MAX_REINVOKES = 3  # re-invocations of one lost hand-off before the replay fails


def sweep(db: Database, *, start: Continue, groups: Sequence[str]) -> dict[str, int]:
    """Re-invoke lost hand-offs with `start`, fail dead runners (their audit entries parse
    the request against the tenant `groups`)."""
    with db.connection() as conn:
        lost = repo.lost_continuations(
            conn, handoff_quiet=HANDOFF_QUIET, max_reinvokes=MAX_REINVOKES
        )
        # Failed and audited together: every replay has its one audit entry, a dead runner's
        # too (it did part of the work and wrote none).
        with conn.transaction():
            failed = repo.fail_stale_replays(
                conn,
                running_quiet=RUNNING_QUIET,
                accepted_quiet=ACCEPTED_QUIET,
                handoff_quiet=HANDOFF_QUIET,
                max_reinvokes=MAX_REINVOKES,
            )
            for row in failed:
                repo.set_audit_id(conn, row["id"], _audit_abandoned(conn, row, groups))
    if failed:
        log.warning("replays whose runner stopped marked failed: %s", [row["id"] for row in failed])
    for replay_id, runs in lost:
        log.warning("replay %s: run %d was never started; invoking it again", replay_id, runs + 1)
        try:
            start(replay_id, runs + 1)
        except Exception:  # the next sweep tries again, up to MAX_REINVOKES
            log.exception("could not re-invoke replay %s", replay_id)
    return {"replays_failed": len(failed), "replays_continued": len(lost)}


def _audit_abandoned(conn: Any, row: dict[str, Any], groups: Sequence[str]) -> int:
    """The audit entry of a replay the sweep failed: filed as its runner would have filed it
    (requester, reason, request), with the summary so far and why it failed."""
    doc = {**row["request"], "requested_by": row["requested_by"], "reason": row["reason"]}
    try:
        request = parse_request(doc, groups=groups)
        (object_type, object_id), parameters = request.audit_object(), request.parameters()
    except HooklineError:  # recorded by an older version: filed under the replay itself
        (object_type, object_id), parameters = ("replay", row["id"]), row["request"]
    return audit_repo.write_audit(
        conn,
        actor=row["requested_by"],
        action="replay",
        object_type=object_type,
        object_id=object_id,
        params={
            "reason": row["reason"],
            "request": parameters,
            "result": row["result"],
            "replay_id": row["id"],
        },
    )
