"""`hookline events publish|list|show` (and `hookline publish`): the event ledger, each one
management API request."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from hookline_dev.commands.resources.parsers import ResourceParsers

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

EVENT_COLUMNS = ("id", "tenant_id", "type", "origin", "source_id", "received_at", "size")


def cmd_publish(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import json_argument

    body = {
        "tenant_id": args.tenant,
        "type": args.type,
        "payload": json_argument(args.data, "--data"),
    }
    return rt.client(args).request(
        "POST", "/v1/events", data=body, idempotency_key=args.idempotency_key
    )


def cmd_events_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import instant, listing

    query = {
        "tenant_id": args.tenant,
        "type": args.type,
        "source_id": args.source,
        "since": instant(args.since, "--since"),
        "until": instant(args.until, "--until"),
    }
    return listing(args, rt, "/v1/events", query, EVENT_COLUMNS)


def cmd_events_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/events/{args.id}")


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `events` and `publish`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]
    tree = ResourceParsers(sub, one, many)
    group, by_id = tree.group, tree.by_id

    events = group("events", "the event ledger")

    def publish_parser(parent: Any, name: str, help: str) -> None:
        p = parent.add_parser(name, parents=one, help=help)
        p.add_argument("--tenant", required=True, metavar="ID")
        p.add_argument("--type", required=True)
        p.add_argument("--data", required=True, metavar="JSON", help="the payload, as JSON")
        p.add_argument("--idempotency-key", metavar="KEY", help="a repeat is a duplicate")
        p.set_defaults(func=cmd_publish)

    publish_parser(events, "publish", "publish one of your own events")
    publish_parser(sub, "publish", "publish one of your own events (= events publish)")
    p = events.add_parser("list", parents=many, help="newest events first")
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--type")
    p.add_argument("--source", metavar="ID")
    p.add_argument("--since", metavar="TIME", help="ISO 8601 or a duration ago (30m, 6h, 2d)")
    p.add_argument("--until", metavar="TIME", help="ISO 8601 or a duration ago")
    p.set_defaults(func=cmd_events_list)
    by_id(events, "show", "one event with its payload", cmd_events_show)
