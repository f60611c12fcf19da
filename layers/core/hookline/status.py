"""Status: how the pipeline stands right now, from Postgres and SQS, for `hookline status`.

Deliveries per state, the outbox's oldest pending row, per tenant group the unfinished
deliveries and the depth of its queue and dead-letter queue, and the last reconcile report.
A part that cannot be read (SQS unreachable, a queue missing) is reported as such; the rest
is still shown. `attention` lists what an operator should act on, with where to look.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.queues import DeliveryQueues
from hookline.repositories import status as repo

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead", "held")
_DEPTH = {
    "visible": "ApproximateNumberOfMessages",
    "in_flight": "ApproximateNumberOfMessagesNotVisible",
    "delayed": "ApproximateNumberOfMessagesDelayed",
}


def utcnow() -> datetime:
    """Now, timezone-aware."""
    return datetime.now(UTC)


def queue_depth(sqs: Any, url: str) -> dict[str, int]:
    """Visible, in-flight and delayed messages of a queue (SQS's approximate counts)."""
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=list(_DEPTH.values()))
    values = attributes.get("Attributes", {})
    return {name: int(values.get(attribute, 0)) for name, attribute in _DEPTH.items()}


def collect_status(
    db: Database,
    queues: DeliveryQueues,
    config: HooklineConfig,
    *,
    clock: Callable[[], datetime] = utcnow,
) -> dict[str, Any]:
    """The status document (what `hookline status --json` prints)."""
    with db.connection() as conn:
        by_state = repo.deliveries_by_state(conn)
        outbox = repo.outbox(conn)
        backlog = repo.backlog_by_group(conn)
        last_run = repo.last_reconcile_run(conn)
    deliveries = {state: by_state.get(state, 0) for state in STATES}
    deliveries.update({s: n for s, n in by_state.items() if s not in deliveries})
    names = list(config.group_names) + sorted(set(backlog) - set(config.group_names))
    groups = [_group(name, backlog.get(name, {}), queues, config) for name in names]
    status: dict[str, Any] = {
        "checked_at": clock().isoformat(),
        "deliveries": deliveries,
        "outbox": outbox,
        "groups": groups,
        "dlq_total": sum(g["dlq"] or 0 for g in groups),
        "last_reconcile": last_run,
    }
    status["attention"] = _attention(status, config, clock())
    return status


def _group(
    name: str, backlog: dict[str, int], queues: DeliveryQueues, config: HooklineConfig
) -> dict[str, Any]:
    pending, queued = backlog.get("pending", 0), backlog.get("queued", 0)
    group: dict[str, Any] = {
        "group": name,
        "backlog": pending + queued,
        "pending": pending,
        "due": backlog.get("due", 0),
        "queued": queued,
        "delivering": backlog.get("delivering", 0),
        "queue": None,
        "dlq": None,
    }
    if name not in config.group_names:
        group["error"] = "not a configured tenant group: its deliveries have no queue"
        return group
    try:
        group["queue"] = queue_depth(queues.sqs, queues.url(name))
        group["dlq"] = queue_depth(queues.sqs, queues.dlq_url(name))["visible"]
    except Exception as err:  # SQS down or a queue missing: say so, show the rest
        group["error"] = f"SQS: {describe_error(err)}"
    return group


def describe_error(err: Exception) -> str:
    """What an AWS client error (or any other) says, in one line."""
    response = getattr(err, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', type(err).__name__)}: {error.get('Message', '')}".strip()
    return f"{type(err).__name__}: {err}"


def _attention(status: dict[str, Any], config: HooklineConfig, now: datetime) -> list[str]:
    notes: list[str] = []
    for group in status["groups"]:
        if group["dlq"]:
            notes.append(
                f"{group['group']} DLQ holds {group['dlq']} message(s): inspect, then redrive "
                f"(docs/operations.md, 'The DLQ alarm')"
            )
        if group.get("error"):
            notes.append(f"{group['group']}: {group['error']}")
    lag = status["outbox"]["oldest_pending_seconds"]
    if lag > config.infrastructure.alarm_fanout_lag_seconds:
        notes.append(
            f"the oldest outbox row has waited {lag:.0f} s for fan-out: is the fan-out running?"
        )
    run = status["last_reconcile"]
    if run is None:
        notes.append("no reconcile report yet")
    else:
        if int(run.get("unreconciled") or 0) > 0:
            notes.append(f"the last reconcile left {run['unreconciled']} unreconciled")
        started = run.get("started_at")
        if isinstance(started, str):
            age = (now - datetime.fromisoformat(started)).total_seconds()
            if age > 3 * 60 * config.schedules.reconcile_minutes:
                notes.append(f"the last reconcile ran {age / 60:.0f} min ago: is it scheduled?")
    return notes
