"""The `hookline` command: operate a Hookline database from a terminal.

Every command prints a readable table, or JSON with `--json`. It reads DATABASE_URL.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from importlib import import_module
from pkgutil import iter_modules
from typing import Any

from hookline import admin, commands
from hookline.db import Database, resolve_conninfo
from hookline.errors import BadRequest, DatabaseUnavailable, HooklineError
from hookline.settings import Settings

Command = Callable[[argparse.Namespace, "Runtime"], Any]


class Runtime:
    """What commands need, built lazily so `--help` works without a database."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._db: Database | None = None

    @property
    def conninfo(self) -> str:
        """The database connection string."""
        try:
            return resolve_conninfo(self.settings)
        except RuntimeError as err:
            raise BadRequest(str(err)) from err

    @property
    def db(self) -> Database:
        """A small pool, opened on first use."""
        if self._db is None:
            self._db = Database(
                self.conninfo, max_size=2, timeout=self.settings.db_connect_timeout_seconds
            )
        return self._db

    def close(self) -> None:
        """Release the pool."""
        if self._db is not None:
            self._db.close()


def cmd_migrate(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.migrate import current_version, migrate

    applied = migrate(rt.conninfo)
    return {"applied": applied, "version": current_version(rt.conninfo)}


def cmd_tenants_add(args: argparse.Namespace, rt: Runtime) -> Any:
    return admin.add_tenant(rt.db, rt.settings.config, name=args.name, group=args.group)


def cmd_tenants_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.tenants import list_tenants

    with rt.db.connection() as conn:
        return list_tenants(conn, limit=args.limit)


def cmd_sources_add(args: argparse.Namespace, rt: Runtime) -> Any:
    options: dict[str, Any] = {}
    if args.scheme == "hmac":
        options = {
            k: v
            for k, v in {
                "header": args.header,
                "algorithm": args.algorithm,
                "encoding": args.encoding,
                "prefix": args.prefix,
                "id_header": args.id_header,
                "type_header": args.type_header,
                "type_field": args.type_field,
            }.items()
            if v is not None
        }
    return admin.add_source(
        rt.db,
        tenant_id=args.tenant,
        scheme=args.scheme,
        secrets=args.secret,
        name=args.name,
        tolerance_seconds=args.tolerance,
        options=options,
    )


def cmd_sources_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.sources import list_sources

    with rt.db.connection() as conn:
        return list_sources(conn, tenant_id=args.tenant)


def cmd_sources_enable(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.sources import set_source_enabled

    with rt.db.connection() as conn:
        set_source_enabled(conn, args.id, args.enabled)
    return {"id": args.id, "enabled": args.enabled}


def cmd_events_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.ledger import list_events

    with rt.db.connection() as conn:
        return list_events(
            conn, tenant_id=args.tenant, type=args.type, source_id=args.source, limit=args.limit
        )


def cmd_events_show(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.ledger import get_event

    with rt.db.connection() as conn:
        event = get_event(conn, args.id)
    raw = bytes(event.pop("payload"))
    try:
        event["payload"] = json.loads(raw)
    except ValueError:
        event["payload"] = raw.decode("utf-8", "replace")
    return event


def cmd_publish(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.ingest import publish

    try:
        payload = json.loads(args.data)
    except ValueError as err:
        raise BadRequest("--data must be valid JSON") from err
    with rt.db.connection() as conn, conn.transaction():
        accepted = publish(
            conn,
            tenant_id=args.tenant,
            type=args.type,
            payload=payload,
            idempotency_key=args.idempotency_key,
        )
    return {"id": accepted.id, "duplicate": accepted.duplicate}


def cmd_endpoints_add(args: argparse.Namespace, rt: Runtime) -> Any:
    events = [e.strip() for e in (args.events or "").split(",") if e.strip()]
    return admin.add_endpoint(
        rt.db,
        rt.settings,
        tenant_id=args.tenant,
        url=args.url,
        event_types=events,
        max_concurrency=args.max_concurrency,
        rate_limit=args.rate_limit,
        headers=args.header or [],
        description=args.description or "",
        retry_on_4xx=args.retry_4xx,
    )


def cmd_endpoints_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.endpoints import list_endpoints

    with rt.db.connection() as conn:
        return list_endpoints(conn, tenant_id=args.tenant)


def cmd_endpoints_show(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.endpoints import get_endpoint

    with rt.db.connection() as conn:
        return get_endpoint(conn, args.id)


def cmd_endpoints_enable(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline.repositories.endpoints import set_endpoint_enabled

    with rt.db.connection() as conn:
        return set_endpoint_enabled(
            conn, args.id, enabled=args.enabled, reason=getattr(args, "reason", None)
        )


def cmd_endpoints_rotate(args: argparse.Namespace, rt: Runtime) -> Any:
    return admin.rotate_endpoint_secret(rt.db, rt.settings, args.id)


def build_parser() -> argparse.ArgumentParser:
    """The whole command tree."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")

    parser = argparse.ArgumentParser(prog="hookline", description=__doc__, parents=[common])
    sub = parser.add_subparsers(dest="command", required=True)

    sub.add_parser("migrate", parents=[common], help="apply database migrations").set_defaults(
        func=cmd_migrate
    )

    tenants = sub.add_parser("tenants", help="tenants").add_subparsers(dest="action", required=True)
    p = tenants.add_parser("add", parents=[common], help="create a tenant")
    p.add_argument("name")
    p.add_argument("--group", help="tenant group (default: the configured default)")
    p.set_defaults(func=cmd_tenants_add)
    p = tenants.add_parser("list", parents=[common], help="list tenants")
    p.add_argument("--limit", type=int, default=100)
    p.set_defaults(func=cmd_tenants_list)

    sources = sub.add_parser("sources", help="inbound sources").add_subparsers(
        dest="action", required=True
    )
    p = sources.add_parser("add", parents=[common], help="create an inbound source")
    p.add_argument("--tenant", required=True)
    p.add_argument(
        "--scheme",
        required=True,
        choices=["standard", "svix", "stripe", "github", "shopify", "slack", "razorpay", "hmac"],
    )
    p.add_argument("--secret", action="append", required=True, help="repeat for a second secret")
    p.add_argument("--name")
    p.add_argument("--tolerance", type=int, default=300, help="timestamp tolerance, seconds")
    hmac_opts = p.add_argument_group("hmac scheme options")
    hmac_opts.add_argument("--header", help="signature header name")
    hmac_opts.add_argument("--algorithm", choices=["sha1", "sha256", "sha512"])
    hmac_opts.add_argument("--encoding", choices=["hex", "base64"])
    hmac_opts.add_argument("--prefix", help="signature prefix, e.g. sha256=")
    hmac_opts.add_argument("--id-header", help="header holding the provider's delivery id")
    hmac_opts.add_argument("--type-header", help="header holding the event type")
    hmac_opts.add_argument("--type-field", help="dotted JSON path of the event type")
    p.set_defaults(func=cmd_sources_add)
    p = sources.add_parser("list", parents=[common], help="list sources")
    p.add_argument("--tenant")
    p.set_defaults(func=cmd_sources_list)
    for verb, enabled in (("enable", True), ("disable", False)):
        p = sources.add_parser(verb, parents=[common], help=f"{verb} a source")
        p.add_argument("id")
        p.set_defaults(func=cmd_sources_enable, enabled=enabled)

    endpoints = sub.add_parser("endpoints", help="subscriber endpoints").add_subparsers(
        dest="action", required=True
    )
    p = endpoints.add_parser("add", parents=[common], help="create an endpoint")
    p.add_argument("--tenant", required=True)
    p.add_argument("--url", required=True, help="https URL (private addresses are refused)")
    p.add_argument(
        "--events", help="comma-separated type filters, e.g. 'payment_intent.*,charge.refunded'"
    )
    p.add_argument("--max-concurrency", type=int, default=5)
    p.add_argument("--rate-limit", help="e.g. 50/s, 600/m")
    p.add_argument("--header", action="append", help="'Name: value', repeatable")
    p.add_argument("--description")
    p.add_argument("--retry-4xx", action="store_true", help="retry 4xx answers too")
    p.set_defaults(func=cmd_endpoints_add)
    p = endpoints.add_parser("list", parents=[common], help="list endpoints")
    p.add_argument("--tenant")
    p.set_defaults(func=cmd_endpoints_list)
    p = endpoints.add_parser("show", parents=[common], help="one endpoint")
    p.add_argument("id")
    p.set_defaults(func=cmd_endpoints_show)
    p = endpoints.add_parser("enable", parents=[common], help="enable an endpoint")
    p.add_argument("id")
    p.set_defaults(func=cmd_endpoints_enable, enabled=True)
    p = endpoints.add_parser("disable", parents=[common], help="disable an endpoint")
    p.add_argument("id")
    p.add_argument("--reason", default="disabled by an operator")
    p.set_defaults(func=cmd_endpoints_enable, enabled=False)
    p = endpoints.add_parser("rotate-secret", parents=[common], help="new signing secret")
    p.add_argument("id")
    p.set_defaults(func=cmd_endpoints_rotate)

    events = sub.add_parser("events", help="the event ledger").add_subparsers(
        dest="action", required=True
    )
    p = events.add_parser("list", parents=[common], help="newest events first")
    p.add_argument("--tenant")
    p.add_argument("--type")
    p.add_argument("--source")
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(func=cmd_events_list)
    p = events.add_parser("show", parents=[common], help="one event with its payload")
    p.add_argument("id")
    p.set_defaults(func=cmd_events_show)

    p = sub.add_parser("publish", parents=[common], help="publish one of your own events")
    p.add_argument("--tenant", required=True)
    p.add_argument("--type", required=True)
    p.add_argument("--data", required=True, help="the payload, as JSON")
    p.add_argument("--idempotency-key")
    p.set_defaults(func=cmd_publish)

    for module in iter_modules(commands.__path__):
        import_module(f"{commands.__name__}.{module.name}").register(sub, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; exit 0 on success, 1 on a bad request, 3 if the database is down."""
    args = build_parser().parse_args(argv)
    runtime = Runtime(Settings.from_env())
    try:
        result = args.func(args, runtime)
    except DatabaseUnavailable as err:
        print(f"error: {err}", file=sys.stderr)
        return 3
    except HooklineError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    finally:
        runtime.close()
    print(render(result, as_json=args.json))
    return 0


def render(result: Any, *, as_json: bool) -> str:
    """JSON, or a plain table for lists of rows and key/value lines for one object."""
    if as_json:
        return json.dumps(result, default=_json_default, indent=2)
    if isinstance(result, list):
        return table(result)
    if isinstance(result, dict):
        width = max((len(k) for k in result), default=0)
        return "\n".join(f"{k.ljust(width)}  {_cell(v)}" for k, v in result.items())
    return str(result)


def table(rows: list[dict[str, Any]]) -> str:
    """Rows as aligned columns."""
    if not rows:
        return "(none)"
    columns = list(rows[0])
    cells = [[_cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.upper().ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    return "\n".join(lines)


def _cell(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat(timespec="seconds")
    if isinstance(value, (dict, list)):
        return json.dumps(value, default=_json_default)
    return "" if value is None else str(value)


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).decode("utf-8", "replace")
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


if __name__ == "__main__":
    raise SystemExit(main())
