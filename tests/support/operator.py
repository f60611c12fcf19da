"""An operator setting things up for a test, through the audited management service (what
`POST /v1/tenants`, `/v1/sources` and `/v1/endpoints` run), in the terms tests write them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.management import endpoint_service, source_service, tenant_service
from hookline.management.access import Caller
from hookline.management.inputs import parse_headers, parse_rate_limit
from hookline.settings import Settings

OPERATOR = Caller("operator@tests", "*")


def add_tenant(
    db: Database, config: HooklineConfig, *, name: str, group: str | None
) -> dict[str, Any]:
    """A new tenant in `group` (the default group when None)."""
    return tenant_service.create_tenant(db, config, OPERATOR, name=name, group=group)


def add_source(
    db: Database,
    *,
    tenant_id: str,
    scheme: str,
    secrets: Sequence[str],
    name: str | None = None,
    tolerance_seconds: int = 300,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A new inbound source verifying with `secrets` (two: the first is the newer, as after a
    rotation that kept the previous one)."""
    *newer, oldest = secrets
    body = {
        "tenant_id": tenant_id, "scheme": scheme, "secret": oldest, "name": name,
        "tolerance_seconds": tolerance_seconds, "options": options or {},
    }  # fmt: skip
    source = source_service.create_source(db, OPERATOR, body)
    for secret in reversed(newer):
        source_service.rotate_source_secret(
            db, OPERATOR, source["id"], secret=secret, keep_previous=True
        )
    return source


def add_endpoint(
    db: Database,
    settings: Settings,
    *,
    tenant_id: str,
    url: str | None,
    event_types: Sequence[str] = (),
    max_concurrency: int = 5,
    rate_limit: str | None = None,
    headers: Sequence[str] = (),
    description: str = "",
    retry_on_4xx: bool = False,
    **options: Any,
) -> dict[str, Any]:
    """A new endpoint (SSRF-checked under `settings`), with its signing secret. `rate_limit`
    and `headers` are written as an operator types them: `2/s`, `X-Team: payments`;
    `options` are further API fields (content_filter, input_transformer, ...)."""
    body = {
        "tenant_id": tenant_id,
        "url": url,
        "event_types": list(event_types),
        "max_concurrency": max_concurrency,
        "rate_limit_per_second": parse_rate_limit(rate_limit),
        "headers": parse_headers(headers),
        "description": description,
        "retry_on_4xx": retry_on_4xx,
        **options,
    }
    return endpoint_service.create_endpoint(db, settings, OPERATOR, body)


def rotate_endpoint_secret(db: Database, settings: Settings, endpoint_id: str) -> dict[str, Any]:
    """A new signing secret; the earlier ones keep signing for the configured overlap."""
    return endpoint_service.rotate_endpoint_secret(db, settings, OPERATOR, endpoint_id)
