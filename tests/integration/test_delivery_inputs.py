"""What a tenant's configuration or a subscriber's answer cannot do to a delivery: make its
attempt fail to record, or leave it in `delivering` with no attempt (issue 12). Real Postgres,
moto SQS, the real deliver handler, a loopback subscriber."""

from __future__ import annotations

import json

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration


def subscribed(db: Database, url: str) -> tuple[str, dict]:
    tenant = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    endpoint = operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=url)
    return tenant, endpoint


def publish(db: Database, tenant_id: str) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="order.created", payload={}).id


def store_headers(db: Database, endpoint_id: str, headers: dict[str, str]) -> None:
    # As a row saved before the API checked header syntax (or written by hand) would be
    with db.connection() as conn:
        conn.execute(
            "UPDATE endpoints SET headers = %s WHERE id = %s", (json.dumps(headers), endpoint_id)
        )


@pytest.mark.parametrize(
    "headers", [{"X-Team": "café"}, {"X-Équipe": "payments"}], ids=["value", "name"]
)
def test_a_stored_non_ascii_header_is_a_recorded_failed_attempt_not_a_stuck_delivery(
    pipeline, db, sink, headers
):
    # Given an endpoint whose stored custom header httpx cannot encode
    tenant, endpoint = subscribed(db, sink.url("/h"))
    store_headers(db, endpoint["id"], headers)
    event_id = publish(db, tenant)
    # When the pipeline delivers it
    pipeline.run_until(lambda: attempt_count(pipeline, event_id) >= 1)
    # Then the attempt is recorded with the exception's class, and the delivery waits for its
    # retry instead of sitting in `delivering`
    delivery = one(pipeline, event_id)
    [attempt] = pipeline.attempts(delivery["id"])
    assert attempt["error_class"] == "UnicodeEncodeError" and attempt["status_code"] is None
    assert delivery["state"] in ("queued", "pending") and delivery["attempt_count"] == 1
    assert sink.requests("/h") == []
    # And once the header is fixed, the retry the policy scheduled delivers it
    store_headers(db, endpoint["id"], {"X-Team": "payments"})
    pipeline.run_until(lambda: state(pipeline, event_id) == "delivered")
    [request] = sink.requests("/h")
    assert request.headers["x-team"] == "payments"
    assert one(pipeline, event_id)["attempt_count"] == 2


def test_a_stored_bad_header_runs_out_its_retries_and_ends_dead(pipeline, db, sink):
    # Given a header that never becomes sendable, and a delivery with seconds to its deadline
    tenant, endpoint = subscribed(db, sink.url("/never"))
    store_headers(db, endpoint["id"], {"X-Team": "naïve"})
    event_id = publish(db, tenant)
    pipeline.fanout()
    with db.connection() as conn:
        conn.execute("UPDATE deliveries SET deadline_at = now() + interval '2 seconds'")
    # When the pipeline runs, then every attempt is recorded and the delivery ends dead
    pipeline.run_until(lambda: state(pipeline, event_id) == "dead", timeout=30)
    delivery = one(pipeline, event_id)
    attempts = pipeline.attempts(delivery["id"])
    assert [a["error_class"] for a in attempts] == ["UnicodeEncodeError"] * len(attempts)
    assert len(attempts) == delivery["attempt_count"] >= 2
    assert "UnicodeEncodeError" in delivery["last_error"]


def test_a_nul_byte_in_the_answer_is_recorded_with_the_attempt(pipeline, db, sink):
    # Given a subscriber whose error answer holds a NUL byte (Postgres text cannot)
    sink.behave("/nul", statuses=[500, 200], body=b"broken\x00answer")
    tenant, _ = subscribed(db, sink.url("/nul"))
    event_id = publish(db, tenant)
    # When it is delivered (failing once, then answering 200)
    pipeline.run_until(lambda: state(pipeline, event_id) == "delivered")
    # Then both attempts were recorded, the NUL replaced
    first, second = pipeline.attempts(one(pipeline, event_id)["id"])
    assert (first["status_code"], second["status_code"]) == (500, 200)
    assert first["response_excerpt"] == "broken\ufffdanswer"


@pytest.mark.parametrize(
    ("body", "excerpt"),
    [(b"x" * (1 << 20), "x" * 1024), ("é€😀".encode() * 2000, "é€😀" * 341 + "é")],
    ids=["a megabyte", "multi-byte characters"],
)
def test_a_huge_answer_is_delivered_and_recorded_as_a_bounded_excerpt(
    pipeline, db, sink, body, excerpt
):
    # Given a subscriber that answers 200 with a far larger body than an excerpt holds
    sink.behave("/huge", body=body)
    tenant, _ = subscribed(db, sink.url("/huge"))
    event_id = publish(db, tenant)
    # When it is delivered
    pipeline.run_until(lambda: state(pipeline, event_id) == "delivered")
    # Then its attempt keeps the answer's first 1,024 characters, whole characters only
    [attempt] = pipeline.attempts(one(pipeline, event_id)["id"])
    assert attempt["status_code"] == 200 and attempt["response_excerpt"] == excerpt


def one(pipeline, event_id: str) -> dict:
    return pipeline.delivery(event_id=event_id)


def state(pipeline, event_id: str) -> str | None:
    """The event's one delivery's state (None before fan-out)."""
    return one(pipeline, event_id)["state"] if pipeline.states() else None


def attempt_count(pipeline, event_id: str) -> int:
    """Attempts recorded for the event's delivery (0 before fan-out)."""
    return len(pipeline.attempts(one(pipeline, event_id)["id"])) if pipeline.states() else 0


PUBLIC_URL = "https://93.184.216.34/hooks"


@pytest.mark.parametrize(
    ("headers", "named"),
    [
        ({"X-Team": "café"}, "'X-Team'"),
        ({"X-Équipe": "payments"}, "'X-Équipe'"),
        ({"X Team": "payments"}, "'X Team'"),
        ({"X-Token": "Bearer abc\r\nX-Injected: 1"}, "'X-Token'"),
        ({"X-Token": " padded"}, "'X-Token'"),
    ],
    ids=["non-ascii-value", "non-ascii-name", "space-in-name", "crlf-in-value", "leading-space"],
)
def test_the_api_refuses_an_unsendable_header_at_save_naming_it(mgmt, headers, named):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()["id"]
    good = mgmt.post("/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL})
    assert good.status == 201, good.body
    # When a header httpx could not send is given at create, or by PATCH
    created = mgmt.post(
        "/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL, "headers": headers}
    )
    patched = mgmt.patch(f"/v1/endpoints/{good.json()['id']}", {"headers": headers})
    # Then both are refused with the header's name, never its value (it may be a token)
    for answer in (created, patched):
        assert answer.status == 422, answer.body
        assert named in answer.json()["detail"]
        assert b"payments" not in answer.body and b"abc" not in answer.body
    # And nothing was saved
    endpoints = mgmt.get("/v1/endpoints").json()["items"]
    assert [e["headers"] for e in endpoints] == [{}]


def test_an_ordinary_header_is_still_saved_and_shown(mgmt):
    tenant = mgmt.post("/v1/tenants", {"name": "acme"}).json()["id"]
    headers = {"X-Team": "payments", "Authorization": "Bearer a.b-c_d~e+f/g="}
    created = mgmt.post(
        "/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL, "headers": headers}
    )
    assert created.status == 201 and created.json()["headers"] == headers
