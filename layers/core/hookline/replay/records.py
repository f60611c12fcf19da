"""Replays through the API (docs/decisions/0016): a request is validated and confined to the
caller's scope, recorded as a `replays` row, and run elsewhere — by the replay function
invoked asynchronously on AWS, or by a background thread of this process locally — because a
paced replay outlives API Gateway's 29 seconds. `hookline.replay.continuation` runs it."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from hookline.db import Database
from hookline.errors import NotFound, ReplayNotStarted
from hookline.ids import new_id
from hookline.management.access import Caller
from hookline.management.paging import page_of, paged
from hookline.replay.request import ReplayRequest, parse_request
from hookline.repositories import api as api_repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import replay as repo
from hookline.repositories.replay import Window

log = logging.getLogger(__name__)

SHOWN_MISSING = 5


# -- creating ---------------------------------------------------------------------------------


def create_replay(
    db: Database,
    caller: Caller,
    body: dict[str, Any],
    *,
    groups: Sequence[str],
    start: Callable[[str], None],
) -> dict[str, Any]:
    """Validate a replay request as the caller may make it, record it, and `start` its runner.

    The requester is the caller. A tenant caller replays only its own tenant: ids it cannot
    see are answered as unknown (404, like ids that do not exist), a window is confined to
    its tenant, and moving a dead-letter queue (shared by a tenant group) is 403.
    """
    doc = {k: v for k, v in body.items() if v is not None}
    if doc.get("redrive_dlq"):
        caller.require_operator("redrive a dead-letter queue (it holds every tenant's messages)")
    request = parse_request({**doc, "requested_by": caller.principal}, groups=groups)
    with db.connection() as conn, conn.transaction():
        request, tenant_id = _confine(conn, caller, request)
        row = repo.insert_replay(
            conn,
            id=new_id("rpl"),
            scope=caller.scope,
            tenant_id=tenant_id,
            requested_by=request.requested_by,
            reason=request.reason,
            request=_stored_request(request),
        )
    try:
        start(row["id"])
    except Exception as err:
        log.exception("could not start replay %s", row["id"])
        with db.connection() as conn:
            repo.finish_replay(
                conn,
                row["id"],
                state="failed",
                result={"error": f"the replay runner could not be started ({type(err).__name__})"},
                audit_id=None,
            )
        raise ReplayNotStarted(
            "the replay could not be started; nothing was replayed, try again"
        ) from err
    return get_replay(db, caller, row["id"])


def _confine(conn: Any, caller: Caller, request: ReplayRequest) -> tuple[ReplayRequest, str | None]:
    """The request limited to what the caller may see, and the one tenant it touches (None:
    several, or the whole deployment)."""
    scope = caller.tenant
    if request.selector in ("delivery_ids", "event_ids"):
        what = "deliveries" if request.selector == "delivery_ids" else "events"
        ids = list(request.delivery_ids or request.event_ids)
        seen = repo.visible_tenants(conn, what, scope, ids)
        missing = [i for i in ids if i not in seen]
        if missing:
            noun = "delivery" if what == "deliveries" else "event"
            shown = ", ".join(missing[:SHOWN_MISSING])
            extra = len(missing) - SHOWN_MISSING
            more = f" and {extra} more" if extra > 0 else ""
            raise NotFound(f"no {noun} {shown}{more}")
        tenants = set(seen.values())
        return request, (tenants.pop() if len(tenants) == 1 else None)
    if request.selector == "endpoint":
        assert request.endpoint_id is not None
        endpoint = endpoint_repo.get_in_scope(conn, scope, request.endpoint_id)
        return request, str(endpoint["tenant_id"])
    if request.selector == "window":
        assert request.window is not None
        wanted = request.window.tenant_id
        if wanted is not None:
            api_repo.get_tenant(conn, scope, wanted)  # another tenant's: not found
        tenant = wanted or scope
        window = Window(request.window.since, request.window.until, tenant, request.window.types)
        return replace(request, window=window), tenant
    return request, None  # redrive_dlq: operators only, every tenant of the group


def _stored_request(request: ReplayRequest) -> dict[str, Any]:
    """The request as it will run: the window in absolute times, defaults filled in."""
    return {k: v for k, v in request.parameters().items() if k != "selector"}


# -- reading ----------------------------------------------------------------------------------


_INTERNAL = ("scope", "resume", "handed_off_at", "reinvoked")


def _out(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in _INTERNAL}


def get_replay(db: Database, caller: Caller, replay_id: str) -> dict[str, Any]:
    """One replay in scope (a tenant sees the replays confined to it)."""
    with db.connection() as conn:
        return _out(repo.get_replay(conn, caller.tenant, replay_id))


def list_replays(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    state: str | None,
    cursor: str | None,
    limit: int,
) -> dict[str, Any]:
    """Replays in scope, newest first."""
    page = page_of(cursor, limit)
    with db.connection() as conn:
        rows = repo.list_replays(
            conn,
            caller.tenant,
            tenant_id=tenant_id,
            state=state,
            after=page.after,
            limit=page.limit,
        )
    return paged([_out(r) for r in rows], limit)
