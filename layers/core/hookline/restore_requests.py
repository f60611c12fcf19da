"""Restores from the archive as requests (docs/decisions/0051): the same request, parsed and
carried out by one function, whether it comes from `hookline archive restore`, the replay
function's console event (`{"restore": {...}}`) or the management API (`POST /v1/restores`).

The API records the request as a `restores` row and answers 202 at once, because a window's
archive objects may take longer to read back than API Gateway's 29 seconds; the replay
function, invoked asynchronously with `{"restore_id": ...}` (locally: a thread of this
process), claims the row, restores and writes the result. Restoring is for operators only: it
re-delivers a tenant's past events and holds them from retention, which is the deployment's
storage, not the tenant's. Every restore — dry runs and failures included — writes one audit
entry (`archive.restore`), like every replay.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.archive import ArchiveStore
from hookline.db import Database
from hookline.errors import (
    ArchiveUnavailable,
    BadRequest,
    HooklineError,
    NotFound,
    RestoreNotStarted,
)
from hookline.ids import new_id
from hookline.management.access import Caller
from hookline.management.paging import page_of, paged
from hookline.records import frozen
from hookline.replay.request import parse_instant
from hookline.replay.starters import start_in_thread
from hookline.repositories import restores as repo
from hookline.repositories import retention as retention_repo
from hookline.repositories.audit import write_audit
from hookline.restore import restore_window

log = logging.getLogger(__name__)

FIELDS = ("tenant_id", "since", "until", "reason", "dry_run", "requested_by")
# A recorded restore runs in one invocation of the replay function (at most 15 minutes): one
# still running after this is gone; one never claimed after ACCEPTED_QUIET was never started.
RUNNING_QUIET = timedelta(minutes=20)
ACCEPTED_QUIET = timedelta(minutes=15)


@frozen
class RestoreRequest:
    """One tenant's archived window [since, until) to put back and deliver again."""

    tenant_id: str
    since: datetime
    until: datetime
    reason: str
    requested_by: str
    dry_run: bool = False

    def stored(self) -> dict[str, Any]:
        """The window as it will run (absolute times), as kept on the `restores` row."""
        return {
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "dry_run": self.dry_run,
        }


@frozen
class RestoreOptions:
    """What a restore needs besides its request: how long the window is held from retention,
    and the ordinary fan-out run that delivers the restored events (None: leave them to the
    scheduled fan-out)."""

    hold_days: int
    fan_out: Callable[[], Any] | None


def parse_restore(doc: Any, *, now: datetime | None = None) -> RestoreRequest:
    """Validate a restore request; BadRequest names the field that is wrong."""
    now = now or datetime.now(UTC)
    if not isinstance(doc, Mapping):
        raise BadRequest("a restore request is a JSON object: " + ", ".join(FIELDS))
    unknown = sorted(set(doc) - set(FIELDS))
    if unknown:
        raise BadRequest(
            f"unknown field {', '.join(unknown)}; a restore takes " + ", ".join(FIELDS)
        )
    tenant_id, reason, requested_by = (doc.get(k) for k in ("tenant_id", "reason", "requested_by"))
    if not isinstance(tenant_id, str) or not tenant_id.strip():
        raise BadRequest("tenant_id is required: the tenant whose archive is restored")
    since = parse_instant(doc.get("since"), "since", now)
    until = parse_instant(doc.get("until"), "until", now)
    if since >= until:
        raise BadRequest("since must be before until (the window is [since, until))")
    if not isinstance(reason, str) or not reason.strip():
        raise BadRequest("reason is required: why the window is restored (kept in the audit log)")
    if not isinstance(requested_by, str) or not requested_by.strip():
        raise BadRequest("requested_by is required: who asks for the restore")
    dry_run = doc.get("dry_run", False)
    if not isinstance(dry_run, bool):
        raise BadRequest("dry_run must be true or false")
    return RestoreRequest(tenant_id, since, until, reason.strip(), requested_by, dry_run)


def restore_now(
    db: Database, archive: ArchiveStore | None, request: RestoreRequest, options: RestoreOptions
) -> dict[str, Any]:
    """Carry out a restore request here: the CLI's, the replay function's, a recorded one's.
    Returns the counts; a failure is audited and raised."""
    if archive is None:
        raise ArchiveUnavailable("no archive bucket is configured (HOOKLINE_ARCHIVE_BUCKET)")
    try:
        return restore_window(
            db, archive, tenant_id=request.tenant_id, since=request.since, until=request.until,
            reason=request.reason, actor=request.requested_by, hold_days=options.hold_days,
            dry_run=request.dry_run, fan_out=options.fan_out,
        )  # fmt: skip
    except (BadRequest, NotFound):
        raise  # refused before anything was read: nothing to audit
    except Exception as err:
        _audit_failure(db, request, failure_message(err))
        raise


def failure_message(err: Exception) -> str:
    """Why a restore failed, safe to show (a domain error's text, else only its kind)."""
    if isinstance(err, HooklineError):
        return str(err)
    return f"the restore failed ({type(err).__name__}); see the function's logs"


def _audit_failure(db: Database, request: RestoreRequest, error: str) -> None:
    try:
        with db.connection() as conn:
            write_audit(
                conn, actor=request.requested_by, action="archive.restore", object_type="tenant",
                object_id=request.tenant_id,
                params={"tenant_id": request.tenant_id, **request.stored(), "error": error,
                        "reason": request.reason},
            )  # fmt: skip
    except Exception:  # the database is what failed: the log keeps it
        log.exception("could not audit the failed restore of %s", request.tenant_id)


