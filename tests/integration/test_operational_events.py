"""Operational events (decision 0068): the monitor that reconcile runs turns failed attempts
and dead deliveries into endpoint.failing / endpoint.recovered / delivery.dead, published
through the ordinary pipeline to the endpoints subscribed to them (verified with the Standard
Webhooks library), with one SES e-mail (moto) and one chat message (a loopback sink) per
state change and a quiet period for a flapping endpoint."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import boto3
import pytest
from moto.core import DEFAULT_ACCOUNT_ID
from moto.ses.models import ses_backends
from standardwebhooks.webhooks import Webhook

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.operational.monitor import OperationalMonitor
from hookline.operational.notify import Notifier
from hookline.operational_options import OperationalOptions
from hookline.repositories import operational as repo
from hookline.runtime import guarded_http_client
from hookline.settings import Settings
from tests.support import operator

pytestmark = pytest.mark.integration

SENDER = "alerts@hookline.example"


def publish(db: Database, tenant_id: str, n: int = 1, type: str = "order.created") -> None:
    with db.connection() as conn, conn.transaction():
        for i in range(n):
            hookline.publish(conn, tenant_id=tenant_id, type=type, payload={"n": i})


def sent_emails() -> list[object]:
    return list(ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages)


@pytest.fixture
def monitor_for(db, moto_endpoint, monkeypatch):
    monkeypatch.setenv("HOOKLINE_ALLOW_PRIVATE_TARGETS", "1")  # the sinks are on loopback
    monkeypatch.setenv("HOOKLINE_ALLOW_HTTP_TARGETS", "1")
    ses = boto3.client(
        "ses", endpoint_url=moto_endpoint, region_name="us-east-1",
        aws_access_key_id="testing", aws_secret_access_key="testing",
    )  # fmt: skip
    ses.verify_email_identity(EmailAddress=SENDER)
    ses_backends[DEFAULT_ACCOUNT_ID]["us-east-1"].sent_messages.clear()

    def make(**options: object) -> OperationalMonitor:
        settings = Settings.from_env()
        settings = replace(
            settings, operational=replace(OperationalOptions(notify_from=SENDER), **options)
        )
        return OperationalMonitor(
            db, settings, Notifier(ses, guarded_http_client(settings), SENDER)
        )

    return make


def payloads(sink, path: str, secret: str) -> list[dict]:
    found = []
    for request in sink.requests(path):
        Webhook(secret).verify(request.body, dict(request.headers))  # raises when not signed
        found.append(json.loads(request.body))
    return found


def test_a_failing_endpoint_is_announced_once_then_its_recovery(pipeline, db, sink, monitor_for):
    # Given a tenant whose orders endpoint keeps answering 500, an endpoint subscribed to the
    # operational events, and e-mail and chat notifications the tenant opted in to
    sink.behave("/orders", statuses=[500])
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    orders = operator.add_endpoint(db, Settings.from_env(), tenant_id=t, url=sink.url("/orders"),
                                   event_types=["order.*"])  # fmt: skip
    ops = operator.add_endpoint(db, Settings.from_env(), tenant_id=t, url=sink.url("/ops"),
                                event_types=["endpoint.*"])  # fmt: skip
    with db.connection() as conn:
        repo.put_tenant_notifications(conn, t, ["oncall@acme.example"], sink.url("/chat"))
    monitor = monitor_for()
    # When five events fail their first attempt and the monitor runs twice
    publish(db, t, 5)
    pipeline.fanout()
    pipeline.run_until(lambda: len(sink.requests("/orders")) >= 5, timeout=30)
    first = monitor.run()
    second = monitor.run()
    pipeline.run_until(lambda: len(sink.requests("/ops")) >= 1, timeout=30)
    # Then the subscribed endpoint got exactly one signed endpoint.failing, with the last error
    [failing] = payloads(sink, "/ops", ops["secret"])
    assert first["endpoint_failing"] == 1 and second["endpoint_failing"] == 0
    assert failing["endpoint_id"] == orders["id"] and failing["state"] == "failing"
    assert failing["reason"] == "5 consecutive failed attempts"
    assert failing["last_error"]["status"] == 500
    # And one e-mail and one chat message say so
    [email] = sent_emails()
    assert "is failing" in email.subject and email.destinations["ToAddresses"] == [
        "oncall@acme.example"
    ]
    [chat] = sink.requests("/chat")
    assert "is failing" in json.loads(chat.body)["text"]
    # When the endpoint answers 2xx again
    sink.behave("/orders", statuses=[200])
    publish(db, t, 1)
    pipeline.run_until(lambda: pipeline.states().get("delivered", 0) >= 2, timeout=30)
    recovered = monitor.run()
    pipeline.run_until(lambda: len(sink.requests("/ops")) >= 2, timeout=30)
    # Then endpoint.recovered follows, once, with one more e-mail and chat message
    assert recovered["endpoint_recovered"] == 1
    assert [p.get("state") for p in payloads(sink, "/ops", ops["secret"])] == [
        "failing",
        "healthy",
    ]
    assert len(sent_emails()) == 2 and len(sink.requests("/chat")) == 2
    assert monitor.run()["endpoint_recovered"] == 0


def test_an_error_rate_over_the_window_is_failing(pipeline, db, sink, monitor_for):
    # Given an endpoint that fails every other attempt (never 5 in a row)
    sink.behave("/half", statuses=[500, 200] * 20)
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    operator.add_endpoint(db, Settings.from_env(), tenant_id=t, url=sink.url("/half"))
    publish(db, t, 10)
    pipeline.run_until(lambda: len(sink.requests("/half")) >= 15, timeout=60)
    # When the monitor runs with the default threshold of 50 % over 15 minutes
    result = monitor_for().run()
    # Then the endpoint is failing for its error rate
    assert result["endpoint_failing"] == 1
    with db.connection() as conn:
        [row] = conn.execute("SELECT state FROM endpoint_health").fetchall()
    assert row["state"] == "failing"


def test_a_flapping_endpoint_sends_one_message_per_quiet_period(db, sink, monitor_for):
    # Given an endpoint's attempts that fail five times, succeed, fail five times, succeed
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    ep = operator.add_endpoint(db, Settings.from_env(), tenant_id=t, url=sink.url("/flap"))
    with db.connection() as conn:
        repo.put_tenant_notifications(conn, t, [], sink.url("/chat"))
    monitor = monitor_for()
    start = datetime.now(UTC)
    publish(db, t, 1)
    from hookline.fanout import FanoutOptions
    from hookline.repositories import deliveries as delivery_repo

    with db.connection() as conn:
        delivery_repo.fan_out_batch(conn, limit=10, deadline=FanoutOptions().deadline)
        [delivery] = conn.execute("SELECT id FROM deliveries").fetchall()
    minute = 0

    def attempts(statuses: list[int]) -> datetime:
        nonlocal minute
        with db.connection() as conn:
            for status in statuses:
                minute += 1
                conn.execute(
                    "INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code)"
                    " VALUES (%s, %s, 10, %s)",
                    (delivery["id"], start + timedelta(seconds=minute), status),
                )
        return start + timedelta(seconds=minute, milliseconds=500)

    # When the monitor runs after each half of two flaps
    changes = []
    for statuses in ([500] * 5, [200], [500] * 5, [200]):
        result = monitor.run(attempts(statuses))
        changes.append((result["endpoint_failing"], result["endpoint_recovered"]))
    # Then each state change is an event, but only the first failure and its recovery
    # are messages: the second failure falls in the quiet period
    assert changes == [(1, 0), (0, 1), (1, 0), (0, 1)]
    texts = [json.loads(r.body)["text"] for r in sink.requests("/chat")]
    assert len(texts) == 2 and "is failing" in texts[0] and "recovered" in texts[1]
    assert ep["id"] in texts[0]


def test_dead_deliveries_are_announced_but_never_those_of_operational_events(db, sink, monitor_for):
    # Given a tenant subscribed to delivery.dead, a dead delivery of an order event and a
    # dead delivery of an operational event
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    operator.add_endpoint(db, Settings.from_env(), tenant_id=t, url=sink.url("/any"))
    publish(db, t, 1, "order.created")
    publish(db, t, 1, "endpoint.failing")
    from hookline.fanout import FanoutOptions
    from hookline.repositories import deliveries as delivery_repo

    with db.connection() as conn:
        delivery_repo.fan_out_batch(conn, limit=10, deadline=FanoutOptions().deadline)
        conn.execute(
            "UPDATE deliveries SET state = 'dead', attempt_count = 10, last_status = 500,"
            " last_error = 'retries exhausted', updated_at = now()"
        )
    # When the monitor runs (twice)
    first = monitor_for().run()
    second = monitor_for().run()
    # Then one delivery.dead was published, for the order event, and the operational event's
    # own death was only counted
    assert first["delivery_dead"] == 1 and first["operational_not_announced"] == 1
    assert second["delivery_dead"] == 0
    with db.connection() as conn:
        rows = conn.execute("SELECT payload FROM events WHERE type = 'delivery.dead'").fetchall()
    [payload] = [json.loads(bytes(r["payload"])) for r in rows]
    assert payload["event_type"] == "order.created" and payload["attempts"] == 10
