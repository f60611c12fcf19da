"""Events through the management API: a tenant publishes its own, and reads or lists those in
its scope (another tenant's event is NotFound)."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from hookline.catalogue_limits import DEFAULT_LIMITS, CatalogueLimits
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.ingest import Accepted, publish
from hookline.management.access import Caller
from hookline.management.paging import check_window, page_of, paged
from hookline.management.payloads import MAX_RENDERED_DEPTH, nesting_depth
from hookline.repositories import api as repo
from hookline.settings import Settings

if TYPE_CHECKING:
    from hookline.fanout import FanoutOptions


def publish_event(
    db: Database,
    settings: Settings,
    caller: Caller,
    *,
    tenant_id: str | None,
    type: Any,
    payload: Any,
    idempotency_key: str | None,
    limits: CatalogueLimits = DEFAULT_LIMITS,
    traceparent: str | None = None,
    fanout: FanoutOptions | None = None,
) -> Accepted:
    """A tenant's own event into the ledger; the Idempotency-Key is its dedupe key. A payload
    over `limits` (size, depth, integers, validation steps) is refused, nothing stored.
    `traceparent`: the publish span's, kept on the outbox row (decision 0070). With `fanout`
    it is fanned out as it is stored and `Accepted.to_send` is for the caller to send once
    this returns (decision 0076)."""
    tenant = caller.tenant_for(tenant_id)
    if not isinstance(tenant, str):
        raise BadRequest("tenant_id must be a string")
    with db.connection() as conn:
        return publish(
            conn,
            tenant_id=tenant,
            type=type,
            payload=payload,
            settings=settings,
            idempotency_key=idempotency_key,
            limits=limits,
            traceparent=traceparent,
            fanout=fanout,
        )


def get_event(db: Database, caller: Caller, event_id: str) -> dict[str, Any]:
    """One event in scope, with its payload (JSON when it is JSON, else base64)."""
    with db.connection() as conn:
        row = repo.get_event(conn, caller.tenant, event_id)
    raw = bytes(row.pop("payload"))
    try:
        payload = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        row["payload_base64"] = base64.b64encode(raw).decode()
    else:
        if nesting_depth(payload) <= MAX_RENDERED_DEPTH:
            row["payload"] = payload
        else:
            row["payload_base64"] = base64.b64encode(raw).decode()
    row["headers"] = {str(k): str(v) for k, v in dict(row["headers"]).items()}
    return row


def list_events(
    db: Database, caller: Caller, *, filters: dict[str, Any], cursor: str | None, limit: int
) -> dict[str, Any]:
    """Events in scope, newest first, filtered by tenant, type, source and time window."""
    check_window(filters)
    with db.connection() as conn:
        rows = repo.list_events(conn, caller.tenant, page_of(cursor, limit), filters)
    return paged(rows, limit)
