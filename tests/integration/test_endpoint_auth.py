"""Endpoints that authenticate (decision 0067): OAuth2 client credentials against a real token
server, mutual TLS against a real HTTPS server that requires a client certificate from a test
CA, and Ed25519 (`v1a`) signatures verified with PyNaCl."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.management import endpoint_service
from hookline.management.endpoint_models import Endpoint
from hookline.runtime import build_reconciler
from hookline.settings import get_settings
from tests.support import operator
from tests.support.endpoint_auth import CLIENT_ID, CLIENT_SECRET, TestCA, serve_mtls, token_server
from tests.support.signers import verify_ed25519
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration


def oauth2(url: str) -> dict[str, str]:
    return {"type": "oauth2_client_credentials", "token_url": url, "client_id": CLIENT_ID,
            "client_secret": CLIENT_SECRET, "scope": "webhooks:write"}  # fmt: skip


def publish(db, tenant: str, count: int = 1) -> None:
    with db.connection() as conn, conn.transaction():
        for n in range(count):
            hookline.publish(conn, tenant_id=tenant, type="order.created", payload={"n": n})


def tenant_of(db) -> str:
    return operator.add_tenant(db, HooklineConfig(), name="bank", group="standard")["id"]


def test_one_token_serves_many_deliveries_as_a_bearer_header(pipeline, db, sink):
    # Given an endpoint authenticating with OAuth2 client credentials at a real token server
    tenant = tenant_of(db)
    with token_server(expires_in=3600) as tokens:
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=sink.url("/bank"), auth=oauth2(tokens.url)
        )
        # When eight events are delivered
        publish(db, tenant, 8)
        pipeline.run_until(lambda: pipeline.states() == {"delivered": 8})
    # Then the token server was asked once (client credentials grant, scope) for the token's
    # whole lifetime, and every delivery carried it
    assert tokens.requests == [{"grant_type": "client_credentials", "scope": "webhooks:write"}]
    assert {r.headers["authorization"] for r in sink.requests("/bank")} == {"Bearer tok-1"}


def test_a_401_from_the_endpoint_fetches_a_new_token_once(pipeline, db, sink):
    # Given an OAuth2 endpoint that refuses the first token it sees, then accepts
    tenant = tenant_of(db)
    sink.behave("/revoked", statuses=[401, 200])
    with token_server() as tokens:
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=sink.url("/revoked"),
            auth=oauth2(tokens.url),
        )  # fmt: skip
        # When an event is delivered
        publish(db, tenant)
        pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    # Then one new token was fetched and sent within the same attempt, which succeeded
    assert len(tokens.requests) == 2
    headers = [r.headers["authorization"] for r in sink.requests("/revoked")]
    assert headers == ["Bearer tok-1", "Bearer tok-2"]
    delivery = pipeline.delivery()
    assert [a["status_code"] for a in pipeline.attempts(delivery["id"])] == [200]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("fail", "oauth2 token: HTTP 500"), ("garbage", "oauth2 token: answer is not JSON")],
)
def test_a_token_endpoint_that_fails_is_a_failed_attempt_with_the_reason(
    make_pipeline, db, sink, mode, reason
):
    # Given an endpoint whose token server fails, or answers something that is not a token
    pipeline = make_pipeline(retry_schedule_seconds=[0, 3600])
    tenant = tenant_of(db)
    with token_server(mode=mode) as tokens:
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=sink.url("/t"), auth=oauth2(tokens.url)
        )
        # When an event is delivered
        publish(db, tenant)
        pipeline.run_until(lambda: [d["attempt_count"] for d in deliveries(db)] == [1])
    # Then the endpoint was never called, and the attempt names the token endpoint's failure
    assert sink.requests("/t") == []
    delivery = pipeline.delivery()
    assert [a["error_class"] for a in pipeline.attempts(delivery["id"])] == [reason]
    assert delivery["state"] == "pending"  # retried later like any failed attempt


def test_mutual_tls_delivers_with_the_endpoint_certificate_and_names_the_failure_without(
    make_pipeline, db, tmp_path
):
    # Given an HTTPS endpoint whose server certificate and required client certificates come
    # from a private CA
    pipeline = make_pipeline(retry_schedule_seconds=[0, 3600])
    ca = TestCA()
    client = ca.issue("hookline-client", server=False, days=90)
    sink = serve_mtls(Sink(), ca, tmp_path)
    try:
        tenant = tenant_of(db)
        with_cert = operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=sink.url("/mtls"),
            tls={"client_certificate": client.certificate, "client_key": client.key,
                 "ca_bundle": ca.pem},
        )  # fmt: skip
        without = operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=sink.url("/anonymous"),
            tls={"ca_bundle": ca.pem},
        )  # fmt: skip
        # When an event goes to both
        publish(db, tenant)
        pipeline.run_until(lambda: {d["attempt_count"] for d in deliveries(db)} == {1}, timeout=30)
    finally:
        sink.stop()
    # Then the endpoint with the certificate received it; the other's attempt names the TLS
    # failure (the server's alert that a certificate was required)
    assert len(sink.requests("/mtls")) == 1 and sink.requests("/anonymous") == []
    done = {d["endpoint_id"]: d for d in deliveries(db)}
    assert done[with_cert["id"]]["state"] == "delivered"
    failed = pipeline.attempts(done[without["id"]]["id"])
    assert failed[0]["error_class"].startswith("tls: "), failed
    assert "CERTIFICATE" in failed[0]["error_class"]
    # And the endpoint shows its certificate's expiry, never its key
    assert Endpoint.model_validate(with_cert).model_dump(mode="json")["tls"] == {
        "has_client_certificate": True, "has_ca_bundle": True,
        "certificate_subject": "CN=hookline-client",
        "certificate_expires_at": client.not_after.isoformat().replace("+00:00", "Z"),
    }  # fmt: skip


def deliveries(db) -> list[dict]:
    with db.connection() as conn:
        return conn.execute("SELECT * FROM deliveries").fetchall()


def test_ed25519_signatures_verify_with_the_public_key_also_across_a_rotation(pipeline, db, sink):
    # Given an endpoint signing with Ed25519
    settings = get_settings()
    tenant = tenant_of(db)
    endpoint = operator.add_endpoint(
        db, settings, tenant_id=tenant, url=sink.url("/ed"), signing="ed25519"
    )
    first = endpoint["public_keys"]
    # When an event is delivered, then the key pair is rotated and another is delivered
    publish(db, tenant)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    rotated = endpoint_service.rotate_endpoint_secret(
        db, settings, operator.OPERATOR, endpoint["id"]
    )
    publish(db, tenant)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    # Then no private key was ever shown, only `whpk_` public keys, and PyNaCl verifies the
    # first delivery with the first key and the second with both keys (the overlap)
    assert endpoint["secret"] is None and rotated["secret"] is None
    assert len(first) == 1 and first[0].startswith("whpk_")
    before, after = sink.requests("/ed")
    assert before.headers["webhook-signature"].startswith("v1a,")
    assert verify_ed25519(first, before.headers, before.body) == first
    both = [rotated["public_key"], first[0]]
    assert verify_ed25519(both, after.headers, after.body) == both
    shown = endpoint_service.get_endpoint(db, operator.OPERATOR, endpoint["id"])
    assert shown["public_keys"] == both


def test_a_certificate_near_its_expiry_is_announced_once_as_an_operational_event(
    pipeline, db, sink
):
    # Given an endpoint whose client certificate expires in 10 days, another's in 60
    settings = get_settings()
    ca = TestCA()
    tenant = tenant_of(db)
    soon, later = ca.issue("soon", server=False, days=10), ca.issue("later", server=False)
    for cert in (soon, later):
        operator.add_endpoint(
            db, settings, tenant_id=tenant, url=sink.url("/x"),
            tls={"client_certificate": cert.certificate, "client_key": cert.key},
        )  # fmt: skip
    # When the reconciler runs, twice
    reconciler = build_reconciler(settings, db)
    runs = [reconciler.run(trigger="test"), reconciler.run(trigger="test")]
    now = datetime.now(UTC)
    # Then one `endpoint.certificate_expiring` event was published, for the 10-day one only
    assert [r.repairs["certificates_expiring"] for r in runs] == [1, 0]
    with db.connection() as conn:
        events = conn.execute(
            "SELECT convert_from(payload, 'UTF8')::jsonb AS p FROM events WHERE type = %s",
            ("endpoint.certificate_expiring",),
        ).fetchall()
    assert len(events) == 1
    assert events[0]["p"]["certificate_subject"] == "CN=soon"
    assert events[0]["p"]["days_left"] in (9, 10)
    assert datetime.fromisoformat(events[0]["p"]["certificate_expires_at"]) - now < timedelta(11)
    # And the first run's fan-out sent it to the tenant's endpoints, like any operational event
    pipeline.run_until(lambda: len(sink.requests("/x")) == 2)
    assert {r.body.count(b"CN=soon") for r in sink.requests("/x")} == {1}
