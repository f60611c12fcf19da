"""Actions the console and the portal share, each one management service call."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hookline.console.endpoint_edit import ordering_of, security_fields
from hookline.db import Database
from hookline.errors import BadRequest
from hookline.management import delivery_log, delivery_service, endpoint_service
from hookline.management.access import Caller
from hookline.operational import subscriptions
from hookline.settings import Settings


def resend(db: Database, settings: Settings, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """Send one delivery again, as `POST /v1/deliveries/{id}/resend` does."""
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options

    def replay(doc: dict[str, Any]) -> dict[str, Any]:
        return run_replay(db, delivery_queues(settings), doc, replay_options(settings))

    return delivery_service.resend_delivery(db, caller, delivery_id, replay)


def delivery_view(db: Database, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """A delivery as sent: its event type, payload (and transformed body), the request
    headers and each attempt (oldest first) — `hookline.management.delivery_log`."""
    return delivery_log.delivery_as_sent(db, caller, delivery_id)


def delivery_list(db: Database, caller: Caller, query: dict[str, str]) -> dict[str, Any]:
    """The delivery log page's context: rows naming their event type, endpoint and tenant,
    filtered by the page's query (state, event type, since, until; tenant for operators)."""
    keys = ("state", "event_type", "since", "until", "tenant_id", "endpoint_id")
    filters = {k: query[k] for k in keys if query.get(k)}
    rows = delivery_log.delivery_log(db, caller, filters)
    return {"q": filters, "states": delivery_log.STATES, "deliveries": rows}


def endpoint_view(
    db: Database, settings: Settings, caller: Caller, endpoint_id: str
) -> dict[str, Any]:
    """An endpoint's page: the endpoint, its health (state, last hour and day) with a chart
    of its success rate per hour, and its latest deliveries."""
    from hookline.console.charts import HEIGHT, PAD, WIDTH, success_rate_bars

    shown = endpoint_service.get_endpoint(db, caller, endpoint_id)
    health = subscriptions.get_endpoint_health(db, settings, caller, endpoint_id)
    now = datetime.now(UTC)
    hours = [
        {"hour": datetime.fromisoformat(h["hour"]), "attempts": h["attempts"],
         "succeeded": h["successes"]}
        for h in health["hourly"]
    ]  # fmt: skip
    chart = {"width": WIDTH, "height": HEIGHT, "pad": PAD, "bars": success_rate_bars(hours, now)}
    rows = delivery_log.delivery_log(db, caller, {"endpoint_id": endpoint_id}, limit=50)
    return {"endpoint": shown, "health": health, "health_chart": chart, "deliveries": rows}


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
    """An endpoint create request from a form: with its signing scheme, OAuth2 client and TLS
    material (`endpoint_edit.security_fields`)."""
    types = [t.strip() for t in form.get("event_types", "").split(",") if t.strip()]
    body: dict[str, Any] = {"url": form.get("url", "").strip(), "event_types": types}
    body.update(security_fields(form))
    if form.get("ordering", "").strip():
        body["ordering"] = ordering_of(form["ordering"].strip())
    if form.get("description"):
        body["description"] = form["description"]
    if tenant_id:
        body["tenant_id"] = tenant_id
    return body


def created_view(created: dict[str, Any]) -> dict[str, Any]:
    """The page after adding an endpoint: its `whsec_` secret, shown this once, or for Ed25519
    signing its public key (the private key is never shown)."""
    keys = created.get("public_keys") or [None]
    return {"endpoint": created, "secret": created["secret"], "public_key": keys[0]}
