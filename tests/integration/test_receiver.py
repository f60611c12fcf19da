"""The receiver end to end against real Postgres: verify, store once, answer."""

from __future__ import annotations

import io
import json
import logging
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from hookline import observability
from hookline.db import Database
from hookline.observability import logger
from tests.integration.conftest import GITHUB_SECRET, STANDARD_SECRET, STRIPE_SECRET
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.signers import github_headers, standard_headers, stripe_event, stripe_headers

pytestmark = pytest.mark.integration


def count(db: Database, table: str) -> int:
    with db.connection() as conn:
        row = conn.execute(f"SELECT count(*) AS n FROM {table}").fetchone()
    assert row is not None
    return int(row["n"])


def test_a_signed_stripe_event_is_stored_with_its_outbox_row(api, db, stripe_source):
    # Given a Stripe-signed event
    body = stripe_event("evt_1")
    # When Stripe posts it
    result = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    # Then it is accepted with a new event id
    assert result.status == 200
    answer = result.json()
    assert answer["duplicate"] is False and answer["id"].startswith("evt_")
    # And the ledger holds the exact bytes, its type and dedupe key, with a pending outbox row
    with db.connection() as conn:
        event = conn.execute("SELECT * FROM events WHERE id = %s", (answer["id"],)).fetchone()
        outbox = conn.execute(
            "SELECT * FROM outbox WHERE event_id = %s", (answer["id"],)
        ).fetchone()
    assert bytes(event["payload"]) == body
    assert event["type"] == "payment_intent.succeeded"
    assert event["dedupe_key"] == "evt_1"
    assert outbox is not None and outbox["fanned_out_at"] is None


def test_a_body_sent_without_base64_is_verified_on_the_same_bytes(api, db, stripe_source):
    body = stripe_event("evt_plain")
    result = api.post(
        stripe_source["path"],
        headers=stripe_headers(STRIPE_SECRET, body),
        body=body,
        base64_body=False,
    )
    assert result.status == 200


def test_a_redelivered_event_answers_the_original_id_and_is_stored_once(api, db, stripe_source):
    body = stripe_event("evt_dup")
    first = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    # When Stripe retries with a fresh timestamp and signature
    again = api.post(
        stripe_source["path"],
        headers=stripe_headers(STRIPE_SECRET, body, timestamp=int(time.time()) + 1),
        body=body,
    )
    assert again.status == 200
    assert again.json() == {"id": first.json()["id"], "duplicate": True}
    assert count(db, "events") == 1
    assert count(db, "outbox") == 1


def test_fifty_identical_requests_at_once_store_one_event(api, db, stripe_source):
    # Given 50 copies of one event arriving at the same moment
    body = stripe_event("evt_storm")
    headers = stripe_headers(STRIPE_SECRET, body)
    start = threading.Barrier(50)

    def send(_: int):
        start.wait()
        return api.post(stripe_source["path"], headers=headers, body=body)

    with ThreadPoolExecutor(max_workers=50) as pool:
        results = list(pool.map(send, range(50)))
    # Then every caller gets 200 and the same id, exactly one is new, one row exists
    assert {r.status for r in results} == {200}
    answers = [r.json() for r in results]
    assert len({a["id"] for a in answers}) == 1
    assert sum(not a["duplicate"] for a in answers) == 1
    assert count(db, "events") == 1
    assert count(db, "outbox") == 1


def test_github_deliveries_dedupe_on_the_delivery_header(api, db, tenant):
    source = operator.add_source(
        db, tenant_id=tenant["id"], scheme="github", secrets=[GITHUB_SECRET]
    )
    body = json.dumps({"action": "opened", "issue": {"number": 1}}).encode()
    delivery = str(uuid.uuid4())
    headers = github_headers(GITHUB_SECRET, body, delivery, event="issues")
    first = api.post(source["path"], headers=headers, body=body)
    second = api.post(source["path"], headers=headers, body=body)
    assert first.status == second.status == 200
    assert second.json()["duplicate"] is True
    with db.connection() as conn:
        event = conn.execute("SELECT type, dedupe_key FROM events").fetchone()
    assert event == {"type": "issues.opened", "dedupe_key": delivery}


