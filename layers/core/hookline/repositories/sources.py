"""Inbound sources: a provider configuration of a tenant.

Two things of a source are secrets and are stored sealed (`hookline.secretbox`): its
verification secrets, and an inline catch-up API key in `options.catchup.api_key`
(docs/decisions/0020-catch-up-credentials-sealed.md). Whatever this module returns without
secrets shows that key as `REDACTED`; `Source.options` keeps it sealed, and only the catch-up
opens it (`reveal_catchup_key`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import field
from typing import Any

import psycopg
from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import BadRequest, NotFound
from hookline.ids import new_id
from hookline.records import frozen
from hookline.repositories.api import Page, one_or_not_found
from hookline.secretbox import PREFIX, reveal, seal
from hookline.sqlfiles import query

REDACTED = "<redacted>"
"""What callers see for a stored catch-up API key; sent back in a PATCH, it keeps the key."""


@frozen
class Source:
    """What the receiver needs to verify a request of one source."""

    id: str
    tenant_id: str
    name: str
    scheme: str
    secrets: tuple[str, ...]
    tolerance_seconds: int
    enabled: bool
    options: dict[str, Any] = field(default_factory=dict)  # a catch-up API key stays sealed


def create_source(
    conn: Connection,
    *,
    tenant_id: str,
    name: str,
    scheme: str,
    secrets: Sequence[str],
    tolerance_seconds: int,
    options: dict[str, Any],
) -> dict[str, Any]:
    """Insert a source and return it (without its secrets, which are stored encrypted, and
    with a catch-up API key redacted)."""
    params = {
        "id": new_id("src"),
        "tenant_id": tenant_id,
        "name": name,
        "scheme": scheme,
        "secrets": [seal(conn, s) for s in secrets],
        "tolerance_seconds": tolerance_seconds,
        "options": Jsonb(seal_catchup_key(conn, options, stored=None)),
    }
    try:
        row = conn.execute(query("insert_source"), params).fetchone()
    except psycopg.errors.ForeignKeyViolation as err:
        raise NotFound(f"no tenant {tenant_id}") from err
    assert row is not None
    return _redacted(row)


def get_source(conn: Connection, source_id: str) -> Source:
    """The source with its secrets (decrypted), or NotFound."""
    row = conn.execute(query("get_source"), {"id": source_id}).fetchone()
    if row is None:
        raise NotFound("unknown source")
    return _source(conn, row)


def _source(conn: Connection, row: Any) -> Source:
    return Source(
        id=row["id"],
        tenant_id=row["tenant_id"],
        name=row["name"],
        scheme=row["scheme"],
        secrets=tuple(reveal(conn, s) for s in row["secrets"]),
        tolerance_seconds=row["tolerance_seconds"],
        enabled=row["enabled"],
        options=dict(row["options"]),
    )


def list_sources(conn: Connection, *, tenant_id: str | None = None) -> list[dict[str, Any]]:
    """Sources (without secrets), optionally of one tenant."""
    return [_redacted(r) for r in conn.execute(query("list_sources"), {"tenant_id": tenant_id})]


def set_source_enabled(conn: Connection, source_id: str, enabled: bool) -> None:
    """Enable or disable a source; NotFound if it does not exist."""
    if (
        conn.execute(query("set_source_enabled"), {"id": source_id, "enabled": enabled}).fetchone()
        is None
    ):
        raise NotFound(f"no source {source_id}")


# -- the management API: scoped to the caller's tenant, deleted sources not found --------------
# `tenant` is the caller's scope: None for an operator, else its tenant id. Another tenant's
# source, and a deleted one, is NotFound — the same answer as one that never existed.


def get_in_scope(conn: Connection, tenant: str | None, source_id: str) -> dict[str, Any]:
    """One live source in scope (without its secrets), or NotFound."""
    return _redacted(
        one_or_not_found(conn, "scoped_get_source", {"id": source_id, "tenant": tenant}, "source")
    )


def list_in_scope(
    conn: Connection, tenant: str | None, page: Page, *, tenant_id: str | None = None
) -> list[dict[str, Any]]:
    """Live sources in scope (without secrets), newest first."""
    params = {"tenant": tenant, "tenant_id": tenant_id, "after": page.after, "limit": page.limit}
    return [_redacted(r) for r in conn.execute(query("scoped_list_sources"), params)]


def set_enabled_in_scope(
    conn: Connection, tenant: str | None, source_id: str, enabled: bool
) -> None:
    """Enable or disable a live source in scope; NotFound otherwise."""
    params = {"id": source_id, "tenant": tenant, "enabled": enabled}
    one_or_not_found(conn, "scoped_set_source_enabled", params, "source")


def lock_in_scope(conn: Connection, tenant: str | None, source_id: str) -> Source:
    """A live source in scope with its secrets (decrypted; a catch-up key stays sealed),
    locked until the transaction ends; NotFound otherwise."""
    row = one_or_not_found(
        conn, "scoped_lock_source", {"id": source_id, "tenant": tenant}, "source"
    )
    return _source(conn, row)


def set_secrets_in_scope(
    conn: Connection, tenant: str | None, source_id: str, secrets: Sequence[str]
) -> None:
    """Replace a live source's secrets (sealed here)."""
    sealed = [seal(conn, s) for s in secrets]
    one_or_not_found(
        conn,
        "scoped_set_source_secrets",
        {"id": source_id, "tenant": tenant, "secrets": sealed},
        "source",
    )


