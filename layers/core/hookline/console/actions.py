"""Actions the console and the portal share, each one management service call."""

from __future__ import annotations

from typing import Any

from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management import delivery_service, endpoint_service
from hookline.management.access import Caller
from hookline.settings import Settings


def resend(db: Database, settings: Settings, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """Send one delivery again, as `POST /v1/deliveries/{id}/resend` does."""
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options

    def replay(doc: dict[str, Any]) -> dict[str, Any]:
        return run_replay(db, delivery_queues(settings), doc, replay_options(settings))

    return delivery_service.resend_delivery(db, caller, delivery_id, replay)


def delivery_view(db: Database, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """A delivery with its attempts (oldest first)."""
    delivery = delivery_service.get_delivery(db, caller, delivery_id)
    attempts = delivery_service.list_attempts(db, caller, delivery_id, cursor=None, limit=200)[
        "items"
    ]
    return {"delivery": delivery, "attempts": attempts}


TEST_EVENT_TYPE = "hookline.test"


def endpoint_action(
    db: Database, settings: Settings, caller: Caller, endpoint_id: str, action: str
) -> dict[str, Any]:
    """Rotate (the answer has the new secret), enable, disable, or send a test event (the
    answer has a `notice`)."""
    if action == "rotate":
        return endpoint_service.rotate_endpoint_secret(db, settings, caller, endpoint_id)
    if action in ("enable", "disable"):
        enable = action == "enable"
        reason = None if enable else f"disabled by {caller.principal}"
        endpoint_service.set_endpoint_enabled(
            db, caller, endpoint_id, enabled=enable, reason=reason
        )
        return {"notice": f"{action}d"}
    if action == "test":
        sent = endpoint_service.send_test_event(
            db, settings, caller, endpoint_id, type=TEST_EVENT_TYPE, payload=None
        )
        return {"notice": "test-sent", "event_id": sent["event_id"]}
    raise BadRequest(f"no action {action}")


def endpoint_body(form: dict[str, str], tenant_id: str | None) -> dict[str, Any]:
    """An endpoint create request from a form."""
    types = [t.strip() for t in form.get("event_types", "").split(",") if t.strip()]
    body: dict[str, Any] = {"url": form.get("url", "").strip(), "event_types": types}
    if form.get("description"):
        body["description"] = form["description"]
    if tenant_id:
        body["tenant_id"] = tenant_id
    return body
