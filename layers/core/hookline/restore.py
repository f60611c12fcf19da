"""Restore from the archive and erase a tenant (docs/decisions/0041).

A restore puts a tenant's archived events of a window back into the ledger with their
original ids and pending outbox rows; the fan-out then recreates their deliveries with the same
ids (decision 0040), so subscribers see the same webhook-ids. Events already in the ledger are
skipped and counted. The window is held from retention for `hold_days`, and the restore is
audited like every replay.

Only what the archiver wrote is restored (decision 0061): an object under the tenant's prefix
not named as the archiver names its objects, a record that names another tenant than its
object's key, or one whose source is not the tenant's, is skipped and reported (`refused`,
with the first few keys and reasons in `refused_records` and the audit entry), never put
into the ledger.

An erasure removes a tenant's events, deliveries, attempts, dedupe keys, secrets and archive
objects, revokes every credential of the tenant (API keys, portal links and sessions), and
leaves an audit entry that says what was erased and when, not the data.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.archive import (
    ArchiveStore,
    decode_lines,
    is_object_key,
    restorable_event,
    tenant_prefix,
)
from hookline.db import Database
from hookline.errors import ArchiveUnavailable, BadRequest, NotFound
from hookline.management.access import Caller
from hookline.repositories import portal as portal_repo
from hookline.repositories import retention as repo
from hookline.repositories.audit import write_audit

log = logging.getLogger(__name__)
REPORTED_REFUSALS = 20  # refused records named in the result and its audit entry


def restore_window(
    db: Database,
    archive: ArchiveStore,
    *,
    tenant_id: str,
    since: datetime,
    until: datetime,
    reason: str,
    actor: str,
    hold_days: int,
    dry_run: bool = False,
    fan_out: Callable[[], Any] | None = None,
) -> dict[str, Any]:
    """Restore `tenant_id`'s archived events received in [since, until); fan them out again
    with `fan_out` (the ordinary fan-out run) unless `dry_run`. Returns the counts and the id
    of its audit entry (a dry run's too)."""
    if since >= until:
        raise BadRequest("--since must be before --until")
    if not reason.strip():
        raise BadRequest("a restore needs a --reason")
    with db.connection() as conn:
        if not repo.tenant_exists(conn, tenant_id):
            raise NotFound(f"no tenant {tenant_id}")
    records, refused = _archived(archive, tenant_id, since, until)
    with db.connection() as conn:
        own_sources = repo.tenant_source_ids(conn, tenant_id)
    for record in list(records):
        if record.get("source_id") is not None and record["source_id"] not in own_sources:
            records.remove(record)
            refused.append(_refusal(record, "its source is not the tenant's"))
    result: dict[str, Any] = {"tenant_id": tenant_id, "since": since.isoformat(),
                              "until": until.isoformat(), "dry_run": dry_run,
                              "archived": len(records), "restored": 0, "skipped": 0,
                              "refused": len(refused),
                              "refused_records": refused[:REPORTED_REFUSALS]}  # fmt: skip
    if refused:
        log.warning("restore of %s refused %d archive records not the archiver's: %s",
                    tenant_id, len(refused), refused[:REPORTED_REFUSALS])  # fmt: skip
    if dry_run:  # audited too, like a replay's dry run
        with db.connection() as conn:
            result["audit_id"] = write_audit(
                conn, actor=actor, action="archive.restore", object_type="tenant",
                object_id=tenant_id, params={**result, "reason": reason},
            )  # fmt: skip
        return result
    with db.connection() as conn, conn.transaction():
        for day in sorted({datetime.fromisoformat(r["received_at"]).date() for r in records}):
            for offset in (-1, 0, 1):  # the id's day may differ from received_at by a moment
                repo.create_day_partitions(conn, day + timedelta(days=offset))
        for record in records:
            if repo.restore_event(conn, restorable_event(record)):
                result["restored"] += 1
            else:
                result["skipped"] += 1
        repo.insert_retention_hold(
            conn, tenant_id=tenant_id, since=since, until=until, reason=reason,
            expires_at=datetime.now(UTC) + timedelta(days=hold_days),
        )  # fmt: skip
        result["audit_id"] = write_audit(
            conn, actor=actor, action="archive.restore", object_type="tenant",
            object_id=tenant_id, params={**result, "reason": reason},
        )  # fmt: skip
    if fan_out is not None and result["restored"]:
        fan_out()
    return result


def erase_tenant(
    db: Database, archive: ArchiveStore | None, tenant_id: str, *, confirm: bool, actor: str
) -> dict[str, Any]:
    """Erase everything a tenant sent and configured as secret, and its archive objects, and
    revoke its credentials: API keys and principals, portal links, portal sessions."""
    if not confirm:
        raise BadRequest(
            "erasing a tenant removes its events, deliveries, attempts, secrets and archived "
            "objects for good: repeat with --confirm (the API: ?erase=true)"
        )
    with db.connection() as conn, conn.transaction():
        if not repo.tenant_exists(conn, tenant_id):
            raise NotFound(f"no tenant {tenant_id}")
        counts: dict[str, Any] = repo.erase_tenant_rows(conn, tenant_id)
        # Every credential of the tenant stops working with its data (decision 0061).
        counts["api_principals"] = portal_repo.delete_tenant_principals(conn, tenant_id)
        revoked = portal_repo.revoke_tenant(conn, tenant_id)
        counts["portal_links"], counts["portal_sessions"] = revoked["links"], revoked["sessions"]
    if archive is not None:
        try:
            counts["archived_objects"] = archive.delete(archive.keys(tenant_prefix(tenant_id)))
        except Exception as err:  # botocore raises many kinds; a rerun finishes the job
            raise ArchiveUnavailable(
                f"the ledger rows are erased, the archive is not ({type(err).__name__}): run the "
                "erase again"
            ) from err
    with db.connection() as conn:
        counts["audit_id"] = write_audit(
            conn, actor=actor, action="tenant.erase", object_type="tenant", object_id=tenant_id,
            params={"erased_at": datetime.now(UTC).isoformat(), **counts},
        )  # fmt: skip
    return {"tenant_id": tenant_id, **counts}


def erase_tenant_by_api(
    db: Database, archive: ArchiveStore | None, who: Caller, tenant_id: str, *, erase: bool
) -> dict[str, Any]:
    """`DELETE /v1/tenants/{id}?erase=true`: an operator's erasure (403 for a tenant's own
    key; 400 without `erase=true`)."""
    who.require_operator("erase a tenant")
    if not erase:
        raise BadRequest("deleting a tenant erases its data for good: add ?erase=true")
    return erase_tenant(db, archive, tenant_id, confirm=True, actor=who.principal)


def _archived(
    archive: ArchiveStore, tenant_id: str, since: datetime, until: datetime
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The archive records of the tenant received in [since, until), by id (newest copy), and
    what was refused: objects the archiver did not name, records of another tenant."""
    found: dict[str, dict[str, Any]] = {}
    refused: list[dict[str, str]] = []
    day = since.astimezone(UTC).date() - timedelta(days=1)
    try:
        while day <= until.astimezone(UTC).date() + timedelta(days=1):
            for key in sorted(archive.keys(f"{tenant_prefix(tenant_id)}date={day.isoformat()}/")):
                if not is_object_key(tenant_id, key):
                    refused.append({"key": key, "reason": "not named as the archiver names"})
                    continue
                for record in _records(archive.get(key), key, refused):
                    if record.get("tenant_id") != tenant_id:
                        refused.append(_refusal(record, "names another tenant than its key", key))
                    elif since <= datetime.fromisoformat(record["received_at"]) < until:
                        found[record["id"]] = {**record, "_key": key}
            day += timedelta(days=1)
    except Exception as err:  # botocore raises many kinds; nothing was restored
        raise ArchiveUnavailable(f"cannot read the archive ({type(err).__name__})") from err
    return [found[k] for k in sorted(found)], refused


def _records(body: bytes, key: str, refused: list[dict[str, str]]) -> list[dict[str, Any]]:
    """An object's records; one that is not the archiver's gzip JSON Lines is refused."""
    try:
        records = list(decode_lines(body))
        for record in records:
            if not isinstance(record, dict):
                raise TypeError("a record is a JSON object")
            datetime.fromisoformat(record["received_at"])
            str(record["id"])
    except (OSError, EOFError, ValueError, KeyError, TypeError) as err:
        refused.append({"key": key, "reason": f"not archive records ({type(err).__name__})"})
        return []
    return records


def _refusal(record: dict[str, Any], reason: str, key: str | None = None) -> dict[str, str]:
    return {"key": key or str(record.get("_key")), "id": str(record.get("id")), "reason": reason}