def update_in_scope(
    conn: Connection,
    tenant: str | None,
    source_id: str,
    changes: dict[str, Any],
    *,
    stored_options: Mapping[str, Any],
) -> None:
    """Change a live source's name, tolerance or options (absent: kept); NotFound otherwise.
    New options replace the old whole; their catch-up API key is sealed, and `REDACTED` in its
    place keeps the key of `stored_options` (the source's options as stored)."""
    options = changes.get("options")
    if options is not None:
        options = seal_catchup_key(conn, options, stored=stored_options)
    params = {
        "id": source_id,
        "tenant": tenant,
        "name": changes.get("name"),
        "tolerance_seconds": changes.get("tolerance_seconds"),
        "options": Jsonb(options) if options is not None else None,
    }
    one_or_not_found(conn, "scoped_update_source", params, "source")


def delete_in_scope(conn: Connection, tenant: str | None, source_id: str) -> dict[str, Any]:
    """Soft-delete a live source in scope: disabled for good, secrets (a catch-up API key
    too) wiped; returns it."""
    deleted = one_or_not_found(
        conn, "scoped_delete_source", {"id": source_id, "tenant": tenant}, "source"
    )
    wiped = conn.execute(query("wipe_catchup_key"), {"id": source_id}).fetchone()
    if wiped is not None:
        deleted["options"] = wiped["options"]
    return _redacted(deleted)


# -- the catch-up API key in options: sealed at rest, redacted on the way out ------------------


def _catchup_key(options: Mapping[str, Any] | None) -> Any:
    catchup = options.get("catchup") if isinstance(options, Mapping) else None
    return catchup.get("api_key") if isinstance(catchup, Mapping) else None


def _with_catchup_key(options: Mapping[str, Any], key: str) -> dict[str, Any]:
    return {**options, "catchup": {**options["catchup"], "api_key": key}}


def seal_catchup_key(
    conn: Connection, options: Mapping[str, Any], *, stored: Mapping[str, Any] | None
) -> dict[str, Any]:
    """`options` to store: an inline catch-up API key sealed; `REDACTED` in its place keeps the
    key of `stored` (a client's GET, modify, PATCH), BadRequest when there is none. Anything
    else a client sends is a key, sealed as given (even text that looks sealed)."""
    key = _catchup_key(options)
    if key is None or key == "":
        return dict(options)
    if isinstance(key, bool) or not isinstance(key, (str, int)):
        raise BadRequest("options.catchup.api_key must be a string")
    if key == REDACTED:
        kept = _catchup_key(stored)
        if kept is None or kept == "":
            raise BadRequest(
                f'options.catchup.api_key is "{REDACTED}" but the source has no key to keep: '
                "send the key itself"
            )
        sealed = str(kept) if str(kept).startswith(PREFIX) else seal(conn, str(kept))
    else:
        sealed = seal(conn, str(key))
    return _with_catchup_key(options, sealed)


def redact_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` as callers see them: an inline catch-up API key shown as `REDACTED`."""
    key = _catchup_key(options)
    if key is None or key == "":
        return dict(options)
    return _with_catchup_key(options, REDACTED)


def reveal_catchup_key(conn: Connection, options: Mapping[str, Any]) -> dict[str, Any]:
    """`options` with the inline catch-up API key opened (a legacy plaintext one as it is),
    for the catch-up that calls the provider with it."""
    key = _catchup_key(options)
    if not isinstance(key, str) or not key:
        return dict(options)
    return _with_catchup_key(options, reveal(conn, key))


def _redacted(row: Any) -> dict[str, Any]:
    out = dict(row)
    if isinstance(out.get("options"), Mapping):
        out["options"] = redact_options(out["options"])
    return out
