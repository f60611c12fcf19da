"""Operator services behind the CLI (and later the management API): tenants and sources."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.repositories import sources as source_repo
from hookline.repositories import tenants as tenant_repo
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
