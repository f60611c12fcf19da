"""Inbound sources through the management API, each in the caller's scope: create, read,
list, enable/disable, rotate the secret, update and delete.

A source of another tenant is answered exactly like one that does not exist (NotFound).
Changes (deletes too) and secret rotations are audited with the caller's principal. A deleted
source is NotFound like a missing one; the events it received stay readable
(docs/decisions/0019-soft-delete.md).
"""

from __future__ import annotations

from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management import source_rules
from hookline.management.access import Caller
from hookline.management.audit import audit
from hookline.management.paging import page_of, paged
from hookline.repositories import api as repo
from hookline.repositories import sources as source_repo
from hookline.repositories.source_activity import source_activity
from hookline.signing import generate_secret
from hookline.verifiers import SourceConfig, verifier_for
from hookline.verifiers.schemes import SCHEMES


def _source_out(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "path": f"/in/{row['id']}"}


def create_source(db: Database, caller: Caller, body: dict[str, Any]) -> dict[str, Any]:
    """A new inbound source; a secret is generated when none is given (returned once).
    Audited with its plain fields' values and its secrets' names."""
    tenant_id = caller.tenant_for(body.get("tenant_id"))
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
    options = source_rules.guard_catchup_options(
        caller, body.get("options") or {}, None, tenant_id=tenant_id
    )
    # One secret, or two (a rotation's newer and older); generated when none is given.
    given = [s for s in body.get("secrets") or [body.get("secret")] if s]
    generated = None if given else generate_secret()
    scheme = body["scheme"]
    secrets = given or [generated or ""]
    tolerance = body.get("tolerance_seconds", 300)
    if scheme not in SCHEMES:
        raise BadRequest(f"unknown scheme {scheme!r}; known: {', '.join(sorted(SCHEMES))}")
    _check_source(scheme, secrets, tolerance, options)
    with db.connection() as conn, conn.transaction():
        created = source_repo.create_source(
            conn, tenant_id=tenant_id, name=body.get("name") or scheme, scheme=scheme,
            secrets=secrets, tolerance_seconds=tolerance, options=options,
        )  # fmt: skip
        audit(
            conn, caller, "create", "source", created["id"],
            source_rules.created(created, secret_given=generated is None),
        )  # fmt: skip
    return {**get_source(db, caller, created["id"]), "secret": generated}


def get_source(db: Database, caller: Caller, source_id: str) -> dict[str, Any]:
    """One source in scope, without secrets, with its activity (decision 0038)."""
    with db.connection() as conn:
        row = source_repo.get_in_scope(conn, caller.tenant, source_id)
        activity = source_activity(conn, row["tenant_id"], source_id)
    return {**_source_out(row), "activity": activity}


def list_sources(
    db: Database, caller: Caller, *, tenant_id: str | None, cursor: str | None, limit: int
) -> dict[str, Any]:
    """Sources in scope, without secrets."""
    with db.connection() as conn:
        rows = source_repo.list_in_scope(
            conn, caller.tenant, page_of(cursor, limit), tenant_id=tenant_id
        )
    return paged([_source_out(r) for r in rows], limit)


def set_source_enabled(
    db: Database, caller: Caller, source_id: str, *, enabled: bool
) -> dict[str, Any]:
    """Enable or disable a source (a disabled source answers 404 to providers)."""
    with db.connection() as conn:
        source_repo.set_enabled_in_scope(conn, caller.tenant, source_id, enabled)
        audit(conn, caller, "enable" if enabled else "disable", "source", source_id, {})
    return get_source(db, caller, source_id)


def rotate_source_secret(
    db: Database, caller: Caller, source_id: str, *, secret: str | None, keep_previous: bool
) -> dict[str, Any]:
    """A new secret for a source; the previous one keeps verifying unless told otherwise."""
    new_secret = secret or generate_secret()
    with db.connection() as conn, conn.transaction():
        source = source_repo.lock_in_scope(conn, caller.tenant, source_id)
        stored = source.secrets
        secrets = [new_secret] + ([stored[0]] if keep_previous and stored else [])
        _check_source(source.scheme, secrets, source.tolerance_seconds, source.options)
        source_repo.set_secrets_in_scope(conn, caller.tenant, source_id, secrets)
        audit(conn, caller, "rotate_secret", "source", source_id, {"keep_previous": keep_previous})
    return {
        "id": source_id,
        "secret": None if secret else new_secret,
        "previous_kept": keep_previous and len(secrets) == 2,
    }


def update_source(
    db: Database, caller: Caller, source_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Change a source's name, timestamp tolerance or scheme options, checked as on create.
    Never its secret (rotate it) nor its scheme (that is a new source)."""
    changes: dict[str, Any] = {k: v for k, v in body.items() if v is not None}
    if "name" in changes:
        changes["name"] = changes["name"].strip()
        if not changes["name"]:
            raise BadRequest("a source's name cannot be blank")
    with db.connection() as conn, conn.transaction():
        source = source_repo.lock_in_scope(conn, caller.tenant, source_id)
        if "options" in changes:
            changes["options"] = source_rules.guard_catchup_options(
                caller, changes["options"], source.options, tenant_id=source.tenant_id
            )
        _check_source(
            source.scheme,
            list(source.secrets),
            changes.get("tolerance_seconds", source.tolerance_seconds),
            changes.get("options", source.options),
        )
        source_repo.update_in_scope(
            conn, caller.tenant, source_id, changes, stored_options=source.options
        )
        before = {k: getattr(source, k) for k in source_rules.PLAIN_FIELDS} | {
            "options": source.options
        }
        params = source_rules.changed(before, changes, stored_options=source.options)
        audit(conn, caller, "update", "source", source_id, params)
    return get_source(db, caller, source_id)


def delete_source(db: Database, caller: Caller, source_id: str) -> dict[str, Any]:
    """Soft-delete a source: providers posting to it get 404 as for an unknown source, its
    secrets are wiped, and the events it received stay readable."""
    with db.connection() as conn, conn.transaction():
        had_key = source_rules.has_catchup_key(
            source_repo.lock_in_scope(conn, caller.tenant, source_id).options
        )
        deleted = source_repo.delete_in_scope(conn, caller.tenant, source_id)
        params = source_rules.deleted(deleted, had_key=had_key)
        audit(conn, caller, "delete", "source", source_id, params)
    return _source_out(deleted)


def _check_source(scheme: str, secrets: list[str], tolerance_seconds: int, options: Any) -> None:
    if tolerance_seconds <= 0:
        raise BadRequest("tolerance must be a positive number of seconds")
    try:
        verifier_for(scheme, SourceConfig(tuple(secrets), tolerance_seconds, options))
    except ValueError as err:
        raise BadRequest(str(err)) from err
