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
        description="where the portal is served (default: this API's own address)",
    )


class PortalLink(BaseModel):
    """A portal link: open it within `expires_at`."""

    url: str
    expires_at: datetime


class TenantErased(BaseModel):
    """What an erasure removed, counted per kind (never the data itself)."""

    model_config = ConfigDict(extra="allow")

    tenant_id: str
