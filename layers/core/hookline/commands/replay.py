"""`hookline replay`: re-deliver, re-fan-out or redrive, audited — run here (this machine
reaches the database and SQS) or by the replay function (`--function`, for a database that
only the VPC reaches). Flags mirror the console test event's fields."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from hookline.errors import HooklineError

if TYPE_CHECKING:
    from hookline.cli import Runtime

EPILOG = """examples:
  hookline replay --delivery dlv_01 --requested-by ana --reason "customer asked"
  hookline replay --endpoint ep_01 --since 6h --state failed,dead --max-per-second 5 \\
      --requested-by ana --reason "endpoint was down" --dry-run
  hookline replay --tenant ten_01 --event-type 'invoice.*' --since 2024-05-01T00:00:00Z \\
      --until 2024-05-02T00:00:00Z --requested-by ana --reason "resend the day"
  hookline replay --since 2h --refanout --requested-by ana --reason "restore after data loss"
  hookline replay --redrive-dlq standard --requested-by ana --reason "fixed the poison cause"
see docs/operations.md for each selector's console test event."""


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [part.strip() for v in values for part in v.split(",") if part.strip()]


def request_document(args: argparse.Namespace) -> dict[str, Any]:
    """The replay request the flags describe: the same JSON as a console test event."""
    doc: dict[str, Any] = {
        "delivery_ids": _split(args.delivery_ids),
        "event_ids": _split(args.event_ids),
        "endpoint_id": args.endpoint_id,
        "tenant_id": args.tenant_id,
        "event_type": args.event_type,
        "since": args.since,
        "until": args.until,
        "states": _split(args.states),
        "refanout": args.refanout or None,
        "redrive_dlq": args.redrive_dlq,
        "dry_run": args.dry_run or None,
        "max_per_second": args.max_per_second,
        "limit": args.limit,
        "requested_by": args.requested_by,
        "reason": args.reason,
    }
    return {k: v for k, v in doc.items() if v is not None}


def invoke_function(lambda_client: Any, function_name: str, doc: dict[str, Any]) -> Any:
    """Run the request in the replay function and return its summary (errors raised)."""
    answer = lambda_client.invoke(
        FunctionName=function_name,
        InvocationType="RequestResponse",
        Payload=json.dumps(doc).encode(),
    )
    payload = json.loads(answer["Payload"].read() or b"null")
    if answer.get("FunctionError"):
        message = payload.get("errorMessage") if isinstance(payload, dict) else payload
        raise HooklineError(f"the replay function failed: {message}")
    if isinstance(payload, dict) and payload.get("ok") is False:
        raise HooklineError(payload.get("error", {}).get("message", "the replay failed"))
    if isinstance(payload, dict):
        payload.pop("ok", None)
    return payload


def cmd_replay(args: argparse.Namespace, rt: Runtime) -> Any:
    """Build the request from the flags, then print it, invoke the function, or run it."""
    doc = request_document(args)
    if args.print_event:
        return doc
    if args.function:
        from hookline.aws import client

        return invoke_function(client("lambda", rt.settings), args.function, doc)
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options

    return run_replay(rt.db, delivery_queues(rt.settings), doc, replay_options(rt.settings))


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline replay`."""
    p = sub.add_parser(
        "replay",
        parents=[common],
        help="re-deliver, re-fan-out from the ledger, or redrive a DLQ (audited)",
        description="Re-deliver what one selector picks. Replayed deliveries keep their "
        "webhook-id; in-flight ones are skipped; every run, dry runs too, is audited.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    s = p.add_argument_group("selectors (one of them)")
    s.add_argument(
        "--delivery",
        dest="delivery_ids",
        action="append",
        metavar="ID",
        help="a delivery id (repeat, or comma-separate)",
    )
    s.add_argument(
        "--event",
        dest="event_ids",
        action="append",
        metavar="ID",
        help="an event id: all its deliveries (repeat, or comma-separate)",
    )
    s.add_argument(
        "--endpoint",
        dest="endpoint_id",
        metavar="ID",
        help="deliveries to this endpoint (needs --since)",
    )
    s.add_argument("--tenant", dest="tenant_id", metavar="ID", help="narrow a window to one tenant")
    s.add_argument(
        "--event-type",
        metavar="TYPE",
        help="narrow a window to an event type, `*` wildcards allowed",
    )
    s.add_argument(
        "--since",
        metavar="TIME",
        help="window start: ISO 8601 (UTC if no offset) or a duration ago (30m, 6h, 2d)",
    )
    s.add_argument("--until", metavar="TIME", help="window end (default: now)")
    s.add_argument(
        "--state",
        dest="states",
        action="append",
        metavar="STATE",
        help="states to replay (repeat, or comma-separate); windows default to "
        "failed,dead, event ids to all",
    )
    s.add_argument(
        "--refanout",
        action="store_true",
        help="re-create the selected events' missing deliveries from the ledger",
    )
    s.add_argument(
        "--redrive-dlq",
        metavar="GROUP",
        help="move a tenant group's dead-letter queue back to its queue",
    )
    o = p.add_argument_group("options")
    o.add_argument("--requested-by", metavar="WHO", help="who asks (required; audited)")
    o.add_argument("--reason", metavar="WHY", help="why (required; audited)")
    o.add_argument("--dry-run", action="store_true", help="count and sample; change nothing")
    o.add_argument("--max-per-second", type=float, metavar="N", help="pace the enqueues")
    o.add_argument("--limit", type=int, metavar="N", help="at most N (default 10000)")
    o.add_argument(
        "--function",
        metavar="NAME",
        help="run it in the replay Lambda function (the stack's ReplayFunctionName "
        "output) instead of here",
    )
    o.add_argument(
        "--print-event",
        action="store_true",
        help="print the console test event these flags make, and stop",
    )
    p.set_defaults(func=cmd_replay)
