"""Wake the fan-out right after an accept, so delivery does not wait for the schedule.

A nudge is best effort: the schedule is the safety net, so a failed nudge is logged and never
fails the request that triggered it. Who is nudged, and how:

* the process runs the fan-out itself (the dev stack, all in one or `--role fanout`): an
  in-process call (`set_local_nudger`);
* on AWS (`HOOKLINE_FANOUT_FUNCTION` set): an asynchronous Lambda invoke, one try with
  short timeouts (~100 ms at most; `hookline.aws.best_effort_client`);
* locally, any other process (`HOOKLINE_LOCAL_MODE` on, no fan-out function: the CLI, the
  `front` role, a producer pointed at the dev stack by `hookline dev --print-env`):
  `NOTIFY hookline_fanout`, which the dev stack's fan-out process LISTENs for
  (`hookline_dev.local.listener`). Never on AWS: there every NOTIFY takes a global lock at commit.

See docs/decisions/0022-local-nudge-over-listen-notify.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from aws_lambda_powertools.metrics import MetricUnit

from hookline.aws import best_effort_client
from hookline.db import Connection, get_database
from hookline.observability import logger, metrics
from hookline.settings import Settings
from hookline.sqlfiles import query

if TYPE_CHECKING:
    from hookline.carried import CarriedEvent
    from hookline.queues import DeliveryQueues
    from hookline.repositories.deliveries import Enqueued

LOCAL_NUDGE_CHANNEL = "hookline_fanout"
# What a nudge's invoke carries as its event's `source`, against a schedule's `aws.events`: a
# nudged run looks at the recent days only (decision 0101).
NUDGE_SOURCE = "hookline.nudge"

_local_nudger: Callable[[], None] | None = None


def set_local_nudger(nudger: Callable[[], None] | None) -> None:
    """Let the local runner receive nudges in-process instead of a Lambda invoke."""
    global _local_nudger
    _local_nudger = nudger


def nudge_fanout(settings: Settings) -> None:
    """Ask the fan-out function to run now (asynchronously). Call it after the accepting
    transaction committed: the fan-out must find what it is woken for."""
    try:
        if _local_nudger is not None:
            _local_nudger()
        elif settings.fanout_function_name:
            # At most ~100 ms and one try: a slow Lambda API must not turn a committed
            # event into a 5xx; the schedule picks up what a lost nudge left.
            best_effort_client("lambda", settings).invoke(
                FunctionName=settings.fanout_function_name,
                InvocationType="Event",
                Payload=f'{{"source":"{NUDGE_SOURCE}"}}'.encode(),
            )
        elif settings.local_mode:
            _notify_local_fanout()
    except Exception:  # a nudge must never fail an accepted request
        logger.warning("fan-out nudge failed", exc_info=True)


def after_accept(
    settings: Settings,
    fanned_out: bool,
    to_send: Sequence[Enqueued],
    queues: Callable[[], DeliveryQueues],
    count: Callable[[str, int], None] | None = None,
    carried: CarriedEvent | None = None,
) -> int:
    """After a new event's commit: send the deliveries made with it (fan-out at receipt,
    decision 0076) to `queues()`, or nudge the fan-out to make them, or to send what SQS
    refused, now rather than at its next tick. Counts what it made and sent as the fan-out
    does (`DeliveriesFannedOut`, `DeliveriesEnqueued`), so the dashboard's fan-out graph counts
    every delivery wherever it was made: with `count(name, value)` (the receiver's
    `InvocationCounts.count`), else on the process's Powertools metrics. The messages carry
    `carried`, the event, when given (decision 0108). Returns how many were sent."""
    if fanned_out:
        if not to_send:
            return 0
        from hookline.fanout import send_at_receipt

        add = _add_count if count is None else count
        add("DeliveriesFannedOut", len(to_send))
        if send_at_receipt(get_database(), queues, list(to_send), carried):
            add("DeliveriesEnqueued", len(to_send))
            return len(to_send)
    nudge_fanout(settings)
    return 0


def _add_count(name: str, value: int) -> None:
    metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)


def nudge_on_commit(conn: Connection, settings: Settings) -> None:
    """For an event written inside the caller's open transaction (`hookline.publish`): locally,
    `NOTIFY` the dev stack's fan-out on that same connection — Postgres delivers it when, and
    only if, the transaction commits, so the fan-out is woken exactly when there is something
    to find. On AWS nothing here (the transaction is the producer's; call `hookline.nudge_fanout()`
    after it commits, or the schedule picks the event up)."""
    if settings.local_mode and not settings.fanout_function_name:
        conn.execute(query("notify_fanout"), {"channel": LOCAL_NUDGE_CHANNEL})


def _notify_local_fanout() -> None:
    """NOTIFY the dev stack's fan-out process, on a pooled (autocommit) connection: the
    notification is delivered when this one-statement transaction commits."""
    with get_database().connection() as conn:
        conn.execute(query("notify_fanout"), {"channel": LOCAL_NUDGE_CHANNEL})
