"""The management API's models of replays: what a replay request selects, and a replay's
progress and result."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from hookline.management.models import STATES, Input, Page

REPLAY_STATES = Literal["accepted", "running", "succeeded", "failed"]


class ReplayCreate(Input):
    """A replay: exactly one selector (`delivery_ids`, `event_ids`, `endpoint_id` + `since`,
    `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
    Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester."""

    delivery_ids: list[str] | None = Field(default=None, max_length=100_000)
    event_ids: list[str] | None = Field(default=None, max_length=100_000)
    endpoint_id: str | None = Field(default=None, max_length=100)
    tenant_id: str | None = Field(default=None, max_length=100)
    event_type: str | None = Field(default=None, max_length=255)
    since: str | None = Field(default=None, max_length=64)
    until: str | None = Field(default=None, max_length=64)
    states: list[STATES] | None = Field(default=None, max_length=6)
    refanout: bool = False
    redrive_dlq: str | None = Field(default=None, max_length=100)
    dry_run: bool = False
    max_per_second: float | None = Field(
        default=None, ge=0.01, le=10_000, description="deliveries per second (none: no limit)"
    )
    limit: int | None = Field(default=None, ge=1, le=100_000)
    reason: str = Field(min_length=1, max_length=2000)


class Replay(BaseModel):
    """A replay and how far it is. `result` is the replay summary once it has finished
    (`error` says why when it failed). A replay larger than one run of the replay function
    continues in the next; `runs` counts them, `done`/`total` count across them."""

    id: str
    state: REPLAY_STATES
    tenant_id: str | None
    requested_by: str
    reason: str
    request: dict[str, Any]
    total: int | None
    done: int
    runs: int = Field(description="runs of the replay function so far (0: not started)")
    result: dict[str, Any] | None
    audit_id: int | None
    created_at: datetime
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None


class ReplayPage(Page):
    """Replays, newest first."""

    items: list[Replay]
