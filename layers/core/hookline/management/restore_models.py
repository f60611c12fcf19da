"""The management API's models of restores from the archive (docs/decisions/0051)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hookline.management.models import Input, Page


class RestoreCreate(Input):
    """Put a tenant's archived events received in [since, until) back into the ledger and
    deliver them again, with the webhook-ids they had (operators only). Times are ISO 8601 or
    a duration ago (`2h`, `7d`). Events already in the ledger are skipped and counted. The
    caller is recorded as requester."""

    tenant_id: str = Field(min_length=1, max_length=100)
    since: str = Field(min_length=1, max_length=64)
    until: str = Field(min_length=1, max_length=64)
    reason: str = Field(min_length=1, max_length=2000, description="kept in the audit log")
    dry_run: bool = Field(default=False, description="count what would be restored; change nothing")


class Restore(BaseModel):
    """A restore and how it stands. `result` holds the counts once it has finished
    (`archived`, `restored`, `skipped` — already in the ledger), or `error` if it failed."""

    id: str
    state: Literal["accepted", "running", "succeeded", "failed"]
    tenant_id: str
    requested_by: str
    reason: str
    request: dict[str, Any]
    result: dict[str, Any] | None
    audit_id: int | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class RestorePage(Page):
    """Restores, newest first."""

    items: list[Restore]
