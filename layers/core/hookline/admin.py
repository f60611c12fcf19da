"""Operator services behind the CLI (and later the management API): tenants, sources,
endpoints."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.filters import validate_filters
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import sources as source_repo
from hookline.repositories import tenants as tenant_repo
from hookline.settings import Settings
from hookline.signing import generate_secret
from hookline.ssrf import check_url
from hookline.verifiers import SCHEMES, SourceConfig, verifier_for


def add_tenant(
    db: Database, config: HooklineConfig, *, name: str, group: str | None
) -> dict[str, Any]:
    """Create a tenant in a known tenant group."""
    group = group or config.default_group
    if group not in config.group_names:
        raise BadRequest(f"unknown tenant group {group!r}; known: {', '.join(config.group_names)}")
    if not name.strip():
        raise BadRequest("a tenant needs a name")
    with db.connection() as conn:
        row = tenant_repo.create_tenant(conn, name=name.strip(), tenant_group=group)
    return {"id": row["id"], "name": row["name"], "group": row["tenant_group"]}


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
    """Create an inbound source; its scheme and options are validated before saving."""
    if scheme not in SCHEMES:
        raise BadRequest(f"unknown scheme {scheme!r}; known: {', '.join(sorted(SCHEMES))}")
    secrets = [s for s in secrets if s]
    if not 1 <= len(secrets) <= 2:
        raise BadRequest("a source takes one or two secrets (two during rotation)")
    if tolerance_seconds <= 0:
        raise BadRequest("tolerance must be a positive number of seconds")
    options = options or {}
    try:
        verifier_for(scheme, SourceConfig(secrets, tolerance_seconds, options))
    except ValueError as err:
        raise BadRequest(str(err)) from err
    with db.connection() as conn:
        row = source_repo.create_source(
            conn,
            tenant_id=tenant_id,
            name=name or scheme,
            scheme=scheme,
            secrets=secrets,
            tolerance_seconds=tolerance_seconds,
            options=options,
        )
    return {
        "id": row["id"],
        "tenant_id": tenant_id,
        "scheme": scheme,
        "name": row["name"],
        "path": f"/in/{row['id']}",
    }


def parse_rate_limit(text: str | None) -> float | None:
    """`50/s`, `600/m` or `3600/h` (or a bare number per second) → requests per second."""
    if text is None or text == "":
        return None
    amount, _, unit = text.strip().partition("/")
    per = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0}.get(unit.strip().lower())
    try:
        value = float(amount)
    except ValueError:
        per = None
        value = 0.0
    if per is None or not value > 0:
        raise BadRequest(f"rate limit {text!r}: use a positive number per s, m or h, e.g. 50/s")
    return value / per


def parse_headers(lines: Sequence[str]) -> dict[str, str]:
    """`Name: value` lines → a header dict; signature and transport headers are refused."""
    from hookline.delivery import RESERVED_HEADERS

    headers: dict[str, str] = {}
    for line in lines:
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name or any(c.isspace() for c in name) or "\n" in value or "\r" in value:
            # The name only: a header value may be a credential (never in an error or a log).
            shown = repr(name) if sep and name and not any(c.isspace() for c in name) else "line"
            raise BadRequest(f"header {shown}: use 'Name: value' on one line")
        if name.lower() in RESERVED_HEADERS:
            raise BadRequest(f"header {name!r} is set by Hookline and cannot be overridden")
        headers[name] = value
    return headers


def add_endpoint(
    db: Database,
    settings: Settings,
    *,
    tenant_id: str,
    url: str,
    event_types: Sequence[str] = (),
    max_concurrency: int = 5,
    rate_limit: str | None = None,
    headers: Sequence[str] = (),
    description: str = "",
    retry_on_4xx: bool = False,
) -> dict[str, Any]:
    """Create an endpoint after the SSRF check; returns it with its signing secret (shown once)."""
    target = check_url(
        url, allow_private=settings.allow_private_targets, allow_http=settings.allow_http_targets
    )
    if not 1 <= max_concurrency <= 1000:
        raise BadRequest("max concurrency must be between 1 and 1000")
    secret = generate_secret()
    with db.connection() as conn:
        row = endpoint_repo.create_endpoint(
            conn,
            tenant_id=tenant_id,
            url=target.url,
            secret=secret,
            description=description,
            event_types=validate_filters(list(event_types)),
            max_concurrency=max_concurrency,
            rate_limit_per_second=parse_rate_limit(rate_limit),
            headers=parse_headers(headers),
            retry_on_4xx=retry_on_4xx,
        )
    return {**row, "secret": secret}


def rotate_endpoint_secret(db: Database, settings: Settings, endpoint_id: str) -> dict[str, Any]:
    """A new signing secret; the previous ones keep signing for the configured overlap."""
    overlap = timedelta(hours=settings.config.secret_rotation_overlap_hours)
    secret = generate_secret()
    with db.connection() as conn:
        endpoint_repo.rotate_secret(conn, endpoint_id, secret, overlap)
    return {
        "id": endpoint_id,
        "secret": secret,
        "previous_secrets_expire_in_hours": overlap.total_seconds() / 3600,
    }
