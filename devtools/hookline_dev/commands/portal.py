"""`hookline portal link --tenant ID [--ttl 1h]`: a short-lived link to one tenant's portal."""

from __future__ import annotations

import argparse
import getpass
import re
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

_TTL = re.compile(r"^(\d+)([smh])$")
_UNIT = {"s": "seconds", "m": "minutes", "h": "hours"}


def parse_ttl(text: str) -> timedelta:
    """`90s`, `15m`, `1h` as a duration."""
    match = _TTL.match(text.strip())
    if not match:
        raise BadRequest("--ttl is a number and a unit: 90s, 15m, 1h")
    return timedelta(**{_UNIT[match.group(2)]: int(match.group(1))})


def cmd_link(args: argparse.Namespace, rt: Runtime) -> Any:
    """Print the link (and when it expires)."""
    from hookline.management.access import OPERATOR, Caller
    from hookline.management.portal_links import create_portal_link

    who = Caller(f"cli:{getpass.getuser()}", OPERATOR)
    return create_portal_link(
        rt.db, rt.settings, who, args.tenant, base_url=args.base_url, ttl=parse_ttl(args.ttl)
    )


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline portal link`."""
    portal = sub.add_parser("portal", help="the tenant portal").add_subparsers(
        dest="action", required=True
    )
    p = portal.add_parser("link", parents=[common], help="a short-lived link to a tenant's portal")
    p.add_argument("--tenant", required=True, metavar="ID")
    p.add_argument("--ttl", default="1h", help="how long the link works (default 1h, at most 24h)")
    p.add_argument("--base-url", default="http://127.0.0.1:8080", help="where the portal is served")
    p.set_defaults(func=cmd_link)
