"""Registry providers through the real receiver and Postgres: a provider's retry is stored once
(its own event or delivery id), and URL-signing providers verify against the URL they were
given — the source's --public-url, or the one API Gateway reports."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import urlencode

import pytest
from twilio.request_validator import RequestValidator

from hookline.db import Database
from hookline_dev.local.apigw import LocalContext, build_rest_event
from tests.support import operator

pytestmark = pytest.mark.integration
FORM = "application/x-www-form-urlencoded"


def send(api, path: str, headers: dict[str, str], body: bytes, stage: str = "local"):
    event = build_rest_event("POST", path, headers, body, stage=stage)
    response = api.handler(event, LocalContext(function_name="receiver"))
    return response["statusCode"], json.loads(response.get("body") or "null")


def count(db: Database) -> int:
    with db.connection() as conn:
        row = conn.execute("SELECT count(*) AS n FROM events").fetchone()
    assert row is not None
    return int(row["n"])


def paddle_headers(secret: str, body: bytes, ts: int) -> dict[str, str]:
    sig = hmac.new(secret.encode(), f"{ts}:".encode() + body, hashlib.sha256).hexdigest()
    return {"Content-Type": "application/json", "Paddle-Signature": f"ts={ts};h1={sig}"}


def test_a_paddle_retry_is_stored_once_under_its_event_id(api, db, tenant):
    # Given a Paddle source and an event Paddle sends twice, signed afresh each time
    created = operator.add_source(db, tenant_id=tenant["id"], scheme="paddle", secrets=["pdl_k"])
    body = b'{"event_id":"evt_01hv","event_type":"subscription.created","data":{}}'
    now = int(time.time())
    first = send(api, created["path"], paddle_headers("pdl_k", body, now), body)
    again = send(api, created["path"], paddle_headers("pdl_k", body, now + 5), body)
    # Then the second is answered as a duplicate of the first, and one event is stored, typed
    assert first[0] == again[0] == 200
    assert again[1] == {"id": first[1]["id"], "duplicate": True}
    with db.connection() as conn:
        row = conn.execute("SELECT type, dedupe_key FROM events").fetchone()
    assert count(db) == 1 and dict(row) == {
        "type": "subscription.created",
        "dedupe_key": "evt_01hv",
    }


def test_twilio_verifies_against_the_public_url_of_the_source(api, db, tenant):
    # Given a Twilio source behind a proxy: Twilio was given https://hooks.example.com/twilio
    public = "https://hooks.example.com/twilio"
    created = operator.add_source(
        db, tenant_id=tenant["id"], scheme="twilio", secrets=["auth-token"],
        options={"public_url": public},
    )  # fmt: skip
    params = {"MessageSid": "SM1", "MessageStatus": "delivered", "To": "+15551234567"}
    body = urlencode(params).encode()
    headers = {
        "Content-Type": FORM,
        "Host": "abc.execute-api.eu-west-1.amazonaws.com",
        "X-Twilio-Signature": RequestValidator("auth-token").compute_signature(public, params),
        "I-Twilio-Idempotency-Token": "idem-9",
    }
    # When Twilio posts its status callback (twice: a retry)
    first = send(api, created["path"], headers, body)
    again = send(api, created["path"], headers, body)
    # Then it verifies against the public URL, typed by the message status, stored once
    assert first[0] == 200 and again[1]["duplicate"] is True
    with db.connection() as conn:
        row = conn.execute("SELECT type, dedupe_key FROM events").fetchone()
    assert dict(row) == {"type": "delivered", "dedupe_key": "idem-9"}


def test_twilio_without_a_public_url_verifies_against_the_url_api_gateway_reports(api, db, tenant):
    # Given a Twilio source on API Gateway's own URL (stage "prod")
    created = operator.add_source(db, tenant_id=tenant["id"], scheme="twilio", secrets=["tok"])
    host = "abc.execute-api.eu-west-1.amazonaws.com"
    url = f"https://{host}/prod{created['path']}"
    params = {"CallSid": "CA1", "CallStatus": "completed"}
    body = urlencode(params).encode()
    headers = {
        "Content-Type": FORM,
        "Host": host,
        "X-Forwarded-Proto": "https",
        "X-Twilio-Signature": RequestValidator("tok").compute_signature(url, params),
    }
    # When Twilio posts / Then it verifies against https://{Host}/{stage}/in/{id}
    status, _ = send(api, created["path"], headers, body, stage="prod")
    assert status == 200 and count(db) == 1
    # And a signature for another URL does not
    headers["X-Twilio-Signature"] = RequestValidator("tok").compute_signature(url + "x", params)
    status, _ = send(api, created["path"], headers, body, stage="prod")
    assert status == 401
