"""Replay end to end: the replay handler against real Postgres and moto SQS, with the real
fan-out and deliver handlers and real HTTP subscribers checking every signature."""

from __future__ import annotations

import itertools
import json
import time
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.settings import get_settings
from hookline_dev.cli import main
from hookline_dev.local.apigw import LocalContext
from tests.support import operator
from tests.support.pipeline import Pipeline
from tests.support.signers import verify_standard

pytestmark = pytest.mark.integration

OPERATOR = {"requested_by": "ana@example.com", "reason": "the endpoint was down"}


def replay(**doc: Any) -> dict[str, Any]:
    """Invoke the replay handler as the console would."""
    from functions.replay.handler import lambda_handler

    return lambda_handler(doc, LocalContext(function_name="replay"))


def tenant(db: Database, name: str = "acme") -> str:
    return operator.add_tenant(db, HooklineConfig(), name=name, group="standard")["id"]


def endpoint(db: Database, tenant_id: str, url: str, **options: Any) -> dict[str, Any]:
    return operator.add_endpoint(db, get_settings(), tenant_id=tenant_id, url=url, **options)


def publish(db: Database, tenant_id: str, type: str = "order.created", n: int = 1) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type=type, payload={"n": n}).id


def db_now(db: Database) -> str:
    with db.connection() as conn:
        return conn.execute("SELECT now() AS t").fetchone()["t"].isoformat()


def rows(db: Database, sql: str, *params: Any) -> list[dict[str, Any]]:
    with db.connection() as conn:
        return [dict(r) for r in conn.execute(sql, params).fetchall()]


def audits(db: Database) -> list[dict[str, Any]]:
    return rows(db, "SELECT * FROM audit_log WHERE action = 'replay' ORDER BY id")


def drain(pipeline: Pipeline, done, timeout: float = 20) -> None:
    pipeline.run_until(done, timeout=timeout)


def test_a_failed_delivery_replayed_by_id_arrives_with_the_same_webhook_id(pipeline, db, sink):
    # Given two deliveries that failed (the subscriber answered 400), then the subscriber fixed
    sink.behave("/orders", statuses=[400])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/orders"))
    publish(db, t, n=1)
    publish(db, t, n=2)
    drain(pipeline, lambda: pipeline.states() == {"failed": 2})
    first = {r.headers["webhook-id"]: r for r in sink.requests("/orders")}
    sink.behave("/orders", statuses=[200])
    chosen, other = sorted(first)
    # When an operator replays one of them by id
    result = replay(delivery_ids=[chosen], **OPERATOR)
    drain(pipeline, lambda: pipeline.states() == {"failed": 1, "delivered": 1})
    # Then it was enqueued, and arrived again under the same webhook-id, validly signed
    assert result["ok"] and result["selected"] == 1 and result["enqueued"] == 1
    assert result["sample_ids"] == [chosen] and result["skipped"] == {}
    again = [r for r in sink.requests("/orders") if r not in first.values()]
    assert [r.headers["webhook-id"] for r in again] == [chosen]
    assert again[0].body == first[chosen].body
    assert verify_standard([ep["secret"]], again[0].headers, again[0].body)
    # And the delivery is delivered on a fresh run; its attempts keep the whole history
    delivery = pipeline.delivery(id=chosen)
    assert delivery["state"] == "delivered" and delivery["attempt_count"] == 1
    assert [a["status_code"] for a in pipeline.attempts(chosen)] == [400, 200]
    assert pipeline.delivery(id=other)["state"] == "failed"
    # And the replay is in the audit log: who, why, what was asked, what it did
    [entry] = audits(db)
    assert entry["actor"] == "ana@example.com"
    assert (entry["object_type"], entry["object_id"]) == ("delivery", chosen)
    assert entry["params"]["reason"] == "the endpoint was down"
    assert entry["params"]["request"]["delivery_ids"] == [chosen]
    assert entry["params"]["result"]["enqueued"] == 1


