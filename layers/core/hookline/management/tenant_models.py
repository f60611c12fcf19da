"""The management API's models of tenants: creating and reading one, its portal links and its
erasure."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from hookline.management.models import Input, Page


class TenantCreate(Input):
    """A new tenant."""

    name: str = Field(min_length=1, max_length=200)
    group: str | None = Field(default=None, max_length=100, description="tenant group")


class Tenant(BaseModel):
    """A tenant."""

    id: str
    name: str
    group: str
    created_at: datetime
    external_id: str | None = Field(
        default=None,
        description="The ExternalId this tenant's AWS roles must require of Hookline "
        "(AWS destination kinds, decision 0046)",
    )


class TenantPage(Page):
    """Tenants, newest first."""

    items: list[Tenant]


class PortalLinkCreate(Input):
    """A link to one tenant's portal (docs/decisions/0042)."""

    ttl_seconds: int = Field(default=3600, ge=60, le=86_400, description="how long it opens")
    base_url: str | None = Field(
        default=None,
        max_length=500,
        pattern=r"^https?://[^\s/?#]+(/[^\s?#]*)?$",
        description="where the portal is served: this API's own address (the default) or "
        "one the operator lists in HOOKLINE_PORTAL_BASE_URLS",
    )


class PortalLink(BaseModel):
    """A portal link: open it once, within `expires_at`; `id` revokes it."""

    id: str
    url: str
    expires_at: datetime


class PortalLinkState(BaseModel):
    """A portal link as recorded (its token is never kept)."""

    id: str
    tenant_id: str
    created_by: str
    created_at: datetime
    expires_at: datetime
    used_at: datetime | None
    revoked_at: datetime | None
    live_sessions: int


class PortalLinkPage(Page):
    """A page of portal links, newest first."""

    items: list[PortalLinkState]


class PortalLinkRevoked(BaseModel):
    """A revoked link, and how many sessions it opened that ended."""

    id: str
    revoked: bool
    sessions_ended: int


class TenantErased(BaseModel):
    """What an erasure removed, counted per kind (never the data itself)."""

    model_config = ConfigDict(extra="allow")

    tenant_id: str