# -- through the API --------------------------------------------------------------------------


def create_restore(
    db: Database,
    caller: Caller,
    body: Mapping[str, Any],
    *,
    start: Callable[[str], None],
) -> dict[str, Any]:
    """Validate a restore the caller (an operator) asks for, record it, and `start` its run.
    The run reads the archive, not this (an unreadable archive fails the run, with why)."""
    caller.require_operator("restore from the archive")
    doc = {k: v for k, v in body.items() if v is not None}
    request = parse_restore({**doc, "requested_by": caller.principal})
    with db.connection() as conn, conn.transaction():
        if not retention_repo.tenant_exists(conn, request.tenant_id):
            raise NotFound(f"no tenant {request.tenant_id}")
        row = repo.insert_restore(
            conn, id=new_id("rst"), tenant_id=request.tenant_id,
            requested_by=request.requested_by, reason=request.reason, request=request.stored(),
        )  # fmt: skip
    try:
        start(row["id"])
    except Exception as err:
        log.exception("could not start restore %s", row["id"])
        with db.connection() as conn:
            repo.finish_restore(
                conn, row["id"], state="failed", audit_id=None,
                result={"error": f"the restore could not be started ({type(err).__name__})"},
            )  # fmt: skip
        raise RestoreNotStarted("the restore could not be started; nothing was restored") from err
    return get_restore(db, caller, row["id"])


def run_recorded_restore(
    db: Database, archive: ArchiveStore | None, restore_id: str, options: RestoreOptions
) -> dict[str, Any] | None:
    """Run a restore the API recorded, once: None if another run has taken it (or it is
    finished); else its result, also written on its row (`error` when it failed)."""
    with db.connection() as conn:
        row = repo.claim_restore(conn, restore_id)
    if row is None:
        return None
    stored = row["request"]
    request = RestoreRequest(
        tenant_id=row["tenant_id"], since=datetime.fromisoformat(stored["since"]),
        until=datetime.fromisoformat(stored["until"]), reason=row["reason"],
        requested_by=row["requested_by"], dry_run=bool(stored.get("dry_run")),
    )  # fmt: skip
    try:
        result = restore_now(db, archive, request, options)
    except Exception as err:
        log.exception("restore %s failed", restore_id)
        failed = {"error": failure_message(err)}
        with db.connection() as conn:
            repo.finish_restore(conn, restore_id, state="failed", result=failed, audit_id=None)
        return failed
    with db.connection() as conn:
        repo.finish_restore(
            conn, restore_id, state="succeeded", result=result, audit_id=result.get("audit_id")
        )
    return result


def get_restore(db: Database, caller: Caller, restore_id: str) -> dict[str, Any]:
    """One restore and how it stands."""
    caller.require_operator("read restores")
    with db.connection() as conn:
        return repo.get_restore(conn, restore_id)


def list_restores(
    db: Database, caller: Caller, *, tenant_id: str | None, cursor: str | None, limit: int
) -> dict[str, Any]:
    """Restores, newest first."""
    caller.require_operator("read restores")
    page = page_of(cursor, limit)
    with db.connection() as conn:
        rows = repo.list_restores(conn, tenant_id=tenant_id, after=page.after, limit=page.limit)
    return paged(rows, limit)


def fail_stale_restores(db: Database) -> dict[str, int]:
    """Reconcile's step: fail the recorded restores whose run died or never started, each
    with its audit entry (every restore has one). Returns `{"restores_failed": n}`."""
    with db.connection() as conn, conn.transaction():
        failed = repo.fail_stale_restores(
            conn, running_quiet=RUNNING_QUIET, accepted_quiet=ACCEPTED_QUIET
        )
        for row in failed:
            audit_id = write_audit(
                conn, actor=row["requested_by"], action="archive.restore", object_type="tenant",
                object_id=row["tenant_id"],
                params={"tenant_id": row["tenant_id"], **row["request"], "reason": row["reason"],
                        "restore_id": row["id"], **row["result"]},
            )  # fmt: skip
            repo.set_audit_id(conn, row["id"], audit_id)
    if failed:
        log.warning("restores whose run stopped marked failed: %s", [r["id"] for r in failed])
    return {"restores_failed": len(failed)}


# -- where a recorded restore runs ------------------------------------------------------------


def start_payload(restore_id: str) -> bytes:
    """The asynchronous invocation of the replay function that runs a recorded restore."""
    return json.dumps({"restore_id": restore_id}).encode()


def invoker(lambda_client: Callable[[], Any], function_name: str) -> Callable[[str], None]:
    """Start a recorded restore in the replay function, asynchronously."""

    def invoke(restore_id: str) -> None:
        lambda_client().invoke(
            FunctionName=function_name, InvocationType="Event", Payload=start_payload(restore_id)
        )

    return invoke


def in_thread(run_here: Callable[[str], object]) -> Callable[[str], None]:
    """Start a recorded restore in a daemon thread of this (local, long-lived) process; tests
    and `hookline dev` wait for it with `hookline.replay.wait_for_local_replays`."""
    return lambda restore_id: start_in_thread(lambda: run_here(restore_id), restore_id)