def test_endpoint_and_window_replay_the_failed_and_dead_of_that_endpoint_only(pipeline, db, sink):
    # Given an endpoint whose deliveries failed before and inside the window, and a healthy one
    sink.behave("/down", statuses=[400])
    t = tenant(db)
    down = endpoint(db, t, sink.url("/down"))
    endpoint(db, t, sink.url("/up"))
    publish(db, t, n=0)
    drain(pipeline, lambda: pipeline.states() == {"failed": 1, "delivered": 1})
    since = db_now(db)
    failed_event = publish(db, t, n=1)
    drain(pipeline, lambda: pipeline.states() == {"failed": 2, "delivered": 2})
    # And one that died: its deadline passed before it could be attempted
    dead_event = publish(db, t, n=2)
    pipeline.fanout()
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries SET deadline_at = now() - interval '1 second' "
            "WHERE event_id = %s AND endpoint_id = %s",
            (dead_event, down["id"]),
        )
    drain(pipeline, lambda: pipeline.states() == {"failed": 2, "dead": 1, "delivered": 3})
    sink.behave("/down", statuses=[200])
    # When the endpoint's window is replayed (states default to failed and dead)
    result = replay(endpoint_id=down["id"], since=since, **OPERATOR)
    drain(pipeline, lambda: pipeline.states() == {"failed": 1, "delivered": 5})
    # Then exactly the failed and the dead delivery of the window went, to that endpoint only
    assert (result["selected"], result["enqueued"]) == (2, 2)
    resent = [json.loads(r.body)["n"] for r in sink.requests("/down")[2:]]
    assert sorted(resent) == [1, 2]
    assert len(sink.requests("/up")) == 3
    delivered = "SELECT event_id FROM deliveries WHERE endpoint_id = %s AND state = 'delivered'"
    assert {d["event_id"] for d in rows(db, delivered, down["id"])} == {failed_event, dead_event}
    # And asking for delivered ones selects those instead (a dry run, to count)
    counted = replay(
        endpoint_id=down["id"], since=since, states=["delivered"], dry_run=True, **OPERATOR
    )
    assert counted["would_enqueue"] == 2


def test_event_ids_replay_every_delivery_of_those_events(pipeline, db, sink):
    t = tenant(db)
    a = endpoint(db, t, sink.url("/a"))
    b = endpoint(db, t, sink.url("/b"))
    wanted = publish(db, t, n=1)
    publish(db, t, n=2)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 4})
    # When the event is replayed, delivered deliveries included
    result = replay(event_ids=[wanted, "evt_missing"], **OPERATOR)
    drain(pipeline, lambda: len(sink.requests()) == 6)
    # Then both of its deliveries went again, under their own webhook-ids, validly signed
    assert (result["selected"], result["enqueued"]) == (2, 2)
    assert any("evt_missing" in note for note in result["notes"])
    for path, ep in (("/a", a), ("/b", b)):
        last = sink.requests(path)[-1]
        assert json.loads(last.body) == {"n": 1}
        webhook_id = pipeline.delivery(event_id=wanted, endpoint_id=ep["id"])["id"]
        assert last.headers["webhook-id"] == webhook_id
        assert verify_standard([ep["secret"]], last.headers, last.body)


def test_tenant_event_type_and_window_select_only_that_tenants_matching_events(pipeline, db, sink):
    sink.behave("/x", statuses=[400])
    sink.behave("/y", statuses=[400])
    acme, other = tenant(db, "acme"), tenant(db, "other")
    endpoint(db, acme, sink.url("/x"))
    endpoint(db, other, sink.url("/y"))
    for t in (acme, other):
        publish(db, t, "invoice.paid", 1)
        publish(db, t, "invoice.voided", 2)
        publish(db, t, "order.created", 3)
    drain(pipeline, lambda: pipeline.states() == {"failed": 6})
    sink.behave("/x", statuses=[200])
    result = replay(
        tenant_id=acme, event_type="invoice.*", since="1h", max_per_second=50, **OPERATOR
    )
    drain(pipeline, lambda: pipeline.states() == {"failed": 4, "delivered": 2})
    assert (result["selected"], result["enqueued"]) == (2, 2)
    assert sorted(json.loads(r.body)["n"] for r in sink.requests("/x")[3:]) == [1, 2]
    assert len(sink.requests("/y")) == 3
    [entry] = audits(db)
    assert (entry["object_type"], entry["object_id"]) == ("tenant", acme)
    assert entry["params"]["request"]["event_type"] == "invoice.*"


