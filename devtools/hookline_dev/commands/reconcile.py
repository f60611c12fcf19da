"""`hookline reconcile`: one reconcile sweep (`--once`), or one every few minutes, run from
this machine against the database and queues it reaches; prints each run's report."""

from __future__ import annotations

import argparse
import json
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hookline.reconcile import ReconcileReport
    from hookline_dev.cli import Runtime


def cmd_reconcile(args: argparse.Namespace, rt: Runtime) -> Any:
    """Run once and return the report, or run every `--interval` seconds until interrupted."""
    from hookline.runtime import build_reconciler

    reconciler = build_reconciler(rt.settings, rt.db)
    if args.once:
        report = reconciler.run(trigger="cli")
        return report.as_dict() if args.json else render_report(report)
    interval = args.interval or 60 * rt.settings.config.schedules.reconcile_minutes
    try:
        while True:
            report = reconciler.run(trigger="cli")
            text = json.dumps(report.as_dict()) if args.json else render_report(report)
            print(text, flush=True)
            time.sleep(interval)
    except KeyboardInterrupt:
        return "" if args.json else "stopped"


def render_report(report: ReconcileReport) -> str:
    """A report as a few readable lines."""
    findings = report.findings
    repairs = ", ".join(f"{k} {v}" for k, v in report.repairs.items() if v) or "nothing"
    states = findings.get("deliveries_by_state", {})
    never = findings.get("never_attempted", {"count": 0, "sample": []})
    lines = [
        f"reconcile {report.id} at {report.started_at.isoformat(timespec='seconds')}",
        f"unreconciled  {report.unreconciled}",
        f"repaired      {repairs}",
        "deliveries    " + "  ".join(f"{s} {n}" for s, n in states.items()),
        "dlq depth     " + "  ".join(f"{g} {n}" for g, n in findings.get("dlq_depth", {}).items()),
        f"never tried   {never['count']}"
        + (f" (e.g. {', '.join(never['sample'])})" if never["sample"] else ""),
        f"late outbox   {findings.get('late_outbox_remaining', 0)} still waiting; oldest "
        f"{findings.get('oldest_pending_outbox_seconds', 0):.0f} s",
    ]
    walk = findings.get("missing_deliveries_walk")
    if walk:
        where = (
            "to the window's end"
            if walk["stopped_by"] is None
            else (f"stopped by {walk['stopped_by']} after {walk['stopped_after']}")
        )
        lines.append(
            f"repair walk   cycle {walk['cycle']}, {walk['pages']} pages, {where}"
            + ("; its position had fallen out of the window" if walk["lapsed"] else "")
        )
    for source_id, result in findings.get("catchup", {}).items():
        outcome = result["error"] or (
            f"{result['stored']} stored, {result['duplicates']} known, "
            f"{result['redeliveries_requested']} redeliveries asked"
        )
        lines.append(f"catch-up      {source_id} ({result['provider']}): {outcome}")
    for key in ("incomplete", "errors"):
        if findings.get(key):
            lines.append(f"{key:<14}{'; '.join(findings[key])}")
    return "\n".join(lines)


def register(sub: Any, common: argparse.ArgumentParser) -> None:
    """Add `reconcile`."""
    p = sub.add_parser(
        "reconcile",
        parents=[common],
        help="repair what is stuck, late or inconsistent, and report it",
    )
    p.add_argument("--once", action="store_true", help="one run, then exit")
    p.add_argument(
        "--interval",
        type=float,
        help="seconds between runs without --once (default: the configured schedule)",
    )
    p.set_defaults(func=cmd_reconcile)
