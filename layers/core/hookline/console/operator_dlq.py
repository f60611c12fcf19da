"""The console's dead-letter queues (`/console/dlq`): per tenant group the DLQ's depth and its
oldest message's age, and a redrive.

A redrive is the replay request `{"redrive_dlq": <group>, "reason": …}` that `hookline replay
--redrive-dlq` and `POST /v1/replays` make: first its dry run (SQS's estimate of how many it
would move, audited), then, confirmed, the replay itself, which moves the messages back
through the queue abstraction (`DeliveryQueues.redrive`) and is audited under the operator's
name; its progress is the replay's page.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayRestResolver, Response

from hookline import replay as replays
from hookline.console import web
from hookline.console.operator import dry_run, operator, render_page, run_changing
from hookline.db import get_database
from hookline.errors import BadRequest
from hookline.management.access import Caller
from hookline.queues import DeliveryQueues
from hookline.runtime import delivery_queues, replay_starter
from hookline.settings import get_settings
from hookline.status import describe_error


def register(app: APIGatewayRestResolver) -> None:
    """Add the DLQ page and its redrive to `app`."""

    @app.get("/console/dlq")
    def dlq_page() -> Response[str]:
        operator(app)
        settings = get_settings()
        groups = dead_letter_queues(delivery_queues(settings), settings.config.group_names)
        return render_page(app, "dlq.html", {"groups": groups, "form": {}, "preview": None})

    @app.post("/console/dlq/<group>/redrive")
    def redrive(group: str) -> Response[str]:
        def act(who: Caller, submitted: dict[str, str]) -> Response[str]:
            settings = get_settings()
            if group not in settings.config.group_names:
                raise BadRequest(f"no tenant group {group!r}")
            reason = submitted.get("reason", "").strip()
            if not reason:
                groups = dead_letter_queues(delivery_queues(settings), settings.config.group_names)
                context = {"groups": groups, "form": submitted, "error": "say why: a redrive "
                           "needs a reason (it goes in the audit log)", "error_group": group,
                           "preview": None}  # fmt: skip
                return render_page(app, "dlq.html", context, 400)
            doc = {"redrive_dlq": group, "reason": reason}
            if submitted.get("confirm") != "yes":
                preview = {"group": group, "reason": reason, **dry_run(who, doc)}
                groups = dead_letter_queues(delivery_queues(settings), settings.config.group_names)
                context = {"groups": groups, "form": submitted, "preview": preview}
                return render_page(app, "dlq.html", context)
            started = replays.create_replay(
                get_database(), who, doc, groups=settings.config.group_names,
                start=replay_starter(settings),  # the API's: the replay function, or a thread
            )  # fmt: skip
            return web.redirect(f"/console/replays/{started['id']}")

        return run_changing(app, act)


def dead_letter_queues(queues: DeliveryQueues, groups: Sequence[str]) -> list[dict[str, Any]]:
    """Per group: the DLQ's depth (SQS's estimate) and how long its oldest message has waited
    since it was first sent; a group SQS cannot answer for carries `error` instead."""
    now = datetime.now(UTC)
    out = []
    for group in groups:
        row: dict[str, Any] = {"group": group, "depth": None, "oldest_age": None}
        try:
            row["depth"] = queues.dlq_depth(group)
            if row["depth"]:
                sent_at = queues.oldest_dead_letter_sent_at(group)
                if sent_at is not None:
                    row["oldest_sent_at"] = sent_at
                    row["oldest_age"] = _age(now - sent_at)
        except Exception as err:  # SQS down or a queue missing: say so, show the rest
            row["error"] = f"SQS: {describe_error(err)}"
        out.append(row)
    return out


def _age(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} d"