def test_in_flight_disabled_and_unknown_deliveries_are_skipped_with_the_reason(pipeline, db, sink):
    t = tenant(db)
    live = endpoint(db, t, sink.url("/live"))
    off = endpoint(db, t, sink.url("/off"))
    publish(db, t)
    pipeline.fanout()  # both deliveries queued, with a live lease, messages on the queue
    in_flight = pipeline.delivery(endpoint_id=live["id"])
    admin_off = pipeline.delivery(endpoint_id=off["id"])
    with db.connection() as conn:
        hookline.repositories.endpoints.set_endpoint_enabled(
            conn, off["id"], enabled=False, reason="test"
        )
        conn.execute(
            "UPDATE deliveries SET state = 'failed', lease_expires_at = NULL WHERE id = %s",
            (admin_off["id"],),
        )
    result = replay(delivery_ids=[in_flight["id"], admin_off["id"], "dlv_nope"], **OPERATOR)
    assert result["enqueued"] == 0 and result["selected"] == 3
    assert result["skipped"] == {"in_flight": 1, "endpoint_disabled": 1, "not_found": 1}
    assert pipeline.delivery(id=in_flight["id"])["enqueue_seq"] == in_flight["enqueue_seq"]


def test_a_dry_run_changes_nothing_but_is_audited(pipeline, db, sink):
    sink.behave("/down", statuses=[400])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/down"))
    for i in range(3):
        publish(db, t, n=i)
    drain(pipeline, lambda: pipeline.states() == {"failed": 3})
    before = rows(db, "SELECT * FROM deliveries ORDER BY id")
    depth = pipeline.queue_depth(pipeline.queues["standard"].url)
    # When each kind of selector is dry-run
    by_endpoint = replay(endpoint_id=ep["id"], since="1h", dry_run=True, **OPERATOR)
    refanout = replay(since="1h", refanout=True, dry_run=True, **OPERATOR)
    redrive = replay(redrive_dlq="standard", dry_run=True, **OPERATOR)
    # Then they say what they would do, and nothing changed: rows, queue, DLQ
    assert by_endpoint["would_enqueue"] == 3 and by_endpoint["enqueued"] == 0
    assert sorted(by_endpoint["sample_ids"]) == sorted(d["id"] for d in before)
    assert refanout["would_enqueue"] == 0 and refanout["skipped"] == {"delivery_exists": 3}
    assert redrive["would_enqueue"] == 0
    assert rows(db, "SELECT * FROM deliveries ORDER BY id") == before
    assert pipeline.queue_depth(pipeline.queues["standard"].url) == depth == 0
    # And each was audited as a dry run
    entries = audits(db)
    assert len(entries) == 3
    assert all(e["params"]["request"]["dry_run"] is True for e in entries)
    assert entries[0]["params"]["result"]["would_enqueue"] == 3


def test_max_per_second_paces_the_enqueues(pipeline, db, sink):
    sink.behave("/down", statuses=[400])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/down"))
    for i in range(6):
        publish(db, t, n=i)
    drain(pipeline, lambda: pipeline.states() == {"failed": 6})
    # When 6 deliveries are replayed at 3 per second
    started = time.monotonic()
    result = replay(endpoint_id=ep["id"], since="1h", max_per_second=3, **OPERATOR)
    elapsed = time.monotonic() - started
    # Then the enqueues were spread over at least 5/3 s (the first goes at once)
    assert result["enqueued"] == 6
    assert 1.6 <= elapsed < 5, elapsed
    messages = []
    url = pipeline.queues["standard"].url
    while len(messages) < 6:
        messages += pipeline.sqs.receive_message(
            QueueUrl=url, MaxNumberOfMessages=10, AttributeNames=["SentTimestamp"]
        ).get("Messages", [])
    sent = sorted(int(m["Attributes"]["SentTimestamp"]) for m in messages)
    assert sent[-1] - sent[0] >= 1600
    assert all(b - a >= 250 for a, b in itertools.pairwise(sent)), sent


