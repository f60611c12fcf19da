"""`hookline quarantine list|retry`: fan-out pairs whose matching raised (decision 0059), each
one management API request."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from hookline_dev.commands.resources.parsers import ResourceParsers, drop_none

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

QUARANTINE_COLUMNS = ("event_id", "endpoint_id", "tenant_id", "stage", "failures", "reason")


def cmd_quarantine_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import listing

    return listing(
        args, rt, "/v1/fanout-quarantine", {"tenant_id": args.tenant}, QUARANTINE_COLUMNS
    )


def cmd_quarantine_retry(args: argparse.Namespace, rt: Runtime) -> Any:
    body = drop_none(
        {"tenant_id": args.tenant, "event_ids": args.event or None, "limit": args.limit}
    )
    return rt.client(args).request("POST", "/v1/fanout-quarantine/retry", data=body)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `quarantine`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    tree = ResourceParsers(sub, one, [*one, list_options()])
    quarantine = tree.group("quarantine", "fan-out pairs whose matching failed")
    p = quarantine.add_parser("list", parents=tree.many, help="quarantined pairs and why")
    p.add_argument("--tenant", metavar="ID")
    p.set_defaults(func=cmd_quarantine_list)
    p = quarantine.add_parser(
        "retry", parents=one, help="decide quarantined pairs again once the cause is fixed"
    )
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--event", action="append", metavar="ID", help="only this event (repeat)")
    p.add_argument("--limit", type=int, default=100, help="pairs at most (up to 500)")
    p.set_defaults(func=cmd_quarantine_retry)
