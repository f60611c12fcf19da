"""The management API's models of inbound sources: what creating, updating and rotating one
takes, and what a source (with its activity) reads as."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from hookline.management.models import REPLAYED_NOTE, Input, Page


class SourceCreate(Input):
    """A new inbound source. Without `secret`, Hookline generates one (returned once)."""

    tenant_id: str | None = Field(default=None, max_length=100)
    scheme: str = Field(min_length=1, max_length=50)
    name: str | None = Field(default=None, max_length=200)
    secret: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="The verification material: a shared secret, or the provider's public key "
        "for Ed25519 (Discord) and ECDSA (SendGrid) schemes; checked against the scheme.",
    )
    secrets: list[str] | None = Field(
        default=None, min_length=2, max_length=2, description="Two secrets during a rotation."
    )
    tolerance_seconds: int = Field(default=300, ge=1, le=86_400)
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Scheme options (`verify_token`, `public_url`, the hmac scheme's), and "
        "`catchup` (provider catch-up). An inline "
        "`catchup.api_key` is stored encrypted and never shown again, not even in this "
        'answer: every answer carries `"<redacted>"` in its place. `catchup.api_base` and '
        "`catchup.api_key_secret_arn` are an operator's to set (403 for a tenant).",
    )


class SourceActivity(BaseModel):
    """What a source last saw: handshakes and rejections store no event (decision 0038)."""

    last_received_at: datetime | None = Field(description="The latest of the three below.")
    last_accepted_at: datetime | None
    last_handshake_at: datetime | None
    last_handshake_kind: str | None
    handshakes: int
    last_rejected_at: datetime | None
    last_rejected_reason: str | None
    rejected: dict[str, int] = Field(description="Rejections by reason.")


class Source(BaseModel):
    """An inbound source (never with its secrets)."""

    id: str
    tenant_id: str
    name: str
    scheme: str
    tolerance_seconds: int
    options: dict[str, Any] = Field(
        description='An inline `catchup.api_key` is shown as `"<redacted>"`.'
    )
    enabled: bool
    path: str
    created_at: datetime
    activity: SourceActivity | None = Field(
        default=None, description="When it last accepted, handshook and rejected (one source)."
    )


class SourceCreated(Source):
    """A created source; `secret` only when Hookline generated it, shown this once (a
    repeat of the request with its Idempotency-Key answers null and `secret_note`)."""

    secret: str | None = None
    secret_note: str | None = Field(default=None, description=REPLAYED_NOTE)


class SourceUpdate(Input):
    """The fields to change; absent (or null) fields keep their value. Not the secret (rotate
    it) nor the scheme (create a new source): `options` replaces the scheme options whole and
    is checked against the scheme as on create."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    tolerance_seconds: int | None = Field(default=None, ge=1, le=86_400)
    options: dict[str, Any] | None = Field(
        default=None,
        description='Replaces the options whole. `catchup.api_key: "<redacted>"` (as read) '
        "keeps the stored key; any other value replaces it; leaving it out removes it. "
        "`catchup.api_base` and `catchup.api_key_secret_arn` are an operator's: a tenant that "
        "changes one gets 403, and what an operator set is kept, sent back or not.",
    )


class SourceDeleted(Source):
    """A deleted source: it no longer receives (404 to providers) and keeps no secret; the
    events it received stay readable."""

    deleted_at: datetime


class SourcePage(Page):
    """Sources, newest first."""

    items: list[Source]


class SourceRotate(Input):
    """A new secret for a source (generated when omitted). The previous one keeps verifying
    until the next rotation unless `keep_previous` is false."""

    secret: str | None = Field(default=None, min_length=1, max_length=1000)
    keep_previous: bool = True


class SourceRotated(BaseModel):
    """The rotated source; `secret` only when Hookline generated it, shown this once."""

    id: str
    secret: str | None = None
    previous_kept: bool