def test_refanout_recreates_exactly_the_lost_deliveries(pipeline, db, sink):
    # Given 4 events delivered to two endpoints (8 deliveries)
    t = tenant(db)
    a = endpoint(db, t, sink.url("/a"))
    b = endpoint(db, t, sink.url("/b"))
    since = db_now(db)
    events = [publish(db, t, n=i) for i in range(4)]
    drain(pipeline, lambda: pipeline.states() == {"delivered": 8})
    kept = "SELECT id FROM deliveries WHERE event_id = %s OR (event_id = %s AND endpoint_id = %s)"
    survivors = {d["id"] for d in rows(db, kept, events[0], events[1], a["id"])}
    # And an endpoint added since, which never had these events
    late = endpoint(db, t, sink.url("/late"))
    # When the deliveries of a window are lost: all of events 2 and 3, and event 1's to b
    with db.connection() as conn, conn.transaction():
        lost = "SELECT id FROM deliveries WHERE NOT (id = ANY(%s))"
        conn.execute(f"DELETE FROM attempts WHERE delivery_id IN ({lost})", (list(survivors),))
        conn.execute(f"DELETE FROM deliveries WHERE id IN ({lost})", (list(survivors),))
    assert len(rows(db, "SELECT id FROM deliveries")) == 3
    before = len(sink.requests())
    # And the window is re-fanned out from the ledger
    result = replay(since=since, refanout=True, **OPERATOR)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 8})
    # Then exactly the 5 lost ones were re-created and delivered; the survivors untouched
    assert result["events"] == 4
    assert (result["selected"], result["created"], result["enqueued"]) == (8, 5, 5)
    assert result["skipped"] == {"delivery_exists": 3}
    recreated = sink.requests()[before:]
    assert sorted((r.path, json.loads(r.body)["n"]) for r in recreated) == [
        ("/a", 2),
        ("/a", 3),
        ("/b", 1),
        ("/b", 2),
        ("/b", 3),
    ]
    pairs = rows(db, "SELECT event_id, endpoint_id, count(*) AS n FROM deliveries GROUP BY 1, 2")
    assert len(pairs) == 8 and all(p["n"] == 1 for p in pairs)
    assert {d["id"] for d in rows(db, "SELECT id FROM deliveries")} >= survivors
    assert sink.requests("/late") == [] and late["id"]
    for r in recreated:
        ep = a if r.path == "/a" else b
        assert verify_standard([ep["secret"]], r.headers, r.body)
    # And running it again creates nothing more
    again = replay(since=since, refanout=True, **OPERATOR)
    assert (again["created"], again["enqueued"]) == (0, 0)


def test_refanout_to_one_endpoint_sends_it_history_matching_its_filters(pipeline, db, sink):
    t = tenant(db)
    endpoint(db, t, sink.url("/old"))
    for i, type in enumerate(("order.created", "order.paid", "invoice.paid")):
        publish(db, t, type, i)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 3})
    new = endpoint(db, t, sink.url("/new"), event_types=["order.*"])
    result = replay(endpoint_id=new["id"], since="1h", refanout=True, max_per_second=20, **OPERATOR)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 5})
    assert (result["events"], result["created"], result["enqueued"]) == (2, 2, 2)
    assert sorted(json.loads(r.body)["n"] for r in sink.requests("/new")) == [0, 1]
    assert len(sink.requests("/old")) == 3


def test_refanout_leaves_a_test_event_with_its_one_endpoint(pipeline, db, sink):
    from hookline.management import endpoint_service

    # Given two endpoints taking every event, a test event sent to one and a published event
    t = tenant(db)
    chosen = endpoint(db, t, sink.url("/chosen"))
    endpoint(db, t, sink.url("/other"))
    since = db_now(db)
    time.sleep(0.01)  # the events arrive after both endpoints
    sent = endpoint_service.send_test_event(
        db, get_settings(), operator.OPERATOR, chosen["id"], type="test.ping", payload=None
    )
    publish(db, t)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 3})
    # And an endpoint added since, which is sent the window's history
    late = endpoint(db, t, sink.url("/late"))
    # When the window is re-fanned out, and the late endpoint is sent its history
    window = replay(since=since, refanout=True, **OPERATOR)
    history = replay(endpoint_id=late["id"], since=since, refanout=True, **OPERATOR)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 4})
    # Then only the published event was considered: the test event went to no other endpoint
    assert (window["events"], window["created"]) == (1, 0)
    assert (history["events"], history["created"]) == (1, 1)
    tested = rows(db, "SELECT endpoint_id FROM deliveries WHERE event_id = %s", sent["event_id"])
    assert tested == [{"endpoint_id": chosen["id"]}]
    assert len(sink.requests("/other")) == 1 and len(sink.requests("/late")) == 1


