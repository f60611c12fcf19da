"""`hookline status` and `hookline deliveries list|show|attempts|resend`: how the pipeline
stands, single deliveries and their attempts, and resending them (one, or every delivery a
filter selects, with a progress bar). Each is a management API request; `status --pipeline`
is the exception: it reads the database and the SQS queues this machine reaches directly."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from hookline.errors import BadRequest

if TYPE_CHECKING:
    from hookline_dev.cli import Runtime

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead", "held")


DELIVERY_COLUMNS = (
    "id", "event_id", "endpoint_id", "state", "attempt_count", "last_status", "updated_at",
)  # fmt: skip
ATTEMPT_COLUMNS = (
    "id", "attempted_at", "status_code", "duration_ms", "error_class", "response_excerpt",
)  # fmt: skip


def cmd_status(args: argparse.Namespace, rt: Runtime) -> Any:
    """The API's status summary; with `--pipeline`, the local view of groups, queues, DLQs."""
    if args.pipeline:
        if args.api:
            raise BadRequest("--pipeline reads the database and queues directly: not with --api")
        from hookline.runtime import delivery_queues
        from hookline.status import collect_status

        status = collect_status(rt.db, delivery_queues(rt.settings), rt.settings.config)
        return status if args.json else render_status(status)
    summary = rt.client(args).request("GET", "/v1/status")
    return summary if args.json else render_summary(summary)


def render_summary(summary: dict[str, Any]) -> str:
    """The API's status summary as a few readable lines."""
    oldest = summary.get("outbox_oldest_seconds")
    return "\n".join(
        [
            "deliveries  "
            + "  ".join(f"{state} {n}" for state, n in summary["deliveries"].items()),
            f"events      {summary['events_24h']} in the last 24 h",
            f"outbox      {summary['outbox_pending']} waiting for fan-out"
            + (f"; oldest {oldest:.0f} s" if oldest is not None else ""),
            f"endpoints   {summary['endpoints_enabled']} enabled, "
            f"{summary['endpoints_disabled']} disabled",
        ]
    )


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


def delivery_filters(args: argparse.Namespace) -> dict[str, Any]:
    """The list filters the flags set, as the API's query."""
    from hookline_dev.cli import instant

    return {
        "tenant_id": args.tenant,
        "state": args.state,
        "endpoint_id": args.endpoint,
        "event_id": args.event,
        "since": instant(args.since, "--since"),
        "until": instant(args.until, "--until"),
    }


def cmd_deliveries_list(args: argparse.Namespace, rt: Runtime) -> Any:
    """Deliveries, newest first."""
    from hookline_dev.cli import listing

    return listing(args, rt, "/v1/deliveries", delivery_filters(args), DELIVERY_COLUMNS)


def cmd_deliveries_show(args: argparse.Namespace, rt: Runtime) -> Any:
    """One delivery (on a terminal, its attempts below it)."""
    client = rt.client(args)
    delivery = client.request("GET", f"/v1/deliveries/{args.id}")
    if args.json:
        return delivery
    from hookline_dev.cli import render, table

    attempts = client.page_through(f"/v1/deliveries/{args.id}/attempts", everything=True)
    return (
        render(delivery, as_json=False)
        + "\n\nattempts\n"
        + table(attempts["items"], ATTEMPT_COLUMNS)
    )


def cmd_attempts(args: argparse.Namespace, rt: Runtime) -> Any:
    """Every attempt of one delivery, oldest first."""
    from hookline_dev.cli import listing

    return listing(args, rt, f"/v1/deliveries/{args.id}/attempts", {}, ATTEMPT_COLUMNS)


