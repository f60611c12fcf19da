"""Publishing the tenant's own events: through the API, and inside the caller's transaction."""

from __future__ import annotations

import json

import psycopg
import pytest

import hookline
from hookline.db import Database
from tests.support.lambdas import ApiClient
from tests.support.management import OPERATOR

pytestmark = pytest.mark.integration

IDENTITY = OPERATOR  # the management API's operator role (tests/support/management.py)


@pytest.fixture
def api(management_env) -> ApiClient:
    """The management API handler, which serves POST /v1/events."""
    from functions.api.handler import lambda_handler

    return ApiClient(lambda_handler)


def events(db: Database) -> list[dict]:
    with db.connection() as conn:
        return conn.execute(
            "SELECT e.id, e.type, e.payload, o.event_id AS outbox FROM events e "
            "LEFT JOIN outbox o ON o.event_id = e.id"
        ).fetchall()


def test_an_authenticated_producer_publishes_an_event(api, db, tenant):
    body = json.dumps({"tenant_id": tenant["id"], "type": "order.created", "payload": {"n": 1}})
    result = api.post("/v1/events", body=body.encode(), identity_arn=IDENTITY)
    assert result.status == 200
    rows = events(db)
    assert [(r["id"], r["type"], json.loads(bytes(r["payload"]))) for r in rows] == [
        (result.json()["id"], "order.created", {"n": 1})
    ]
    assert rows[0]["outbox"] == rows[0]["id"]


def test_the_same_idempotency_key_publishes_once(api, db, tenant):
    body = json.dumps({"tenant_id": tenant["id"], "type": "order.created", "payload": {}}).encode()
    headers = {"Idempotency-Key": "order-42"}
    first = api.post("/v1/events", body=body, headers=headers, identity_arn=IDENTITY)
    second = api.post("/v1/events", body=body, headers=headers, identity_arn=IDENTITY)
    assert second.json() == {"id": first.json()["id"], "duplicate": True}
    assert len(events(db)) == 1


def test_without_an_identity_v1_is_refused(api, db, tenant):
    body = json.dumps({"tenant_id": tenant["id"], "type": "x", "payload": {}}).encode()
    result = api.post("/v1/events", body=body)
    assert result.status == 403
    assert events(db) == []


def test_an_unknown_principal_is_refused(api, db, tenant):
    body = json.dumps({"tenant_id": tenant["id"], "type": "x", "payload": {}}).encode()
    result = api.post("/v1/events", body=body, identity_arn="arn:aws:iam::123456789012:user/x")
    assert result.status == 403
    assert events(db) == []


def test_local_mode_allows_v1_without_identity(api, db, tenant, monkeypatch):
    from hookline.settings import get_settings

    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    get_settings.cache_clear()
    body = json.dumps({"tenant_id": tenant["id"], "type": "x", "payload": {}}).encode()
    assert api.post("/v1/events", body=body).status == 200


@pytest.mark.parametrize(
    ("body", "expected", "detail"),
    [
        (b"not json", 400, "not valid JSON"),
        (b"[1]", 400, "JSON object"),
        (b'{"type": "x", "payload": {}}', 400, "tenant_id"),
        (b'{"tenant_id": "ten_nope", "type": "x", "payload": {}}', 404, "unknown tenant"),
        (b'{"tenant_id": "T", "type": "", "payload": {}}', 400, "type"),
        (b'{"tenant_id": "T", "type": "has space", "payload": {}}', 400, "whitespace"),
    ],
)
def test_bad_publish_requests_are_explained_and_store_nothing(
    api, db, tenant, body, expected, detail
):
    body = body.replace(b'"T"', json.dumps(tenant["id"]).encode())
    result = api.post("/v1/events", body=body, identity_arn=IDENTITY)
    assert result.status == expected
    assert detail in result.json()["detail"]
    assert events(db) == []


def test_publish_inside_a_rolled_back_transaction_leaves_nothing(db, database_url, tenant):
    # Given a producer writing its own row and an event in one transaction
    with psycopg.connect(database_url) as conn:
        conn.execute("CREATE TABLE orders (id int)")
        conn.commit()
        with pytest.raises(RuntimeError), conn.transaction():
            conn.execute("INSERT INTO orders VALUES (1)")
            hookline.publish(conn, tenant_id=tenant["id"], type="order.created", payload={"id": 1})
            # When its transaction fails after the publish
            raise RuntimeError("business rule failed")
        # Then neither the order nor the event exists
        assert conn.execute("SELECT count(*) FROM orders").fetchone() == (0,)
    assert events(db) == []


def test_publish_inside_a_committed_transaction_is_stored_with_its_outbox_row(
    db, database_url, tenant
):
    with psycopg.connect(database_url) as conn, conn.transaction():
        accepted = hookline.publish(conn, tenant_id=tenant["id"], type="order.created", payload={})
    rows = events(db)
    assert [r["id"] for r in rows] == [accepted.id]
    assert rows[0]["outbox"] == accepted.id


def test_in_local_mode_the_api_publishes_without_identity_and_the_receiver_has_no_v1(
    api, management_env, db, tenant, monkeypatch
):
    # `hookline dev` routes all of /v1 to the API function, as API Gateway does; the receiver
    # serves /in only (its transitional POST /v1/events is gone)
    from functions.receiver.handler import lambda_handler
    from hookline.settings import get_settings

    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    get_settings.cache_clear()
    body = json.dumps({"tenant_id": tenant["id"], "type": "x", "payload": {}}).encode()
    assert ApiClient(lambda_handler).post("/v1/events", body=body).status == 404
    assert api.post("/v1/events", body=b"[1]").json()["detail"] == "body must be a JSON object"
    result = api.post("/v1/events", body=body)
    assert result.status == 200
    assert [r["id"] for r in events(db)] == [result.json()["id"]]


def test_a_type_or_key_with_control_characters_is_refused(db, database_url, tenant):
    from hookline.errors import BadRequest

    with psycopg.connect(database_url) as conn:
        with pytest.raises(BadRequest, match="printable"):
            hookline.publish(conn, tenant_id=tenant["id"], type="a\x00b", payload={})
        with pytest.raises(BadRequest, match="printable"):
            hookline.publish(
                conn, tenant_id=tenant["id"], type="a", payload={}, idempotency_key="k\x00"
            )
    assert events(db) == []