def test_standard_webhooks_sender_is_accepted(api, db, tenant):
    source = operator.add_source(
        db, tenant_id=tenant["id"], scheme="standard", secrets=[STANDARD_SECRET]
    )
    body = json.dumps({"type": "invoice.paid", "data": {"id": 7}}).encode()
    result = api.post(
        source["path"], headers=standard_headers(STANDARD_SECRET, body, "msg_1"), body=body
    )
    assert result.status == 200
    with db.connection() as conn:
        assert conn.execute("SELECT type FROM events").fetchone() == {"type": "invoice.paid"}


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("bad signature", 401),
        ("no signature", 401),
        ("stale timestamp", 401),
        ("future timestamp", 401),
        ("invalid json", 400),
        ("wrong content type", 415),
        ("too large", 413),
        ("unknown source", 404),
        ("bad base64", 400),
    ],
)
def test_each_bad_request_gets_its_status_and_stores_nothing(
    api, db, stripe_source, case, expected
):
    # Given a request that is wrong in one way
    body = stripe_event("evt_bad")
    path = stripe_source["path"]
    headers = stripe_headers(STRIPE_SECRET, body)
    raw_event_body = None
    if case == "bad signature":
        headers = stripe_headers("whsec_someone_else", body)
    elif case == "no signature":
        del headers["Stripe-Signature"]
    elif case == "stale timestamp":
        headers = stripe_headers(STRIPE_SECRET, body, timestamp=int(time.time()) - 600)
    elif case == "future timestamp":
        headers = stripe_headers(STRIPE_SECRET, body, timestamp=int(time.time()) + 600)
    elif case == "invalid json":
        body = b'{"id": "evt_bad", '
        headers = stripe_headers(STRIPE_SECRET, body)
    elif case == "wrong content type":
        headers["Content-Type"] = "text/plain"
    elif case == "too large":
        body = stripe_event("evt_big", size=1024 * 1024 + 10)
        headers = stripe_headers(STRIPE_SECRET, body)
    elif case == "unknown source":
        path = "/in/src_doesnotexist"
    elif case == "bad base64":
        raw_event_body = "not*base64"
    # When it arrives
    if raw_event_body is not None:
        from functions.receiver.handler import lambda_handler
        from hookline_dev.local.apigw import LocalContext, build_rest_event

        event = build_rest_event("POST", path, headers, b"x")
        event["body"] = raw_event_body
        status = lambda_handler(event, LocalContext())["statusCode"]
        detail = ""
    else:
        result = api.post(path, headers=headers, body=body)
        status = result.status
        detail = result.json()["detail"]
        assert result.headers["Content-Type"] == "application/problem+json"
    # Then the caller learns what was wrong, and nothing is stored
    assert status == expected
    assert STRIPE_SECRET not in detail
    assert count(db, "events") == 0
    assert count(db, "outbox") == 0


def test_a_disabled_source_is_not_found(api, db, stripe_source):
    from hookline.repositories.sources import set_source_enabled

    with db.connection() as conn:
        set_source_enabled(conn, stripe_source["id"], False)
    body = stripe_event("evt_off")
    result = api.post(stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    assert result.status == 404
    assert count(db, "events") == 0


def test_a_rotated_second_secret_is_accepted(api, db, tenant):
    source = operator.add_source(
        db, tenant_id=tenant["id"], scheme="stripe", secrets=["whsec_new_one", STRIPE_SECRET]
    )
    body = stripe_event("evt_rot")
    result = api.post(source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body)
    assert result.status == 200


def test_other_methods_are_refused(api, stripe_source):
    result = api.request("GET", stripe_source["path"])
    assert result.status == 405
    assert result.headers["Allow"] == "POST"


def test_database_down_answers_503_with_retry_after(monkeypatch, stripe_source):
    # Given a receiver whose database cannot be reached
    from hookline.db import reset_database
    from hookline_dev.localpg import free_port

    monkeypatch.setenv("DATABASE_URL", f"postgresql://postgres@127.0.0.1:{free_port()}/postgres")
    monkeypatch.setenv("HOOKLINE_DB_CONNECT_TIMEOUT", "0.5")
    reset_database()
    from functions.receiver.handler import lambda_handler

    body = stripe_event("evt_down")
    try:
        result = ApiClient(lambda_handler).post(
            stripe_source["path"], headers=stripe_headers(STRIPE_SECRET, body), body=body
        )
    finally:
        reset_database()
    # Then the provider is told to retry later
    assert result.status == 503
    assert int(result.headers["Retry-After"]) > 0


def test_no_secret_or_signature_reaches_the_logs(api, stripe_source, capfd, monkeypatch):
    # Given the receiver's structured log lines captured as CloudWatch would get them (every
    # success line, not a sample)
    monkeypatch.setattr(observability, "success_sample_rate", 1.0)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger(logger.name).addHandler(handler)
    body = stripe_event("evt_logs")
    headers = stripe_headers(STRIPE_SECRET, body)
    try:
        # When one good and one badly signed request arrive
        api.post(stripe_source["path"], headers=headers, body=body)
        api.post(stripe_source["path"], headers=stripe_headers("whsec_wrong", body), body=body)
    finally:
        logging.getLogger(logger.name).removeHandler(handler)
    logs = stream.getvalue() + "".join(capfd.readouterr())
    # Then both are logged, and neither the secret nor a signature appears anywhere
    assert "event accepted" in logs and "request rejected" in logs
    assert STRIPE_SECRET not in logs
    assert headers["Stripe-Signature"].split("v1=")[1] not in logs


@pytest.mark.parametrize(
    ("event_header", "payload_type"),
    [("issues\x00", None), ("issues", "a\x00b"), ("issues", "\ud800")],
)
def test_characters_postgres_refuses_do_not_lose_a_signed_webhook(
    api, db, tenant, event_header, payload_type
):
    # Given a validly signed GitHub delivery whose (unsigned) event header or payload type
    # holds a NUL byte or a lone surrogate, which Postgres text cannot store
    source = operator.add_source(
        db, tenant_id=tenant["id"], scheme="github", secrets=[GITHUB_SECRET]
    )
    doc = {"action": payload_type} if payload_type is not None else {"zen": "x"}
    body = json.dumps(doc).encode()
    headers = github_headers(GITHUB_SECRET, body, str(uuid.uuid4()), event=event_header)
    # When it arrives, Then it is stored (with the text cleaned), not refused with a 5xx
    result = api.post(source["path"], headers=headers, body=body)
    assert result.status == 200
    with db.connection() as conn:
        stored = conn.execute("SELECT type, payload FROM events").fetchone()
    assert "\x00" not in stored["type"] and stored["type"].startswith("issues")
    assert bytes(stored["payload"]) == body