def cmd_resend(args: argparse.Namespace, rt: Runtime) -> Any:
    """Resend the named deliveries, or every one the filters select (each once)."""
    from hookline_dev.apiclient import ApiError
    from hookline_dev.terminal import Outcome, progress_bar

    client = rt.client(args)
    filters = {k: v for k, v in delivery_filters(args).items() if v is not None}
    if bool(args.ids) == bool(filters):
        raise BadRequest(
            "give delivery ids, or filters (--endpoint, --state, --event, --tenant, --since, "
            "--until) that select them; not both"
        )
    ids = list(dict.fromkeys(args.ids))
    with progress_bar("resending", enabled=not args.json) as progress:
        if filters:
            # Select first, then resend: resending moves deliveries out of the filtered
            # state, which must not shift the pages still to read.
            page = client.page_through(
                "/v1/deliveries", filters, limit=args.limit or 1, everything=args.limit is None
            )
            ids = [d["id"] for d in page["items"]]
        results: list[dict[str, Any]] = []
        failed: list[dict[str, Any]] = []
        for done, delivery_id in enumerate(ids):
            progress.update(done, len(ids))
            try:
                results.append(client.request("POST", f"/v1/deliveries/{delivery_id}/resend"))
            except ApiError as err:
                if err.unavailable:
                    raise
                failed.append({"delivery_id": delivery_id, "error": err.detail})
        progress.update(len(ids), len(ids))
    skipped: dict[str, int] = {}
    for result in results:
        for reason, n in result["skipped"].items():
            skipped[reason] = skipped.get(reason, 0) + n
    summary = {
        "selected": len(ids),
        "enqueued": sum(r["enqueued"] for r in results),
        "skipped": skipped,
        "failed": failed,
        "results": results,
    }
    shown = summary if args.json else render_resend(summary)
    return Outcome(shown, 1 if failed else 0)


def render_resend(summary: dict[str, Any]) -> str:
    """The outcome of a bulk resend as a small table, then what failed and why."""
    from hookline_dev.cli import table

    rows = [
        {"outcome": "selected", "deliveries": summary["selected"]},
        {"outcome": "enqueued", "deliveries": summary["enqueued"]},
    ]
    rows += [{"outcome": f"skipped: {k}", "deliveries": n} for k, n in summary["skipped"].items()]
    rows.append({"outcome": "failed", "deliveries": len(summary["failed"])})
    text = table(rows)
    if summary["failed"]:
        text += "\n\n" + table(summary["failed"])
    return text


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `status`, `deliveries list|show|attempts|resend` and `attempts`."""
    from hookline_dev.cli import api_options, list_options

    one = [common, api_options()]
    many = [*one, list_options()]
    p = sub.add_parser(
        "status",
        parents=one,
        help="deliveries per state, events today, outbox lag, endpoints",
    )
    p.add_argument(
        "--pipeline",
        action="store_true",
        help="the operator's view from this machine (database and SQS): backlog, queues and "
        "DLQ per group, last reconcile",
    )
    p.set_defaults(func=cmd_status)

    def filters(p: argparse.ArgumentParser) -> None:
        p.add_argument("--tenant", metavar="ID")
        p.add_argument("--state", choices=STATES)
        p.add_argument("--endpoint", metavar="ID")
        p.add_argument("--event", metavar="ID")
        p.add_argument(
            "--since", metavar="TIME", help="created since: ISO 8601 or a duration ago (30m, 6h)"
        )
        p.add_argument("--until", metavar="TIME", help="created before: ISO 8601 or a duration")

    deliveries = sub.add_parser("deliveries", help="deliveries").add_subparsers(
        dest="action", required=True
    )
    p = deliveries.add_parser("list", parents=many, help="newest deliveries first")
    filters(p)
    p.set_defaults(func=cmd_deliveries_list)
    p = deliveries.add_parser("show", parents=one, help="one delivery")
    p.add_argument("id")
    p.set_defaults(func=cmd_deliveries_show)
    for parent, name in ((deliveries, "attempts"), (sub, "attempts")):
        p = parent.add_parser(name, parents=many, help="the attempts of one delivery")
        p.add_argument("id", metavar="delivery_id")
        p.set_defaults(func=cmd_attempts)
    p = deliveries.add_parser(
        "resend",
        parents=one,
        help="send deliveries again (same webhook-id, audited): by id, or all a filter selects",
    )
    p.add_argument("ids", nargs="*", metavar="ID", help="delivery ids")
    filters(p)
    p.add_argument("--limit", type=int, help="with filters: at most this many (default: all)")
    p.set_defaults(func=cmd_resend)
