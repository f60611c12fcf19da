"""The management API's models for a tenant's portal links and its erasure."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from hookline.management.models import Input


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
