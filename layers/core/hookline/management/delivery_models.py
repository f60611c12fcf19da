"""The management API's models of deliveries: a delivery, its attempts, a resend, and the
status summary of what is pending, failing and flowing."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel

from hookline.management.models import Page


class Delivery(BaseModel):
    """One event x one endpoint."""

    id: str
    event_id: str
    endpoint_id: str
    tenant_id: str
    state: str
    attempt_count: int
    next_attempt_at: datetime
    deadline_at: datetime
    last_status: int | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


class DeliveryPage(Page):
    """Deliveries, newest first."""

    items: list[Delivery]


class Attempt(BaseModel):
    """One HTTP try."""

    id: int
    delivery_id: str
    attempted_at: datetime
    duration_ms: int
    status_code: int | None
    response_excerpt: str | None
    error_class: str | None


class AttemptPage(Page):
    """Attempts of a delivery, oldest first."""

    items: list[Attempt]


class Resent(BaseModel):
    """What a resend did (the replay summary of one delivery)."""

    delivery_id: str
    enqueued: int
    skipped: dict[str, int]
    audit_id: int | None


class Status(BaseModel):
    """How the caller's part of the pipeline stands."""

    deliveries: dict[str, int]
    events_24h: int
    outbox_pending: int
    outbox_oldest_seconds: float | None
    endpoints_enabled: int
    endpoints_disabled: int
