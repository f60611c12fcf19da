"""The management API's models of quarantined fan-out pairs (decision 0059)."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from hookline.management.models import Input, Page


class QuarantinedPair(BaseModel):
    """An (event, endpoint) pair whose matching raised: undecided until retried."""

    event_id: str
    endpoint_id: str
    tenant_id: str
    stage: str = Field(description="what found it: fanout, reconcile, replay or retry")
    reason: str
    failures: int
    quarantined_at: datetime
    last_failed_at: datetime


class QuarantinePage(Page):
    """Quarantined pairs, by event then endpoint id."""

    items: list[QuarantinedPair]


class QuarantineRetry(Input):
    """Which quarantined pairs to decide again: a tenant's (an operator may name one; none:
    every tenant's), only these events' when given, at most `limit`."""

    tenant_id: str | None = Field(default=None, max_length=100)
    event_ids: list[str] | None = Field(default=None, max_length=500)
    limit: int = Field(default=100, ge=1, le=500)


class StillFailing(BaseModel):
    """A pair that failed again, with the new reason."""

    event_id: str
    endpoint_id: str
    reason: str


class QuarantineRetried(BaseModel):
    """What a retry decided: deliveries made, pairs released without one (the pattern does
    not match, or the endpoint no longer takes the event), and those still failing."""

    delivered: int
    released: int
    still_failing: list[StillFailing]
