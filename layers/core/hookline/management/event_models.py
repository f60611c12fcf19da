"""The management API's models of events and of the event-type catalogue: publishing one,
reading and listing them, and a tenant's types."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from hookline.management.models import Input, Page


class EventPublish(Input):
    """A tenant's own event."""

    model_config = ConfigDict(extra="ignore")
    tenant_id: str | None = Field(default=None, max_length=100)
    type: str
    payload: Any


class Published(BaseModel):
    """The published event's id; `duplicate` when its Idempotency-Key was seen before."""

    id: str
    duplicate: bool


class EventSummary(BaseModel):
    """An event in a list."""

    id: str
    tenant_id: str
    source_id: str | None
    origin: str
    type: str
    received_at: datetime
    size: int


class Event(BaseModel):
    """One event: its payload as JSON when it is JSON (nested at most 200 levels deep), else
    the exact bytes in base64."""

    id: str
    tenant_id: str
    source_id: str | None
    origin: str
    type: str
    content_type: str
    headers: dict[str, str]
    received_at: datetime
    fanned_out_at: datetime | None
    payload: Any = None
    payload_base64: str | None = None


class EventPage(Page):
    """Events, newest first."""

    items: list[EventSummary]


# -- event types ------------------------------------------------------------------------------


class EventTypeCreate(Input):
    """A new catalogue entry. With a `schema` (a JSON Schema, Draft 2020-12 unless `$schema`
    says otherwise), payloads published with this type must match it."""

    tenant_id: str | None = Field(default=None, max_length=100)
    name: str = Field(
        min_length=1, max_length=255, description="dotted lowercase, such as invoice.paid"
    )
    description: str = Field(default="", max_length=2000)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class EventTypeUpdate(Input):
    """The fields to change; absent fields keep their value. `schema: null` removes the
    schema (payloads are then no longer validated)."""

    description: str | None = Field(default=None, max_length=2000)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class EventType(BaseModel):
    """A catalogue entry. `archived` types no longer validate and are hidden from lists
    unless asked for."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    tenant_id: str
    name: str
    description: str
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    archived: bool
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime


class EventTypePage(Page):
    """Event types, newest first."""

    items: list[EventType]
