"""No secret leaks: a run through receiver, fan-out and delivery — successes, bad signatures,
failing and timing-out subscribers, a database outage — with every log line, error body
and metric captured; no signing secret, provider secret, signature or password appears."""

from __future__ import annotations

import io
import json
import logging

import psycopg
import pytest

from hookline import observability
from hookline.config import HooklineConfig
from hookline.db import reset_database
from hookline.observability import logger
from hookline.settings import get_settings
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.signers import stripe_event, stripe_headers

pytestmark = pytest.mark.integration

PROVIDER_SECRET = "whsec_provider_secret_do_not_log_5bd1"
DB_PASSWORD = "db-password-do-not-log-77e3"


def test_a_full_run_leaks_no_secret(pipeline, db, sink, database_url, capfd, monkeypatch):
    # Given every log line captured as CloudWatch would get it, success lines unsampled
    monkeypatch.setattr(observability, "success_sample_rate", 1.0)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logger.registered_formatter)
    logging.getLogger(logger.name).addHandler(handler)
    try:
        # And a database role with a password, used by the receiver
        with psycopg.connect(database_url, autocommit=True) as conn:
            conn.execute(f"CREATE ROLE leaky LOGIN SUPERUSER PASSWORD '{DB_PASSWORD}'")
        url = psycopg.conninfo.make_conninfo(database_url, user="leaky", password=DB_PASSWORD)
        monkeypatch.setenv("DATABASE_URL", url)
        reset_database()
        from functions.receiver.handler import lambda_handler

        api = ApiClient(lambda_handler)
        tenant = operator.add_tenant(db, HooklineConfig(), name="leak", group="standard")["id"]
        source = operator.add_source(
            db, tenant_id=tenant, scheme="stripe", secrets=[PROVIDER_SECRET]
        )
        sink.behave("/fails", statuses=[500, 200])
        sink.behave("/slow", delay=3)
        endpoints = [
            operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=sink.url(p))
            for p in ("/ok", "/fails", "/slow")
        ]
        bodies = []
        # When events arrive well signed, badly signed and duplicated
        responses = []
        for i in range(3):
            body = stripe_event(f"evt_leak_{i}")
            headers = stripe_headers(PROVIDER_SECRET, body)
            bodies.append(headers["Stripe-Signature"])
            responses.append(api.post(source["path"], headers=headers, body=body))
            responses.append(api.post(source["path"], headers=headers, body=body))
            forged = stripe_headers("whsec_forger", body)
            bodies.append(forged["Stripe-Signature"])
            responses.append(api.post(source["path"], headers=forged, body=body))
        # And they are delivered, retried and timed out
        pipeline.run_until(lambda: pipeline.states().get("delivered", 0) >= 6, timeout=40)
        # And the database goes away for a request
        monkeypatch.setenv("DATABASE_URL", url.replace("127.0.0.1", "127.0.0.2"))
        monkeypatch.setenv("HOOKLINE_DB_CONNECT_TIMEOUT", "0.5")
        reset_database()
        body = stripe_event("evt_leak_down")
        responses.append(
            api.post(source["path"], headers=stripe_headers(PROVIDER_SECRET, body), body=body)
        )
    finally:
        logging.getLogger(logger.name).removeHandler(handler)
        reset_database()
    captured = capfd.readouterr()
    everything = stream.getvalue() + captured.out + captured.err
    everything += "".join(r.body.decode() + json.dumps(r.headers) for r in responses)
    with db.connection() as conn:
        everything += json.dumps(
            conn.execute("SELECT * FROM attempts").fetchall()
            + conn.execute("SELECT * FROM deliveries").fetchall(),
            default=str,
        )
    # Then the run really happened (accepted, rejected, retried, 503)
    assert {r.status for r in responses} == {200, 401, 503}
    assert "event accepted" in everything and "request rejected" in everything
    # And no secret, signature or password appears anywhere
    secrets = [PROVIDER_SECRET, DB_PASSWORD, *(e["secret"] for e in endpoints)]
    signatures = [h.split("v1=")[1] for h in bodies]
    signatures += [r.headers["webhook-signature"].split(",", 1)[1] for r in sink.requests()]
    for secret in secrets + signatures:
        assert secret not in everything