def test_redrive_moves_dlq_messages_back_and_they_are_delivered(pipeline, db, sink, sqs):
    # Given a delivery whose message ended in the DLQ, next to a message that is not ours
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/r"))
    publish(db, t)
    pipeline.fanout()
    queues = pipeline.queues["standard"]
    [message] = sqs.receive_message(QueueUrl=queues.url, MaxNumberOfMessages=10)["Messages"]
    sqs.send_message(QueueUrl=queues.dlq_url, MessageBody=message["Body"])
    sqs.delete_message(QueueUrl=queues.url, ReceiptHandle=message["ReceiptHandle"])
    sqs.send_message(QueueUrl=queues.dlq_url, MessageBody="not a delivery")
    # When the group's DLQ is redriven
    result = replay(redrive_dlq="standard", **OPERATOR)
    # Then both went back to the queue (the deliver function decides about each)
    assert (result["selected"], result["enqueued"]) == (2, 2)
    delivery_id = pipeline.delivery(endpoint_id=ep["id"])["id"]
    assert delivery_id in result["sample_ids"]
    assert pipeline.queue_depth(queues.dlq_url) == 0
    assert pipeline.queue_depth(queues.url) == 2
    # And the delivery is delivered
    drain(pipeline, lambda: pipeline.states() == {"delivered": 1})
    [request] = sink.requests("/r")
    assert request.headers["webhook-id"] == delivery_id
    assert verify_standard([ep["secret"]], request.headers, request.body)
    [entry] = audits(db)
    assert (entry["object_type"], entry["object_id"]) == ("dlq", "standard")


def test_a_replay_without_requested_by_or_reason_is_refused(pipeline, db, sink):
    t = tenant(db)
    endpoint(db, t, sink.url("/a"))
    publish(db, t)
    drain(pipeline, lambda: pipeline.states() == {"delivered": 1})
    delivery_id = rows(db, "SELECT id FROM deliveries")[0]["id"]
    blank_reason = {"delivery_ids": [delivery_id], "requested_by": "ana", "reason": "  "}
    for doc in ({"delivery_ids": [delivery_id]}, blank_reason):
        answer = replay(**doc)
        assert answer["ok"] is False and answer["error"]["type"] == "bad_request"
        assert "reason" in answer["error"]["message"] and "refused" in answer["error"]["message"]
    assert audits(db) == []
    assert len(sink.requests("/a")) == 1


def test_errors_come_back_as_clear_json(pipeline, db):
    unknown = replay(endpoint_id="ep_nope", since="1h", **OPERATOR)
    assert unknown == {
        "ok": False,
        "error": {"type": "not_found", "message": "no endpoint ep_nope"},
    }
    [entry] = audits(db)  # a request that got as far as the database is audited, with its error
    assert entry["params"]["result"]["error"] == "no endpoint ep_nope"
    mixed = replay(delivery_ids=["dlv_1"], event_ids=["evt_1"], **OPERATOR)
    assert mixed["error"]["type"] == "bad_request"
    assert "cannot be combined with event_ids" in mixed["error"]["message"]
    assert "stackTrace" not in json.dumps(mixed)
    assert len(audits(db)) == 1  # a refused request runs nothing, so there is nothing to audit


def test_the_cli_replays_with_the_same_fields_as_the_console_event(pipeline, db, sink, capsys):
    sink.behave("/c", statuses=[400])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/c"))
    publish(db, t)
    drain(pipeline, lambda: pipeline.states() == {"failed": 1})
    sink.behave("/c", statuses=[200])
    flags = [
        "--endpoint",
        ep["id"],
        "--since",
        "1h",
        "--state",
        "failed,dead",
        "--requested-by",
        "ana",
        "--reason",
        "retry after fix",
        "--json",
    ]
    capsys.readouterr()
    assert main(["replay", *flags, "--print-event"]) == 0
    event = json.loads(capsys.readouterr().out)
    assert event == {
        "endpoint_id": ep["id"],
        "since": "1h",
        "states": ["failed", "dead"],
        "requested_by": "ana",
        "reason": "retry after fix",
    }
    assert main(["replay", *flags]) == 0
    replay = json.loads(capsys.readouterr().out)
    assert replay["state"] == "succeeded" and replay["result"]["enqueued"] == 1
    drain(pipeline, lambda: pipeline.states() == {"delivered": 1})
    assert main(["replay", "--endpoint", ep["id"], "--since", "1h", "--json"]) == 1
    assert "reason: required" in capsys.readouterr().err
