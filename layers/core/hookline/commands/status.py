"""`hookline status`, `hookline deliveries list|show` and `hookline attempts`: how the
pipeline stands, and a look at single deliveries and their attempts."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline.cli import Runtime

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead")


def cmd_status(args: argparse.Namespace, rt: Runtime) -> Any:
    """The status document, or its text rendering."""
    from hookline.runtime import delivery_queues
    from hookline.status import collect_status

    status = collect_status(rt.db, delivery_queues(rt.settings), rt.settings.config)
    return status if args.json else render_status(status)


def render_status(status: dict[str, Any]) -> str:
    """The status as a few readable blocks."""
    states = status["deliveries"]
    outbox = status["outbox"]
    lines = [
        f"status at {status['checked_at']}",
        "",
        "deliveries  " + "  ".join(f"{state} {n}" for state, n in states.items()),
        f"outbox      {outbox['pending']} waiting for fan-out; "
        f"oldest {outbox['oldest_pending_seconds']:.0f} s",
        "",
        f"{'GROUP':<12}{'BACKLOG':>8}{'PENDING':>9}{'DUE':>6}{'QUEUED':>8}{'DELIVERING':>12}"
        f"{'SQS VISIBLE':>13}{'IN FLIGHT':>11}{'DELAYED':>9}{'DLQ':>6}",
    ]
    for g in status["groups"]:
        queue = g["queue"] or {}
        cells = [queue.get("visible", "?"), queue.get("in_flight", "?"), queue.get("delayed", "?")]
        dlq = "?" if g["dlq"] is None else g["dlq"]
        lines.append(
            f"{g['group']:<12}{g['backlog']:>8}{g['pending']:>9}{g['due']:>6}{g['queued']:>8}"
            f"{g['delivering']:>12}{cells[0]:>13}{cells[1]:>11}{cells[2]:>9}{dlq:>6}"
        )
    run = status["last_reconcile"]
    lines.append("")
    if run is None:
        lines.append("last reconcile  none")
    else:
        lines.append(
            f"last reconcile  {run.get('started_at', '?')}  unreconciled "
            f"{run.get('unreconciled', '?')}  repairs {json.dumps(run.get('repairs', {}))}"
        )
    if status["attention"]:
        lines += ["", "attention:"] + [f"  - {note}" for note in status["attention"]]
    return "\n".join(lines)


def cmd_deliveries_list(args: argparse.Namespace, rt: Runtime) -> Any:
    """Deliveries, newest first."""
    from hookline.replay import parse_instant, utcnow
    from hookline.repositories.status import list_deliveries

    if not 1 <= args.limit <= 10_000:
        raise BadRequest("--limit must be between 1 and 10000")
    since = parse_instant(args.since, "--since", utcnow()) if args.since else None
    with rt.db.connection() as conn:
        return list_deliveries(
            conn,
            state=args.state,
            endpoint_id=args.endpoint,
            event_id=args.event,
            since=since,
            limit=args.limit,
        )


def cmd_deliveries_show(args: argparse.Namespace, rt: Runtime) -> Any:
    """One delivery with its attempts."""
    from hookline.repositories.deliveries import get_delivery, list_attempts

    with rt.db.connection() as conn:
        delivery = get_delivery(conn, args.id)
        delivery["attempts"] = list_attempts(conn, args.id)
    return delivery


def cmd_attempts(args: argparse.Namespace, rt: Runtime) -> Any:
    """Every attempt of one delivery, oldest first."""
    from hookline.repositories.deliveries import get_delivery, list_attempts

    with rt.db.connection() as conn:
        get_delivery(conn, args.delivery_id)  # an unknown id is an error, not an empty list
        return list_attempts(conn, args.delivery_id)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `status`, `deliveries list|show` and `attempts`."""
    p = sub.add_parser(
        "status",
        parents=[common],
        help="deliveries per state, outbox lag, backlog and DLQ per group, last reconcile",
    )
    p.set_defaults(func=cmd_status)

    deliveries = sub.add_parser("deliveries", help="deliveries").add_subparsers(
        dest="action", required=True
    )
    p = deliveries.add_parser("list", parents=[common], help="newest deliveries first")
    p.add_argument("--state", choices=STATES)
    p.add_argument("--endpoint", metavar="ID")
    p.add_argument("--event", metavar="ID")
    p.add_argument(
        "--since", metavar="TIME", help="created since: ISO 8601 or a duration ago (30m, 6h)"
    )
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(func=cmd_deliveries_list)
    p = deliveries.add_parser("show", parents=[common], help="one delivery with its attempts")
    p.add_argument("id")
    p.set_defaults(func=cmd_deliveries_show)

    p = sub.add_parser("attempts", parents=[common], help="the attempts of one delivery")
    p.add_argument("delivery_id")
    p.set_defaults(func=cmd_attempts)
