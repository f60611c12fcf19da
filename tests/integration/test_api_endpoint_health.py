"""`GET /v1/endpoints/{id}/health` and the routes that say who hears about endpoints
(decision 0068): health as data over the last hour and day, per-endpoint thresholds, and a
tenant's opt-in e-mail and chat notifications, each within the caller's scope."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hookline.fanout import FanoutOptions
from hookline.repositories import deliveries as delivery_repo
from tests.support.management import as_tenant

pytestmark = pytest.mark.integration

URL = "https://93.184.216.34/hooks"


def attempts(db, endpoint_id: str, outcomes: list[tuple[int, int]], minutes_ago: int) -> None:
    """Attempts (status, duration ms) of one delivery to the endpoint, `minutes_ago`."""
    with db.connection() as conn:
        [delivery] = conn.execute(
            "SELECT id FROM deliveries WHERE endpoint_id = %s", (endpoint_id,)
        ).fetchall()
        at = datetime.now(UTC) - timedelta(minutes=minutes_ago)
        for i, (status, ms) in enumerate(outcomes):
            conn.execute(
                "INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code)"
                " VALUES (%s, %s, %s, %s)",
                (delivery["id"], at + timedelta(seconds=i), ms, status),
            )


def test_health_says_how_an_endpoint_did_over_the_hour_and_the_day(mgmt, db):
    # Given an endpoint whose delivery was tried 3 hours ago (ok, ok) and just now
    # (ok, then two failures)
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    ep = mgmt.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": URL}).json()
    mgmt.post("/v1/events", {"tenant_id": tenant["id"], "type": "a.b", "payload": {}})
    with db.connection() as conn:
        delivery_repo.fan_out_batch(conn, limit=10, deadline=FanoutOptions().deadline)
    attempts(db, ep["id"], [(200, 100), (200, 300)], minutes_ago=180)
    attempts(db, ep["id"], [(200, 50), (500, 900), (503, 1000)], minutes_ago=1)
    # When the operator asks for its health
    answer = mgmt.get(f"/v1/endpoints/{ep['id']}/health")
    # Then the hour and the day each have their rate, latencies and failure streak
    assert answer.status == 200, answer.body
    health = answer.json()
    assert health["state"] == "healthy"
    hour, day = health["last_hour"], health["last_day"]
    assert (hour["attempts"], hour["successes"], hour["consecutive_failures"]) == (3, 1, 2)
    assert hour["success_rate"] == pytest.approx(0.3333, abs=1e-3)
    assert hour["p50_ms"] == 900 and hour["p99_ms"] >= 990
    assert (day["attempts"], day["successes"]) == (5, 3)
    assert hour["last_success_at"] is not None
    assert len(health["hourly"]) == 24 and sum(h["attempts"] for h in health["hourly"]) == 5
    assert health["thresholds"] == {
        "failing_after_attempts": 5, "failing_error_rate": 0.5, "failing_window_seconds": 900,
    }  # fmt: skip


def test_thresholds_and_notifications_are_set_within_the_callers_scope(mgmt, db):
    # Given two tenants, each with an endpoint, and a caller scoped to the first
    acme = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    other = mgmt.post("/v1/tenants", {"name": "other"}).json()
    ep = mgmt.post("/v1/endpoints", {"tenant_id": acme["id"], "url": URL}).json()
    theirs = mgmt.post("/v1/endpoints", {"tenant_id": other["id"], "url": URL}).json()
    tenant = as_tenant(mgmt, db, acme["id"])
    # When it sets its endpoint's thresholds and opts in to e-mail and chat
    set_ = tenant.request(
        "PUT", f"/v1/endpoints/{ep['id']}/health/thresholds",
        {"failing_after_attempts": 3, "failing_error_rate": 0.25},
    )  # fmt: skip
    opted = tenant.request(
        "PUT", f"/v1/tenants/{acme['id']}/notifications",
        {"emails": ["oncall@acme.example"], "chat_url": "https://93.184.216.34/chat"},
    )  # fmt: skip
    # Then both hold, and the health shows the thresholds in force
    assert set_.status == 200 and set_.json()["failing_after_attempts"] == 3
    assert opted.status == 200 and opted.json()["emails"] == ["oncall@acme.example"]
    shown = tenant.get(f"/v1/endpoints/{ep['id']}/health").json()["thresholds"]
    assert shown == {"failing_after_attempts": 3, "failing_error_rate": 0.25,
                     "failing_window_seconds": 900}  # fmt: skip
    # But another tenant's endpoint is not found, and bad values are 400s naming the field
    assert tenant.get(f"/v1/endpoints/{theirs['id']}/health").status == 404
    assert tenant.request("PUT", f"/v1/tenants/{other['id']}/notifications", {}).status == 404
    bad_rate = tenant.request(
        "PUT", f"/v1/endpoints/{ep['id']}/health/thresholds", {"failing_error_rate": 2}
    )
    bad_mail = tenant.request(
        "PUT", f"/v1/tenants/{acme['id']}/notifications", {"emails": ["not-an-address"]}
    )
    private = tenant.request(
        "PUT", f"/v1/tenants/{acme['id']}/notifications", {"chat_url": "https://10.0.0.1/x"}
    )
    assert bad_rate.status == 400 and "failing_error_rate" in bad_rate.body.decode()
    assert bad_mail.status == 400 and "emails" in bad_mail.body.decode()
    assert private.status == 400
