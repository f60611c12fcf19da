"""Quarantined fan-out pairs through the management API and the CLI, in the caller's scope
(decision 0059): list them with their reasons, and retry them once the cause is fixed."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from hookline.db import Database
from hookline.management.access import Caller
from hookline.management.audit import audit
from hookline.management.paging import page_of, paged
from hookline.repositories import quarantine as repo

MAX_RETRY = 500  # pairs decided again per request (one transaction)


def list_quarantined(
    db: Database, caller: Caller, *, tenant_id: str | None, cursor: str | None, limit: int
) -> dict[str, Any]:
    """Quarantined pairs in scope (a tenant caller sees only its own), oldest event first."""
    scope = caller.tenant if caller.tenant is not None else tenant_id
    page = page_of(cursor, limit)
    after = page.after if isinstance(page.after, str) else None
    with db.connection() as conn:
        rows = repo.list_page(conn, tenant_id=scope, limit=page.limit, after=after)
    return paged(rows, limit, key="key")


def retry_quarantined(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    event_ids: Sequence[str] | None,
    limit: int,
    deadline: timedelta,
) -> dict[str, Any]:
    """Decide up to `limit` quarantined pairs in scope again (audited): delivered if the
    pattern matches now, released if it does not, kept with the new reason if it still
    fails. `deadline` is a new delivery's, as the fan-out's."""
    scope = caller.tenant if caller.tenant is not None else tenant_id
    bounded = min(max(limit, 1), MAX_RETRY)
    with db.connection() as conn:
        retried = repo.retry(
            conn, tenant_id=scope, event_ids=event_ids, limit=bounded, deadline=deadline
        )
        result = retried.as_dict()
        audit(conn, caller, "fanout_quarantine.retry", "tenant", scope or "*",
              {"event_ids": list(event_ids or [])[:50], "limit": bounded,
               "delivered": result["delivered"], "released": result["released"],
               "still_failing": len(result["still_failing"])})  # fmt: skip
    return result
