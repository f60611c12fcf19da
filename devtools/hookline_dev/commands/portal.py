"""`hookline portal link --tenant ID [--ttl 1h]`: a short-lived, single-use link to one
tenant's portal, pointing at the stack this shell talks to (`$HOOKLINE_URL`, which
`hookline dev --print-env` exports; else the dev stack's default address). `hookline portal
links --tenant ID` lists a tenant's links; `hookline portal revoke --tenant ID (--link ID |
--all)` revokes one link (its session ends) or every link and session of the tenant."""

from __future__ import annotations

import argparse
import getpass
import os
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

DEV_URL = "http://127.0.0.1:8080"
_TTL = re.compile(r"^(\d+)([smh])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours"}


def parse_ttl(text: str) -> timedelta:
    """`90s`, `15m`, `1h` as a duration."""
    match = _TTL.match(text.strip())
    if not match:
        raise BadRequest("--ttl is a number and a unit: 90s, 15m, 1h")
    return timedelta(**{_UNIT[match.group(2)]: int(match.group(1))})


def stack_url() -> str:
    """The address of the stack this shell talks to: `$HOOKLINE_URL`, else the dev stack's."""
    return (os.environ.get("HOOKLINE_URL") or DEV_URL).rstrip("/")


def _operator() -> Any:
    from hookline.management.access import OPERATOR, Caller

    return Caller(f"cli:{getpass.getuser()}", OPERATOR)


def cmd_link(args: argparse.Namespace, rt: Runtime) -> Any:
    """Print the link (its id, URL and when it expires)."""
    from hookline.management.portal_links import create_portal_link

    return create_portal_link(
        rt.db, rt.settings, _operator(), args.tenant, own_url=stack_url(),
        base_url=args.base_url, ttl=parse_ttl(args.ttl),
    )  # fmt: skip


def cmd_links(args: argparse.Namespace, rt: Runtime) -> Any:
    """A tenant's links, newest first."""
    from hookline.management.portal_links import list_portal_links

    return list_portal_links(rt.db, _operator(), args.tenant, cursor=None, limit=200)["items"]


def cmd_revoke(args: argparse.Namespace, rt: Runtime) -> Any:
    """Revoke one link, or all of a tenant's links and sessions."""
    from hookline.management.portal_links import revoke_portal_access, revoke_portal_link

    if bool(args.link) == bool(args.all):
        raise BadRequest("give --link ID or --all")
    if args.all:
        return revoke_portal_access(rt.db, _operator(), args.tenant)
    return revoke_portal_link(rt.db, _operator(), args.tenant, args.link)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline portal link`."""
    portal = sub.add_parser("portal", help="the tenant portal").add_subparsers(
        dest="action", required=True
    )
    p = portal.add_parser("link", parents=[common], help="a short-lived link to a tenant's portal")
    p.add_argument("--tenant", required=True, metavar="ID")
    p.add_argument("--ttl", default="1h", help="how long the link works (default 1h, at most 24h)")
    p.add_argument(
        "--base-url",
        default=None,
        help="where the portal is served: $HOOKLINE_URL (the default) or an address listed "
        "in HOOKLINE_PORTAL_BASE_URLS",
    )
    p.set_defaults(func=cmd_link)
    p = portal.add_parser("links", parents=[common], help="a tenant's portal links")
    p.add_argument("--tenant", required=True, metavar="ID")
    p.set_defaults(func=cmd_links)
    p = portal.add_parser(
        "revoke", parents=[common], help="revoke a portal link, or all links and sessions"
    )
    p.add_argument("--tenant", required=True, metavar="ID")
    p.add_argument("--link", metavar="ID", help="the link to revoke (its session ends too)")
    p.add_argument("--all", action="store_true", help="every link and session of the tenant")
    p.set_defaults(func=cmd_revoke)
