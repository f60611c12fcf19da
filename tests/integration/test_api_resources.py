"""The management API: tenants, sources, endpoints, events, deliveries and status, as an
operator would use them; errors as problem+json; paging, filters and Idempotency-Key."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from hookline.repositories import audit as audit_repo

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"


def make_tenant(mgmt, name="acme"):
    result = mgmt.post("/v1/tenants", {"name": name})
    assert result.status == 201, result.body
    return result.json()


def make_endpoint(mgmt, tenant_id, **fields):
    result = mgmt.post("/v1/endpoints", {"tenant_id": tenant_id, "url": PUBLIC_URL, **fields})
    assert result.status == 201, result.body
    return result.json()


def publish(mgmt, tenant_id, type="order.created", payload=None, **kwargs):
    result = mgmt.post(
        "/v1/events", {"tenant_id": tenant_id, "type": type, "payload": payload or {}}, **kwargs
    )
    assert result.status == 200, result.body
    return result.json()["id"]


def test_an_operator_creates_and_reads_a_tenant(mgmt):
    tenant = make_tenant(mgmt)
    assert tenant["name"] == "acme" and tenant["group"] == "standard"
    assert mgmt.get(f"/v1/tenants/{tenant['id']}").json() == tenant
    assert mgmt.get("/v1/tenants").json() == {"items": [tenant], "next_cursor": None}


def test_lists_page_with_an_opaque_cursor_newest_first(mgmt):
    ids = [make_tenant(mgmt, f"t{i}")["id"] for i in range(5)]
    first = mgmt.get("/v1/tenants", limit=2).json()
    second = mgmt.get("/v1/tenants", limit=2, cursor=first["next_cursor"]).json()
    third = mgmt.get("/v1/tenants", limit=2, cursor=second["next_cursor"]).json()
    seen = [t["id"] for page in (first, second, third) for t in page["items"]]
    assert seen == list(reversed(ids))
    assert third["next_cursor"] is None


def test_a_forged_cursor_is_a_clear_400(mgmt):
    result = mgmt.get("/v1/tenants", cursor="not-a-cursor")
    assert result.status == 400
    assert result.headers["Content-Type"] == "application/problem+json"
    assert "cursor is not valid" in result.json()["detail"]


def test_a_source_is_created_with_a_generated_secret_shown_once(mgmt):
    tenant = make_tenant(mgmt)
    created = mgmt.post("/v1/sources", {"tenant_id": tenant["id"], "scheme": "standard"})
    assert created.status == 201, created.body
    source = created.json()
    assert source["secret"].startswith("whsec_")
    assert source["path"] == f"/in/{source['id']}"
    shown = mgmt.get(f"/v1/sources/{source['id']}").json()
    listed = mgmt.get("/v1/sources", tenant_id=tenant["id"]).json()["items"]
    assert "secret" not in shown and "secrets" not in shown
    assert source["secret"] not in json.dumps(listed)
    assert mgmt.post(f"/v1/sources/{source['id']}/disable").json()["enabled"] is False
    assert mgmt.post(f"/v1/sources/{source['id']}/enable").json()["enabled"] is True


def test_rotating_a_source_secret_keeps_the_previous_one_verifying(mgmt, db):
    from hookline.repositories.sources import get_source

    tenant = make_tenant(mgmt)
    source = mgmt.post("/v1/sources", {"tenant_id": tenant["id"], "scheme": "standard"}).json()
    rotated = mgmt.post(f"/v1/sources/{source['id']}/rotate-secret", {}).json()
    assert rotated["previous_kept"] is True and rotated["secret"].startswith("whsec_")
    with db.connection() as conn:
        assert get_source(conn, source["id"]).secrets == (rotated["secret"], source["secret"])


def test_an_endpoint_lifecycle_create_update_disable_rotate(mgmt, db):
    tenant = make_tenant(mgmt)
    endpoint = make_endpoint(mgmt, tenant["id"], event_types=["order.*"], headers={"X-Team": "a"})
    assert endpoint["secret"].startswith("whsec_")
    assert endpoint["event_types"] == ["order.*"] and endpoint["headers"] == {"X-Team": "a"}

    updated = mgmt.patch(
        f"/v1/endpoints/{endpoint['id']}", {"max_concurrency": 9, "rate_limit_per_second": 2.5}
    )
    assert updated.status == 200, updated.body
    assert updated.json()["max_concurrency"] == 9
    assert updated.json()["rate_limit_per_second"] == 2.5
    assert updated.json()["event_types"] == ["order.*"]  # untouched fields stay

    disabled = mgmt.post(f"/v1/endpoints/{endpoint['id']}/disable", {"reason": "maintenance"})
    assert (disabled.json()["enabled"], disabled.json()["disabled_reason"]) == (
        False,
        "maintenance",
    )
    assert mgmt.get("/v1/endpoints", enabled="false").json()["items"][0]["id"] == endpoint["id"]
    assert mgmt.post(f"/v1/endpoints/{endpoint['id']}/enable").json()["enabled"] is True

    rotated = mgmt.post(f"/v1/endpoints/{endpoint['id']}/rotate-secret").json()
    assert rotated["secret"] != endpoint["secret"]
    assert datetime.fromisoformat(rotated["previous_secrets_expire_at"]) > datetime.now(UTC)
    from hookline.repositories.endpoints import active_secrets

    with db.connection() as conn:
        assert active_secrets(conn, endpoint["id"]) == [rotated["secret"], endpoint["secret"]]
        actions = [e["action"] for e in audit_repo.list_audit_entries(conn)]
    assert {"create", "update", "disable", "enable", "rotate_secret"} <= set(actions)
    listed = mgmt.get("/v1/endpoints").json()
    assert endpoint["secret"] not in json.dumps(listed)


@pytest.mark.parametrize(
    ("url", "detail"),
    [
        ("http://93.184.216.34/x", "https"),
        ("https://127.0.0.1/x", "address"),
        ("https://169.254.169.254/latest/meta-data", "address"),
        ("https://user:pw@93.184.216.34/", "user name"),
    ],
)
def test_unsafe_endpoint_urls_are_refused_on_create_and_update(mgmt, url, detail):
    tenant = make_tenant(mgmt)
    refused = mgmt.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": url})
    assert refused.status == 400
    assert detail in refused.json()["detail"]
    endpoint = make_endpoint(mgmt, tenant["id"])
    assert mgmt.patch(f"/v1/endpoints/{endpoint['id']}", {"url": url}).status == 400
    assert mgmt.get(f"/v1/endpoints/{endpoint['id']}").json()["url"] == PUBLIC_URL


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": ""}, "name"),
        ({}, "name"),
        ({"name": "x", "colour": "red"}, "colour"),
        ({"name": 5}, "name"),
    ],
)
def test_validation_errors_are_problems_naming_the_field(mgmt, body, field):
    result = mgmt.post("/v1/tenants", body)
    assert result.status == 422
    assert result.headers["Content-Type"] == "application/problem+json"
    problem = result.json()
    assert problem["status"] == 422 and field in problem["detail"]
    assert [e["field"] for e in problem["errors"]] == [field]


def test_malformed_json_and_unknown_routes_are_problems(mgmt):
    bad = mgmt.request(
        "POST", "/v1/tenants", raw=b"{nope", headers={"Content-Type": "application/json"}
    )
    assert (bad.status, bad.json()["detail"]) == (400, "body is not valid JSON")
    missing = mgmt.get("/v1/nothing-here")
    assert missing.status == 404 and missing.headers["Content-Type"] == "application/problem+json"
    assert mgmt.get("/v1/endpoints/ep_missing").json()["detail"] == "no endpoint ep_missing"


def test_the_same_idempotency_key_creates_once_and_answers_the_same(mgmt):
    tenant = make_tenant(mgmt)
    body = {"tenant_id": tenant["id"], "url": PUBLIC_URL}
    headers = {"Idempotency-Key": "create-ep-1"}
    first = mgmt.post("/v1/endpoints", body, headers=headers)
    again = mgmt.post("/v1/endpoints", body, headers=headers)
    assert (first.status, again.status) == (201, 201)
    assert first.json()["secret"].startswith("whsec_")
    shown_once = {**first.json(), "secret": None, "secret_note": again.json()["secret_note"]}
    assert again.json() == shown_once  # the first answer, but its secret only the first time
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert len(mgmt.get("/v1/endpoints").json()["items"]) == 1
    other = mgmt.post("/v1/endpoints", {**body, "description": "x"}, headers=headers)
    assert other.status == 409 and "different request" in other.json()["detail"]


def test_a_failed_create_does_not_burn_its_idempotency_key(mgmt):
    headers = {"Idempotency-Key": "k1"}
    body = {"tenant_id": "ten_missing", "url": PUBLIC_URL}
    assert mgmt.post("/v1/endpoints", body, headers=headers).status == 404
    assert mgmt.post("/v1/endpoints", body, headers=headers).status == 404


def test_events_are_listed_with_filters_and_shown_with_their_payload(mgmt):
    tenant = make_tenant(mgmt)
    first = publish(mgmt, tenant["id"], "order.created", {"n": 1})
    second = publish(mgmt, tenant["id"], "order.paid", {"n": 2})
    items = mgmt.get("/v1/events", tenant_id=tenant["id"]).json()["items"]
    assert [e["id"] for e in items] == [second, first]
    paid = mgmt.get("/v1/events", type="order.paid").json()["items"]
    assert [e["id"] for e in paid] == [second]
    future = (datetime.now(UTC) + timedelta(hours=1)).isoformat()
    assert mgmt.get("/v1/events", since=future).json()["items"] == []
    past = (datetime.now(UTC) - timedelta(hours=1)).isoformat()
    assert len(mgmt.get("/v1/events", since=past, until=future).json()["items"]) == 2
    assert mgmt.get("/v1/events", since=future, until=past).status == 400
    shown = mgmt.get(f"/v1/events/{first}").json()
    assert (shown["type"], shown["payload"], shown["origin"]) == (
        "order.created",
        {"n": 1},
        "publish",
    )


def test_a_test_event_creates_one_delivery_to_that_endpoint_only(mgmt, db):
    tenant = make_tenant(mgmt)
    endpoint = make_endpoint(mgmt, tenant["id"])
    make_endpoint(mgmt, tenant["id"])  # another endpoint that matches every type
    sent = mgmt.post(f"/v1/endpoints/{endpoint['id']}/test")
    assert sent.status == 201, sent.body
    deliveries = mgmt.get("/v1/deliveries", event_id=sent.json()["event_id"]).json()["items"]
    assert [(d["id"], d["endpoint_id"], d["state"]) for d in deliveries] == [
        (sent.json()["delivery_id"], endpoint["id"], "pending")
    ]
    event = mgmt.get(f"/v1/events/{sent.json()['event_id']}").json()
    assert event["type"] == "hookline.test" and event["fanned_out_at"] is not None
    delivery = mgmt.get(f"/v1/deliveries/{sent.json()['delivery_id']}").json()
    assert delivery["attempt_count"] == 0
    attempts = mgmt.get(f"/v1/deliveries/{delivery['id']}/attempts").json()
    assert attempts == {"items": [], "next_cursor": None}
    assert mgmt.get("/v1/deliveries", state="pending", endpoint_id=endpoint["id"]).json()["items"]
    assert mgmt.get("/v1/deliveries", state="dead").json()["items"] == []


def test_attempts_of_a_delivery_are_listed_oldest_first(mgmt, db):
    tenant = make_tenant(mgmt)
    endpoint = make_endpoint(mgmt, tenant["id"])
    delivery_id = mgmt.post(f"/v1/endpoints/{endpoint['id']}/test").json()["delivery_id"]
    with db.connection() as conn:
        for status in (500, 503, 200):
            conn.execute(
                "INSERT INTO attempts (delivery_id, duration_ms, status_code) VALUES (%s, 5, %s)",
                (delivery_id, status),
            )
    first = mgmt.get(f"/v1/deliveries/{delivery_id}/attempts", limit=2).json()
    rest = mgmt.get(
        f"/v1/deliveries/{delivery_id}/attempts", limit=2, cursor=first["next_cursor"]
    ).json()
    assert [a["status_code"] for a in first["items"] + rest["items"]] == [500, 503, 200]


def test_resend_replays_one_delivery_through_the_replay_service(
    mgmt, db, sqs, moto_endpoint, monkeypatch
):
    from hookline.config import HooklineConfig
    from hookline.runtime import reset_runtime
    from hookline.settings import get_settings
    from hookline_dev.local.queues import ensure_queues

    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    get_settings.cache_clear()
    reset_runtime()
    ensure_queues(sqs, HooklineConfig())
    tenant = make_tenant(mgmt)
    endpoint = make_endpoint(mgmt, tenant["id"])
    delivery_id = mgmt.post(f"/v1/endpoints/{endpoint['id']}/test").json()["delivery_id"]
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries SET state = 'dead', finished_at = now() WHERE id = %s",
            (delivery_id,),
        )
    resent = mgmt.post(f"/v1/deliveries/{delivery_id}/resend")
    assert resent.status == 200, resent.body
    assert resent.json()["enqueued"] == 1 and resent.json()["audit_id"]
    assert mgmt.get(f"/v1/deliveries/{delivery_id}").json()["state"] == "queued"
    reset_runtime()


def test_status_summarises_deliveries_events_and_endpoints(mgmt):
    tenant = make_tenant(mgmt)
    endpoint = make_endpoint(mgmt, tenant["id"])
    mgmt.post(f"/v1/endpoints/{endpoint['id']}/test")
    publish(mgmt, tenant["id"])
    status = mgmt.get("/v1/status").json()
    assert status["deliveries"] == {"pending": 1}
    assert status["events_24h"] == 2 and status["outbox_pending"] == 1
    assert (status["endpoints_enabled"], status["endpoints_disabled"]) == (1, 0)
