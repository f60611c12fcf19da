"""`hookline replay` (= `hookline replays create`), `hookline replays list|show`: re-deliver,
re-fan-out or redrive, audited. A replay is a management API request (`POST /v1/replays`, in
this process or to `--api URL`); the command then follows it (`GET /v1/replays/<id>`) with a
progress bar until it has finished, unless `--no-wait`. `--function` runs it in the replay
Lambda function instead (synchronously, so it cannot continue past the function's time
limit: `stopped_early`, unlike a replay through the API, docs/decisions/0021), and
`--print-event` prints that function's console test event. Flags mirror the console test
event's fields."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

from hookline.errors import HooklineError

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

EPILOG = """examples:
  hookline replay --delivery dlv_01 --reason "customer asked"
  hookline replay --endpoint ep_01 --since 6h --state failed,dead --max-per-second 5 \\
      --reason "endpoint was down" --dry-run
  hookline replay --tenant ten_01 --event-type 'invoice.*' --since 2024-05-01T00:00:00Z \\
      --until 2024-05-02T00:00:00Z --reason "resend the day" --api https://.../live
  hookline replay --since 2h --refanout --reason "restore after data loss" --no-wait
  hookline replay --redrive-dlq standard --requested-by ana --reason "fixed the poison cause" \\
      --function hookline-replay
the API records its caller as the requester (--requested-by is for --function and
--print-event); see docs/operations.md for each selector's console test event."""

FINISHED = ("succeeded", "failed")
REPLAY_COLUMNS = ("id", "state", "done", "total", "requested_by", "reason", "created_at")


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
    """Build the request from the flags, then print it, invoke the function, or ask the API
    and follow the replay to its end."""
    doc = request_document(args)
    if args.print_event:
        return doc
    if args.function:
        from hookline.aws import client

        return invoke_function(client("lambda", rt.settings), args.function, doc)
    body = {k: v for k, v in doc.items() if k != "requested_by"}
    # In this process the requester is who --requested-by names (as with --function); over
    # HTTP it is the caller's IAM identity, whatever the flag says.
    replay = rt.client(args, principal=args.requested_by).request(
        "POST", "/v1/replays", data=body, idempotency_key=args.idempotency_key
    )
    if not args.no_wait:
        replay = follow(args, rt, replay)
    return finished(replay)


def follow(args: argparse.Namespace, rt: Runtime, replay: dict[str, Any]) -> dict[str, Any]:
    """Poll the replay until it has finished, with done/total on a progress bar."""
    from hookline_dev.terminal import progress_bar

    deadline = time.monotonic() + args.timeout
    with progress_bar(f"replay {replay['id']}", enabled=not args.json) as progress:
        while replay["state"] not in FINISHED:
            progress.update(replay.get("done") or 0, replay.get("total"))
            if time.monotonic() > deadline:
                raise HooklineError(
                    f"replay {replay['id']} is still {replay['state']} after {args.timeout:g} s; "
                    f"see `hookline replays show {replay['id']}`"
                )
            time.sleep(args.poll)
            replay = rt.client(args).request("GET", f"/v1/replays/{replay['id']}")
    return replay


def finished(replay: dict[str, Any]) -> Any:
    """The replay; exit 1 when it failed."""
    from hookline_dev.terminal import Outcome

    return Outcome(replay, 1 if replay.get("state") == "failed" else 0)


def cmd_replays_list(args: argparse.Namespace, rt: Runtime) -> Any:
    """Replays, newest first."""
    from hookline_dev.cli import listing

    query = {"tenant_id": args.tenant, "state": args.state}
    return listing(args, rt, "/v1/replays", query, REPLAY_COLUMNS)


def cmd_replays_show(args: argparse.Namespace, rt: Runtime) -> Any:
    """One replay: its state, progress and (once finished) its summary."""
    replay = rt.client(args).request("GET", f"/v1/replays/{args.id}")
    return follow(args, rt, replay) if args.wait else finished(replay)


def add_replay_arguments(p: argparse.ArgumentParser) -> None:
    """The selectors and options of a replay request."""
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
    o.add_argument(
        "--requested-by",
        metavar="WHO",
        help="who asks, for --function and --print-event (the API records its caller)",
    )
    o.add_argument("--reason", metavar="WHY", help="why (required; audited)")
    o.add_argument("--dry-run", action="store_true", help="count and sample; change nothing")
    o.add_argument("--max-per-second", type=float, metavar="N", help="pace the enqueues")
    o.add_argument("--limit", type=int, metavar="N", help="at most N (default 10000)")
    o.add_argument(
        "--function",
        metavar="NAME",
        help="run it in the replay Lambda function (the stack's ReplayFunctionName "
        "output) instead of here, synchronously: it stops at the function's time limit "
        "(stopped_early); through the API a big replay continues by itself",
    )
    o.add_argument("--idempotency-key", metavar="KEY", help="a retry starts no second replay")
    o.add_argument("--no-wait", action="store_true", help="return once the API accepted it")
    o.add_argument(
        "--print-event",
        action="store_true",
        help="print the console test event these flags make, and stop",
    )
    add_follow_arguments(p)


def add_follow_arguments(p: argparse.ArgumentParser) -> None:
    """How a replay is followed until it has finished."""
    p.add_argument(
        "--timeout", type=float, default=3600.0, metavar="SECONDS", help="stop waiting after"
    )
    p.add_argument("--poll", type=float, default=0.5, metavar="SECONDS", help=argparse.SUPPRESS)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `hookline replay` and `hookline replays create|list|show`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    described = {
        "description": "Re-deliver what one selector picks. Replayed deliveries keep their "
        "webhook-id; in-flight ones are skipped; every run, dry runs too, is audited.",
        "epilog": EPILOG,
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }
    p = sub.add_parser(
        "replay",
        parents=one,
        help="re-deliver, re-fan-out from the ledger, or redrive a DLQ (audited)",
        **described,
    )
    add_replay_arguments(p)
    p.set_defaults(func=cmd_replay)

    replays = sub.add_parser("replays", help="replays").add_subparsers(dest="action", required=True)
    p = replays.add_parser("create", parents=one, help="start a replay (= replay)", **described)
    add_replay_arguments(p)
    p.set_defaults(func=cmd_replay)
    p = replays.add_parser("list", parents=[*one, list_options()], help="newest replays first")
    p.add_argument("--tenant", metavar="ID")
    p.add_argument("--state", choices=["accepted", "running", "succeeded", "failed"])
    p.set_defaults(func=cmd_replays_list)
    p = replays.add_parser("show", parents=one, help="one replay and how far it is")
    p.add_argument("id")
    p.add_argument("--wait", action="store_true", help="follow it until it has finished")
    add_follow_arguments(p)
    p.set_defaults(func=cmd_replays_show)
