"""`hookline notifications show|set`: who is told, by e-mail and chat, when a tenant's endpoints
fail or recover (decision 0068) — `GET` and `PUT /v1/tenants/{id}/notifications`, each one
management API request, in this process or to `--api URL`."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest
from hookline_dev.commands.resources.parsers import ResourceParsers

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime


def cmd_notifications_show(args: argparse.Namespace, rt: Runtime) -> Any:
    return rt.client(args).request("GET", f"/v1/tenants/{args.id}/notifications")


def cmd_notifications_set(args: argparse.Namespace, rt: Runtime) -> Any:
    # The API replaces the whole opt-in, so say what it becomes, or opt out explicitly.
    if args.off and (args.email or args.chat_url):
        raise BadRequest("give --email/--chat-url or --off, not both")
    if not (args.off or args.email or args.chat_url):
        raise BadRequest("give --email and/or --chat-url (what replaces the opt-in), or --off")
    body: dict[str, Any] = {"emails": args.email or [], "chat_url": args.chat_url}
    return rt.client(args).request("PUT", f"/v1/tenants/{args.id}/notifications", data=body)


# -- the command tree -----------------------------------------------------------------------


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `notifications`."""
    from hookline_dev.cli import api_options

    one = [common, api_options()]
    tree = ResourceParsers(sub, one, one)
    notifications = tree.group(
        "notifications", "e-mail and chat messages when a tenant's endpoints fail"
    )
    tree.by_id(
        notifications, "show", "a tenant's e-mail addresses and chat webhook",
        cmd_notifications_show,
    )  # fmt: skip
    p = tree.by_id(
        notifications, "set", "replace a tenant's opt-in (e-mail, chat webhook)",
        cmd_notifications_set,
    )  # fmt: skip
    p.add_argument(
        "--email", action="append", metavar="ADDRESS", help="told of each state change; repeatable"
    )
    p.add_argument(
        "--chat-url", metavar="URL",
        help="a Slack-compatible incoming webhook (https; private addresses are refused)",
    )  # fmt: skip
    p.add_argument("--off", action="store_true", help="opt out: no e-mail, no chat")
