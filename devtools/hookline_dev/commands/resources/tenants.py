"""`hookline tenants add|list|show`: each one management API request
(`hookline_dev.apiclient`), in this process or to `--api URL`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from hookline_dev.commands.resources.parsers import ResourceParsers, drop_none

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

TENANT_COLUMNS = ("id", "name", "group", "created_at")


def cmd_tenants_add(args: argparse.Namespace, rt: Runtime) -> Any:
    body = drop_none({"name": args.name, "group": args.group})
    return rt.client(args).request(
        "POST", "/v1/tenants", data=body, idempotency_key=args.idempotency_key
    )


def cmd_tenants_list(args: argparse.Namespace, rt: Runtime) -> Any:
    from hookline_dev.cli import listing

    return listing(args, rt, "/v1/tenants", {}, TENANT_COLUMNS)


def cmd_tenants_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/tenants/{args.id}")


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `tenants`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]
    tree = ResourceParsers(sub, one, many)
    group, creates, by_id = tree.group, tree.creates, tree.by_id

    tenants = group("tenants", "tenants")
    p = tenants.add_parser("add", parents=one, help="create a tenant")
    p.add_argument("name")
    p.add_argument("--group", help="tenant group (default: the configured default)")
    creates(p)
    p.set_defaults(func=cmd_tenants_add)
    tenants.add_parser("list", parents=many, help="list tenants").set_defaults(
        func=cmd_tenants_list
    )
    by_id(tenants, "show", "one tenant", cmd_tenants_show)
