"""`hookline retention --once`, `hookline archive restore` and `hookline tenants erase`: bounded
storage run from this machine against the database and the archive bucket it reaches
(docs/decisions/0039-0041; docs/operations.md, "Retention, archive and restore")."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline.archive import S3Archive
    from hookline_dev.cli import Runtime


def archive_store(rt: Runtime, *, required: bool) -> S3Archive | None:
    """The archive bucket of the settings (HOOKLINE_ARCHIVE_BUCKET)."""
    from hookline.runtime import archive_store as configured

    store = configured(rt.settings)
    if store is None and required:
        raise BadRequest("no archive bucket: set HOOKLINE_ARCHIVE_BUCKET")
    return store


def parse_time(value: str | None, flag: str) -> datetime:
    """An ISO 8601 time (UTC when it names no zone), or now."""
    if value is None:
        return datetime.now(UTC)
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError as err:
        raise BadRequest(f"{flag} must be an ISO 8601 time, e.g. 2026-12-01T00:00:00Z") from err
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def cmd_retention(args: argparse.Namespace, rt: Runtime) -> Any:
    """One retention run: what it removed (or, with --dry-run, would remove)."""
    from hookline.retention import apply_retention, policy_from_config

    if not args.once:
        raise BadRequest("retention runs from the reconcile schedule; --once runs it once here")
    report = apply_retention(
        rt.db, archive_store(rt, required=False), policy_from_config(rt.settings.config),
        as_of=parse_time(args.as_of, "--as-of"), dry_run=args.dry_run,
    )  # fmt: skip
    return report.as_dict()


def cmd_archive_restore(args: argparse.Namespace, rt: Runtime) -> Any:
    """Restore a tenant's archived window and fan it out again: the request the API and the
    replay function carry out, with the same function (docs/decisions/0051)."""
    from hookline.restore_requests import RestoreRequest, restore_now
    from hookline.runtime import restore_options

    since, until = parse_time(args.since, "--since"), parse_time(args.until, "--until")
    if since >= until:
        raise BadRequest("--since must be before --until")
    request = RestoreRequest(
        tenant_id=args.tenant, since=since, until=until, reason=args.reason,
        requested_by=f"cli:{_user()}", dry_run=args.dry_run,
    )  # fmt: skip
    store = archive_store(rt, required=True)
    return restore_now(rt.db, store, request, restore_options(rt.settings, rt.db))


def cmd_tenants_erase(args: argparse.Namespace, rt: Runtime) -> Any:
    """Erase a tenant's data (needs --confirm)."""
    from hookline.restore import erase_tenant

    return erase_tenant(
        rt.db, archive_store(rt, required=False), args.id, confirm=args.confirm,
        actor=f"cli:{_user()}",
    )  # fmt: skip


def cmd_tenants_retention(args: argparse.Namespace, rt: Runtime) -> Any:
    """Set or clear a tenant's own retention."""
    from hookline.retention import set_tenant_retention

    if (args.days is None) == (not args.clear):
        raise BadRequest("give --days N or --clear")
    return set_tenant_retention(rt.db, args.id, None if args.clear else args.days)


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `retention`, `archive restore`, and `erase` and `retention` under `tenants`."""
    p = sub.add_parser("retention", parents=[common], help="archive and remove expired ledger data")
    p.add_argument("--once", action="store_true", help="one run, then exit")
    p.add_argument("--as-of", help="evaluate retention as if it were this time (ISO 8601)")
    p.add_argument("--dry-run", action="store_true", help="say what would go; remove nothing")
    p.set_defaults(func=cmd_retention)

    archive = sub.add_parser("archive", help="the ledger archive in S3").add_subparsers(
        dest="archive_command", required=True
    )
    r = archive.add_parser("restore", parents=[common], help="put archived events back and "
                           "deliver them again (same webhook-ids), audited")  # fmt: skip
    r.add_argument("--tenant", required=True, help="the tenant id")
    r.add_argument("--since", required=True, help="received at or after (ISO 8601)")
    r.add_argument("--until", required=True, help="received before (ISO 8601)")
    r.add_argument("--reason", required=True, help="why (kept in the audit log)")
    r.add_argument("--dry-run", action="store_true", help="count what would be restored")
    r.set_defaults(func=cmd_archive_restore)

    # `tenants` is made by the resources commands (registered before this module).
    tenants = sub.choices["tenants"]
    [actions] = [a for a in tenants._actions if isinstance(a, argparse._SubParsersAction)]
    e = actions.add_parser("erase", parents=[common], help="erase a tenant's events, "
                           "deliveries, attempts, secrets and archive, for good")  # fmt: skip
    e.add_argument("id", help="the tenant id")
    e.add_argument("--confirm", action="store_true", help="yes, erase it")
    e.set_defaults(func=cmd_tenants_erase)
    k = actions.add_parser("retention", parents=[common], help="keep this tenant's ledger "
                           "shorter or longer than ledger_retention_days")  # fmt: skip
    k.add_argument("id", help="the tenant id")
    k.add_argument("--days", type=int, help="days its events stay in the database")
    k.add_argument("--clear", action="store_true", help="back to the global retention")
    k.set_defaults(func=cmd_tenants_retention)
