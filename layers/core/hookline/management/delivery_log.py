"""What the console and the portal show of deliveries (issue 26): a log that names things
(event type, endpoint URL or description, tenant name), filterable by event type, state and
time; and one delivery as it was sent — the payload exactly as sent (pretty-printed when it is
JSON, the transformed body where a transformer applies), the request headers (signature
values recomputed, secrets never shown, custom header values masked) and each attempt."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from hookline import USER_AGENT
from hookline.db import Database
from hookline.errors import BadRequest, NotFound
from hookline.management.access import Caller
from hookline.patterns import event_document
from hookline.repositories import delivery_log as repo
from hookline.signing import sign
from hookline.transformers import TransformFailed, render

STATES = ("pending", "queued", "delivering", "delivered", "failed", "dead", "held")
MAX_SHOWN_BYTES = 256 * 1024
MAX_ATTEMPTS_SHOWN = 200
MASK = "•••"


def _time(value: str, field: str) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise BadRequest(f"{field}: a date and time such as 2026-12-01T09:30") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def delivery_log(
    db: Database, caller: Caller, filters: dict[str, str], *, limit: int = 100
) -> list[dict[str, Any]]:
    """Deliveries in scope, newest first. `filters`: tenant_id, endpoint_id, state,
    event_type, since, until (ISO 8601; without an offset, UTC); a bad one is a BadRequest
    naming it."""
    state = filters.get("state") or None
    if state is not None and state not in STATES:
        raise BadRequest(f"state: one of {', '.join(STATES)}")
    event_type = (filters.get("event_type") or "").strip() or None
    if event_type is not None and len(event_type) > 255:
        raise BadRequest("event_type: at most 255 characters")
    with db.connection() as conn:
        return repo.delivery_log(
            conn, caller.tenant, tenant_id=filters.get("tenant_id") or None,
            endpoint_id=filters.get("endpoint_id") or None, state=state, event_type=event_type,
            since=_time(filters.get("since", ""), "since"),
            until=_time(filters.get("until", ""), "until"), limit=limit,
        )  # fmt: skip


def shown_body(body: bytes) -> tuple[str, bool]:
    """A body for a page: pretty JSON when it is JSON, else its text; and whether it is JSON.
    The page escapes it (never interpreted); over MAX_SHOWN_BYTES it is cut."""
    cut = body[:MAX_SHOWN_BYTES]
    try:
        return json.dumps(json.loads(cut), indent=2, ensure_ascii=False), True
    except (UnicodeDecodeError, ValueError, RecursionError):
        text = cut.decode("utf-8", "replace")
        return text + ("\n… (cut)" if len(body) > MAX_SHOWN_BYTES else ""), False


def delivery_as_sent(db: Database, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """One delivery in scope as sent: event, bodies, request headers per attempt, attempts."""
    with db.connection() as conn:
        row = repo.delivery_as_sent(conn, caller.tenant, delivery_id)
        if row is None:
            raise NotFound(f"no delivery {delivery_id}")
        attempts = repo.attempts(conn, delivery_id, MAX_ATTEMPTS_SHOWN)
        try:
            secrets = repo.signing_secrets(conn, row["endpoint_id"])
        except Exception:  # a secret that cannot be opened here: the page says so
            secrets = []
    payload = bytes(row.pop("payload"))
    sent, content_type = payload, row["content_type"] or "application/json"
    transformed: str | None = None
    transform_error: str | None = None
    if row["input_transformer"]:
        document = event_document(row["event_type"], row["tenant_id"], row["source_id"], payload)
        try:
            rendered = render(row["input_transformer"], document)
            sent, content_type = rendered.body, rendered.content_type
            transformed = shown_body(sent)[0]
        except TransformFailed as err:
            transform_error = str(err)
    for attempt in attempts:
        attempt["request_headers"] = request_headers(row, attempt, sent, content_type, secrets)
    payload_text, is_json = shown_body(payload)
    return {
        "delivery": row,
        "payload": payload_text,
        "payload_is_json": is_json,
        "transformed": transformed,
        "transform_error": transform_error,
        "content_type": content_type,
        "attempts": attempts,
        "signatures_recomputed": bool(secrets),
    }


def request_headers(
    row: dict[str, Any], attempt: dict[str, Any], body: bytes, content_type: str,
    secrets: list[str],
) -> list[tuple[str, str]]:  # fmt: skip
    """The headers an attempt sent: the endpoint's custom headers (values masked: they may be
    credentials), then the signature headers as the deliverer makes them — the timestamp is
    the attempt's, the signatures recomputed with the endpoint's active secrets."""
    headers = [(name, MASK) for name in (row["headers"] or {})]
    timestamp = int(datetime.fromisoformat(str(attempt["attempted_at"])).timestamp())
    if secrets:
        signed = sign(row["id"], timestamp, body, secrets)
        headers += sorted(signed.items())
    else:
        headers += [("webhook-id", row["id"]), ("webhook-timestamp", str(timestamp)),
                    ("webhook-signature", "(not available here)")]  # fmt: skip
    headers += [("content-type", content_type), ("user-agent", USER_AGENT)]
    return headers
