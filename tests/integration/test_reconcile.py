"""Reconcile end to end: each repair provoked for real (a queue message deleted unprocessed,
a worker killed mid-lease, an outbox row the fan-out missed, a deadline passed, a delivery
lost), repaired by the reconcile handler and delivered by the real deliver handler; DLQ depth
and the report; provider catch-up against a fake Stripe and GitHub on loopback."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.management import endpoint_service
from hookline.repositories import deliveries as delivery_repo
from hookline.repositories import reconcile as reconcile_repo
from hookline.runtime import build_reconciler, reset_runtime
from hookline.settings import get_settings
from hookline_dev.cli import main
from hookline_dev.local.apigw import LocalContext
from tests.support import operator
from tests.support.fake_providers import ProviderServer, running_providers
from tests.support.lambdas import ApiClient
from tests.support.pipeline import Pipeline
from tests.support.signers import github_headers, stripe_headers

pytestmark = pytest.mark.integration


@pytest.fixture
def pipeline(make_pipeline):
    # A failed attempt waits an hour for its retry: a due-time row in Postgres, not an SQS delay.
    return make_pipeline(retry_schedule_seconds=[0, 3600])


STRIPE_SECRET = "whsec_reconcile_test"
GITHUB_SECRET = "gh-reconcile-secret"


@pytest.fixture
def providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[ProviderServer]:
    """Fake Stripe and GitHub on loopback, configured as the deployment's provider bases (no
    source names its own: that is an operator's override, docs/decisions/0026)."""
    with running_providers() as server:
        bases = f"stripe={server.url},github={server.url}"
        monkeypatch.setenv("HOOKLINE_CATCHUP_API_BASES", bases)
        monkeypatch.setenv("HOOKLINE_CATCHUP_ALLOW_PRIVATE", "1")
        get_settings.cache_clear()
        reset_runtime()
        yield server
        get_settings.cache_clear()
        reset_runtime()


def receiver() -> ApiClient:
    """The receiver handler, as API Gateway calls it."""
    from functions.receiver.handler import lambda_handler

    return ApiClient(lambda_handler)


def reconcile() -> dict[str, Any]:
    """One invocation of the reconcile handler, as the schedule would make it."""
    from functions.reconcile.handler import lambda_handler

    return lambda_handler({"trigger": "test"}, LocalContext(function_name="reconcile"))


def sql(db: Database, statement: str, params: Any = None) -> list[dict[str, Any]]:
    with db.connection() as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def tenant(db: Database) -> str:
    return operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]


def endpoint(db: Database, tenant_id: str, url: str, **options: Any) -> dict[str, Any]:
    return operator.add_endpoint(db, get_settings(), tenant_id=tenant_id, url=url, **options)


def publish(db: Database, tenant_id: str, type: str = "order.created", n: int = 1) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type=type, payload={"n": n}).id


def nothing_repaired(report: dict[str, Any]) -> bool:
    return not any(report["repairs"].values())


def drain_queue(pipeline: Pipeline, group: str = "standard") -> int:
    """Receive and delete every message of a queue without delivering: lost messages."""
    url = pipeline.queues[group].url
    lost = 0
    while messages := pipeline.sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0
    ).get("Messages", []):
        for message in messages:
            pipeline.sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            lost += 1
    return lost


def expire_leases(db: Database) -> None:
    sql(
        db,
        "UPDATE deliveries SET lease_expires_at = now() - interval '1 second'"
        " WHERE state IN ('queued', 'delivering')",
    )
    sql(db, "UPDATE deliveries_in_flight SET lease_expires_at = now() - interval '1 second'")


def test_a_lost_queue_message_is_requeued_after_its_lease_and_delivered_once(pipeline, db, sink):
    # Given a delivery whose queue message was received and deleted without being delivered
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/lost"))
    publish(db, t)
    pipeline.fanout()
    assert drain_queue(pipeline) == 1
    # When reconcile runs while the lease still covers it, it leaves it alone
    assert nothing_repaired(reconcile())
    # And once the lease has run out, it is due again and enqueued in a new generation
    expire_leases(db)
    report = reconcile()
    assert report["repairs"]["lost_messages_requeued"] == 1
    assert report["repairs"]["enqueued"] == 1
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    assert delivery["state"] == "queued" and delivery["enqueue_seq"] == 2
    # Then the real deliver handler delivers it, once
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/lost")) == 1
    # And a second run right after finds nothing to repair and nothing wrong
    again = reconcile()
    assert nothing_repaired(again) and again["unreconciled"] == 0


def test_a_delivery_left_delivering_by_a_killed_worker_is_repaired_and_delivered_once(
    pipeline, db, sink
):
    # Given a worker that claimed a delivery, took the endpoint's only slot and died: its
    # message comes back after the visibility timeout and is skipped (the lease still holds)
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/killed"), max_concurrency=1)
    publish(db, t)
    pipeline.fanout()
    [message] = pipeline.sqs.receive_message(
        QueueUrl=pipeline.queues["standard"].url, WaitTimeSeconds=0
    )["Messages"]
    delivery_id, seq = json.loads(message["Body"])["delivery_id"], 1
    with db.connection() as conn:
        claim = delivery_repo.claim_to_send(
            conn, delivery_id, seq, timedelta(seconds=32), datetime.now(UTC)
        )
        assert claim is not None and claim.wait_seconds == 0  # claimed, slot taken
    time.sleep(1.1)  # the test queue's visibility timeout
    assert pipeline.deliver_once() == 1
    assert sink.requests() == [] and pipeline.delivery(id=delivery_id)["state"] == "delivering"
    # When its lease runs out and reconcile runs
    expire_leases(db)
    report = reconcile()
    # Then it is due again with its slot released, and delivered exactly once
    assert report["repairs"]["crashed_deliveries_requeued"] == 1
    assert pipeline.slots(ep["id"]) == []
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/killed")) == 1
    assert len(pipeline.attempts(delivery_id)) == 1
    assert nothing_repaired(reconcile())


def test_an_outbox_row_the_fan_out_missed_is_fanned_out_and_counted_late(pipeline, db, sink):
    # Given an event whose outbox row has waited ten minutes, and one that just arrived
    t = tenant(db)
    endpoint(db, t, sink.url("/late"))
    late = publish(db, t, n=1)
    publish(db, t, n=2)
    sql(
        db,
        "UPDATE outbox SET created_at = now() - interval '10 minutes' WHERE event_id = %s",
        (late,),
    )
    # When reconcile runs
    report = reconcile()
    # Then both are fanned out and enqueued, and only the old one counts as late
    assert report["repairs"]["late_outbox_fanned_out"] == 1
    assert report["repairs"]["late_outbox_deliveries_created"] == 1
    assert report["findings"]["fanned_out_on_time"] == 1
    assert report["repairs"]["enqueued"] == 2
    assert report["findings"]["late_outbox_remaining"] == 0
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    assert sorted(json.loads(r.body)["n"] for r in sink.requests("/late")) == [1, 2]
    assert nothing_repaired(reconcile())


def test_a_delivery_past_its_deadline_is_dead_with_the_reason(pipeline, db, sink):
    # Given a delivery that failed once and waits an hour in Postgres for its retry
    sink.behave("/down", statuses=[503])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/down"), event_types=["order.*"])
    publish(db, t)
    pipeline.fanout()
    pipeline.deliver_once()
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    assert delivery["state"] == "pending" and delivery["attempt_count"] == 1
    # When the clock passes its deadline and reconcile runs
    sql(db, "UPDATE deliveries SET deadline_at = now() - interval '1 second'")
    report = reconcile()
    # Then it is dead, with why, and nothing is sent any more
    assert report["repairs"]["deadline_dead"] == 1
    dead = pipeline.delivery(endpoint_id=ep["id"])
    assert dead["state"] == "dead" and dead["finished_at"] is not None
    assert dead["last_error"] == "deadline passed before delivery after 1 attempts; last: HTTP 503"
    assert report["findings"]["deliveries_by_state"]["dead"] == 1
    assert nothing_repaired(reconcile())
    assert len(sink.requests("/down")) == 1
    # And the tenant's delivery.dead says so, once (decision 0068)
    assert report["findings"]["operational"]["delivery_dead"] == 1
    assert len(sql(db, "SELECT id FROM events WHERE type = 'delivery.dead'")) == 1


def test_a_lost_delivery_is_recreated_only_for_endpoints_that_matched_when_the_event_came(
    pipeline, db, sink
):
    # Given two delivered events, one of whose deliveries was then lost
    t = tenant(db)
    endpoint(db, t, sink.url("/all"))
    invoices = endpoint(db, t, sink.url("/invoices"), event_types=["invoice.*"])
    publish(db, t, "order.created")
    invoice = publish(db, t, "invoice.paid")
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    lost = pipeline.delivery(event_id=invoice, endpoint_id=invoices["id"])["id"]
    sql(db, "DELETE FROM attempts WHERE delivery_id = %s", (lost,))
    sql(db, "DELETE FROM deliveries WHERE id = %s", (lost,))
    # And an endpoint created after both events, which never wanted them
    endpoint(db, t, sink.url("/newcomer"))
    # When reconcile runs
    report = reconcile()
    # Then exactly the lost delivery is created again and delivered
    assert report["repairs"]["missing_deliveries_created"] == 1
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    assert len(sink.requests("/invoices")) == 2
    assert sink.requests("/newcomer") == []
    assert nothing_repaired(reconcile())


BIG = {"payload": {"amount": [{"numeric": [">", 100]}]}}


def test_a_delivery_whose_id_predates_keyed_ids_is_not_made_again(pipeline, db, sink):
    # Given a delivered event whose delivery has an id of the shape made before decision
    # 0040 (hex, kept in the default partition: it carries no event time)
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/old"))
    event = publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    made = pipeline.delivery(event_id=event, endpoint_id=ep["id"])["id"]
    old = "dlv_" + "f" * 32
    sql(db, "UPDATE deliveries SET id = %s WHERE id = %s", (old, made))
    sql(db, "UPDATE attempts SET delivery_id = %s WHERE delivery_id = %s", (old, made))
    # When reconcile walks the window's events (decision 0087: an event's deliveries are
    # found by key, and the default partition by its own index)
    report = reconcile()
    # Then the pair counts as delivered: no second delivery, nothing sent again
    assert nothing_repaired(report)
    rows = sql(db, "SELECT id FROM deliveries WHERE event_id = %s", (event,))
    assert [r["id"] for r in rows] == [old]
    assert len(sink.requests("/old")) == 1


def test_a_test_event_stays_with_its_one_endpoint(pipeline, db, sink):
    # Given a tenant with two endpoints taking every event, and a test event sent to one
    t = tenant(db)
    chosen = endpoint(db, t, sink.url("/chosen"))
    endpoint(db, t, sink.url("/other"))
    time.sleep(0.01)  # the event arrives after both endpoints
    sent = endpoint_service.send_test_event(
        db, get_settings(), operator.OPERATOR, chosen["id"], type="test.ping", payload=None
    )
    # When reconcile walks the window's events for missing deliveries
    report = reconcile()
    # Then the test event keeps its one delivery, to the endpoint it was sent to
    assert report["repairs"]["missing_deliveries_created"] == 0
    rows = sql(
        db, "SELECT id, endpoint_id FROM deliveries WHERE event_id = %s", (sent["event_id"],)
    )
    assert [(r["id"], r["endpoint_id"]) for r in rows] == [(sent["delivery_id"], chosen["id"])]


def publish_amount(db: Database, tenant_id: str, amount: int) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(
            conn, tenant_id=tenant_id, type="invoice.paid", payload={"amount": amount}
        ).id


def lose(db: Database, delivery_ids: list[str]) -> None:
    """Delete deliveries and their attempts: lost after the fan-out made them."""
    sql(db, "DELETE FROM attempts WHERE delivery_id = ANY(%s)", (delivery_ids,))
    sql(db, "DELETE FROM deliveries WHERE id = ANY(%s)", (delivery_ids,))


def test_a_lost_delivery_to_a_filtered_endpoint_is_recreated_where_its_pattern_matches(
    pipeline, db, sink
):
    # Given an endpoint for big amounts and one without a content filter, a big and a small
    # invoice delivered to them (the small one not to the filtered endpoint)
    t = tenant(db)
    everything = endpoint(db, t, sink.url("/all"))
    big_only = endpoint(db, t, sink.url("/big"), content_filter=BIG)
    big = publish_amount(db, t, 500)
    small = publish_amount(db, t, 5)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    [first] = sink.requests("/big")
    lost_big = pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"]
    lost_small = pipeline.delivery(event_id=small, endpoint_id=everything["id"])["id"]
    # And both deliveries of the big one to the filtered endpoint and the small one to the
    # unfiltered endpoint then lost
    lose(db, [lost_big, lost_small])
    # When reconcile runs
    report = reconcile()
    # Then exactly those two are created again, with their ids, and delivered
    assert report["repairs"]["missing_deliveries_created"] == 2
    assert pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"] == lost_big
    assert pipeline.delivery(event_id=small, endpoint_id=everything["id"])["id"] == lost_small
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    # And the filtered endpoint got the big invoice again, with the webhook-id it had, and
    # never the small one its pattern does not match
    again = sink.requests("/big")
    assert len(again) == 2
    assert again[1].headers["webhook-id"] == first.headers["webhook-id"] == lost_big
    assert all(json.loads(r.body)["amount"] == 500 for r in again)
    assert len(sink.requests("/all")) == 3
    assert nothing_repaired(reconcile())


def test_non_matching_filtered_events_do_not_stop_the_repair_reaching_later_ones(
    make_pipeline, db, sink
):
    # Given pages of two events, and five small invoices the filtered endpoint never wanted
    # ahead of a big one whose delivery to it was lost
    pipeline = make_pipeline(reconcile_batch_size=2)
    t = tenant(db)
    big_only = endpoint(db, t, sink.url("/big"), content_filter=BIG)
    for _ in range(5):
        publish_amount(db, t, 5)
    time.sleep(0.002)  # a later millisecond: the big one's id sorts after the small ones
    big = publish_amount(db, t, 500)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    lost = pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"]
    lose(db, [lost])
    # When reconcile runs
    report = reconcile()
    # Then the walk got past the non-matches to the lost delivery, and created nothing else
    assert report["repairs"]["missing_deliveries_created"] == 1
    assert "incomplete" not in report["findings"]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/big")) == 2
    assert nothing_repaired(reconcile())


def test_a_loss_at_the_event_a_full_page_stops_at_is_repaired(make_pipeline, db, sink):
    # Given pages of two events: a small invoice the filtered endpoint never wanted, a big
    # one whose delivery to it was lost, and another small one after it, so that the first
    # page is full and stops at the big one
    pipeline = make_pipeline(reconcile_batch_size=2)
    t = tenant(db)
    big_only = endpoint(db, t, sink.url("/big"), content_filter=BIG)
    publish_amount(db, t, 5)
    time.sleep(0.002)  # each in its own millisecond: ids sort in this order
    big = publish_amount(db, t, 500)
    time.sleep(0.002)
    publish_amount(db, t, 6)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    lose(db, [pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"]])
    # When reconcile runs
    report = reconcile()
    # Then the page's last event was checked before the walk moved past it
    assert report["repairs"]["missing_deliveries_created"] == 1
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/big")) == 2


def walk(report: dict[str, Any]) -> tuple[int, bool]:
    """(missing deliveries created, whether the walk stopped before the window's end)."""
    stopped = "missing_deliveries" in report["findings"].get("incomplete", [])
    return report["repairs"]["missing_deliveries_created"], stopped


def test_a_bounded_repair_resumes_where_the_last_run_stopped(make_pipeline, db, sink):
    # Given pages of two events, one page per run, and six small invoices the filtered
    # endpoint never wanted (three pages) ahead of a big one whose delivery to it was lost
    pipeline = make_pipeline(reconcile_batch_size=2, reconcile_repair_max_pages=1)
    t = tenant(db)
    big_only = endpoint(db, t, sink.url("/big"), content_filter=BIG)
    for _ in range(6):
        publish_amount(db, t, 5)
    time.sleep(0.002)  # a later millisecond: the big one's id sorts after the small ones
    big = publish_amount(db, t, 500)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    lost = pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"]
    lose(db, [lost])
    # When reconcile runs four times
    reports = [reconcile() for _ in range(4)]
    # Then each run went one page further than the last, said so, and the fourth reached the
    # lost delivery and the window's end
    assert [walk(r) for r in reports] == [(0, True), (0, True), (0, True), (1, False)]
    # And a walk stopped at its own bound is reported, not alarmed on
    assert [r["unreconciled"] for r in reports] == [0, 0, 0, 0]
    assert reports[0]["findings"]["missing_deliveries_walk"]["stopped_by"] == "max_pages"
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"] == lost
    assert len(sink.requests("/big")) == 2


def test_the_repair_walk_wraps_and_finds_a_loss_behind_its_position(make_pipeline, db, sink):
    # Given pages of two events, one page per run, no rest between cycles, a big invoice
    # delivered to the filtered endpoint, then six small ones it never wanted
    pipeline = make_pipeline(
        reconcile_batch_size=2, reconcile_repair_max_pages=1, reconcile_repair_rest_minutes=0
    )
    t = tenant(db)
    big_only = endpoint(db, t, sink.url("/big"), content_filter=BIG)
    big = publish_amount(db, t, 500)
    time.sleep(0.002)  # a later millisecond: the small ones' ids sort after the big one
    for _ in range(6):
        publish_amount(db, t, 5)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    # And a first run that walked past the big one
    assert walk(reconcile()) == (0, True)
    # When the big one's delivery is lost behind the walk's position, and reconcile runs on
    lose(db, [pipeline.delivery(event_id=big, endpoint_id=big_only["id"])["id"]])
    reports = [reconcile() for _ in range(4)]
    # Then the walk finishes its cycle without it, and the next cycle, from the window's
    # start, re-creates it
    assert [walk(r) for r in reports] == [(0, True), (0, True), (0, False), (1, True)]
    cycles = [r["findings"]["missing_deliveries_walk"]["cycle"] for r in reports]
    assert cycles == [0, 0, 0, 1]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/big")) == 2


def test_the_walk_stops_at_its_time_bound_and_is_not_alarmed_on(make_pipeline, db, sink):
    # Given pages of two events, a walk allowed no time past its first page, and six events
    pipeline = make_pipeline(reconcile_batch_size=2, reconcile_repair_max_seconds=0)
    t = tenant(db)
    endpoint(db, t, sink.url("/big"), content_filter=BIG)
    for _ in range(6):
        publish_amount(db, t, 5)
    pipeline.fanout()
    # When reconcile runs twice
    reports = [reconcile() for _ in range(2)]
    # Then each run read one page, said it stopped at its time bound, and the second resumed
    # where the first stopped; neither counts as unreconciled
    walks = [r["findings"]["missing_deliveries_walk"] for r in reports]
    assert [(w["pages"], w["stopped_by"]) for w in walks] == [(1, "max_seconds")] * 2
    assert walks[1]["resumed_after"] == walks[0]["stopped_after"] is not None
    assert [r["unreconciled"] for r in reports] == [0, 0]


def test_a_finished_repair_cycle_rests_before_the_window_is_walked_again(make_pipeline, db, sink):
    # Given a walk that rests 10 minutes after a cycle, and a cycle just finished
    pipeline = make_pipeline(reconcile_repair_rest_minutes=10)
    t = tenant(db)
    everything = endpoint(db, t, sink.url("/all"))
    event = publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    first = reconcile()["findings"]["missing_deliveries_walk"]
    assert (first["pages"], first["resting_until"]) == (1, None)
    # When a delivery is lost and reconcile runs within the rest
    lose(db, [pipeline.delivery(event_id=event, endpoint_id=everything["id"])["id"]])
    resting = reconcile()
    # Then the walk reads nothing, says until when it rests, and is not alarmed on
    walked = resting["findings"]["missing_deliveries_walk"]
    assert (walked["pages"], walked["cycle"]) == (0, 1)
    until = datetime.fromisoformat(walked["resting_until"])
    assert timedelta(minutes=9) < until - datetime.now(UTC) <= timedelta(minutes=10)
    assert resting["repairs"]["missing_deliveries_created"] == 0
    assert resting["unreconciled"] == 0
    # And once the rest has passed (the cycle's end moved 11 minutes back), the next cycle
    # walks the window and re-creates the lost delivery with its id
    sql(db, "UPDATE reconcile_positions SET updated_at = updated_at - interval '11 minutes'")
    after = reconcile()
    assert after["repairs"]["missing_deliveries_created"] == 1
    assert after["findings"]["missing_deliveries_walk"]["resting_until"] is None
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/all")) == 2


def test_two_runs_at_once_never_move_the_repair_position_back(pipeline, db):
    # Given two runs that read the same position of the walk, in its first cycle
    day = timedelta(hours=24)
    name = "missing_deliveries"
    with db.connection() as conn:
        start = reconcile_repo.walk_position(conn, name, window=day)
        # When the one that got further stores first, then the other
        reconcile_repo.advance_walk(conn, name, cycle=start.cycle, after="evt_9")
        reconcile_repo.advance_walk(conn, name, cycle=start.cycle, after="evt_5")
        # Then the next run resumes after the further one
        assert reconcile_repo.walk_position(conn, name, window=day).after == "evt_9"
        # And when one finishes the cycle, the other's later stop is not a new cycle's start
        reconcile_repo.finish_walk_cycle(conn, name, cycle=start.cycle)
        reconcile_repo.advance_walk(conn, name, cycle=start.cycle, after="evt_7")
        reconcile_repo.finish_walk_cycle(conn, name, cycle=start.cycle)
        position = reconcile_repo.walk_position(conn, name, window=day)
    assert (position.cycle, position.after) == (start.cycle + 1, None)


def test_a_repair_position_older_than_the_window_is_unreconciled(make_pipeline, db, sink):
    # Given a lost delivery, and a walk position left from before the window (the reconciler
    # did not run for longer than the window, or a cycle took longer than it)
    pipeline = make_pipeline()
    t = tenant(db)
    everything = endpoint(db, t, sink.url("/all"))
    event = publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    lose(db, [pipeline.delivery(event_id=event, endpoint_id=everything["id"])["id"]])
    with db.connection() as conn:
        reconcile_repo.advance_walk(conn, "missing_deliveries", cycle=0, after="evt_0")
    # When reconcile runs
    report = reconcile()
    # Then it walks the window from its start, repairing the loss, and says events between
    # went unchecked in that cycle
    assert walk(report) == (1, False)
    assert report["findings"]["missing_deliveries_walk"]["lapsed"] is True
    assert report["unreconciled"] == 1
    # And the next cycle is whole again
    assert reconcile()["unreconciled"] == 0


def test_dlq_depth_is_reported_per_group_and_alarms_as_unreconciled(pipeline, db, capsys):
    # Given a poison message that fails its consumer until SQS moves it to the DLQ
    standard = pipeline.queues["standard"]
    pipeline.sqs.send_message(QueueUrl=standard.url, MessageBody="not a delivery")
    deadline = time.monotonic() + 10
    while pipeline.queue_depth(standard.dlq_url) == 0:
        assert time.monotonic() < deadline, "the poison message never reached the DLQ"
        pipeline.deliver_once()
        time.sleep(0.3)
    capsys.readouterr()
    # When reconcile runs
    report = reconcile()
    # Then the DLQ depth is reported for its group, and is what is still wrong
    assert report["findings"]["dlq_depth"] == {"standard": 1, "priority": 0, "bulk": 0}
    assert report["unreconciled"] == 1
    # And the metrics say so: Unreconciled for the alarm, DlqDepth per tenant group
    documents = [
        json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line
    ]
    values = {
        (d.get("TenantGroup"), name): d[name][0] if isinstance(d[name], list) else d[name]
        for d in documents
        for m in d["_aws"]["CloudWatchMetrics"]
        for name in (x["Name"] for x in m["Metrics"])
    }
    assert values[(None, "Unreconciled")] == 1.0
    assert values[("standard", "DlqDepth")] == 1.0
    assert values[(None, "ReconcileLostMessages")] == 0.0
    # the run's heartbeat, and partition upkeep without errors (their alarms, infra/alarms.py)
    assert values[(None, "ReconcileHeartbeat")] == 1.0
    assert values[(None, "RetentionErrors")] == 0.0
    # And the report row is stored
    [row] = sql(db, "SELECT unreconciled, findings FROM reconcile_runs")
    assert row["unreconciled"] == 1 and row["findings"]["dlq_depth"]["standard"] == 1


def test_two_reconciles_at_once_do_not_double_repair(pipeline, db, database_url, sink):
    # Given 30 lost queue messages (5 of them past their deadline) and 10 late outbox rows
    t = tenant(db)
    endpoint(db, t, sink.url("/race"), event_types=["order.*"])
    for n in range(30):
        publish(db, t, n=n)
    pipeline.fanout()
    assert drain_queue(pipeline) == 30
    expire_leases(db)
    sql(
        db,
        "UPDATE deliveries SET deadline_at = now() - interval '1 second'"
        " WHERE id IN (SELECT id FROM deliveries ORDER BY id LIMIT 5)",
    )
    late = [publish(db, t, n=100 + n) for n in range(10)]
    sql(
        db,
        "UPDATE outbox SET created_at = now() - interval '1 hour' WHERE event_id = ANY(%s)",
        (late,),
    )
    # When two reconcilers (two processes, each with its own pool) run at the same moment
    pools = [Database(database_url, max_size=4) for _ in range(2)]
    reports: list[Any] = []
    start = threading.Barrier(2)

    def run(pool: Database) -> None:
        reconciler = build_reconciler(get_settings(), pool)
        start.wait()
        reports.append(reconciler.run(trigger="test"))

    threads = [threading.Thread(target=run, args=(p,)) for p in pools]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    for pool in pools:
        pool.close()
    # Then every repair was made once, by one of them
    total = {k: sum(r.repairs[k] for r in reports) for k in reports[0].repairs}
    assert total["deadline_dead"] == 5
    assert total["lost_messages_requeued"] == 25
    assert total["late_outbox_fanned_out"] == 10
    assert total["enqueued"] == 35
    # (and the five deaths were announced once, by one of them: decision 0068)
    assert sum(r.findings["operational"]["delivery_dead"] for r in reports) == 5
    assert pipeline.queue_depth(pipeline.queues["standard"].url) == 35
    # And each delivery reaches the subscriber exactly once
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 35, "dead": 5}, timeout=40)
    ids = [r.headers["webhook-id"] for r in sink.requests("/race")]
    assert len(ids) == len(set(ids)) == 35


def stripe_source(db: Database, t: str, providers: ProviderServer, **catchup: Any) -> str:
    options = {
        "catchup": {
            "enabled": True,
            "api_key": providers.stripe.api_key,
            **catchup,
        }
    }
    source = operator.add_source(
        db, tenant_id=t, scheme="stripe", secrets=[STRIPE_SECRET], options=options
    )
    return source["id"]


def ledger(db: Database, source_id: str) -> list[str]:
    rows = sql(db, "SELECT dedupe_key FROM events WHERE source_id = %s", (source_id,))
    return sorted(r["dedupe_key"] for r in rows)


def test_stripe_catch_up_brings_the_events_the_receiver_never_saw_once(
    pipeline, db, sink, providers
):
    # Given a Stripe account with four recent events, one of which reached the receiver
    t = tenant(db)
    endpoint(db, t, sink.url("/stripe"), event_types=["invoice.*"])
    source = stripe_source(db, t, providers, page_size=2)
    now = int(time.time())
    seen = providers.stripe.add("evt_seen", now - 300)
    for n in range(3):
        providers.stripe.add(f"evt_missed_{n}", now - 200 + n)
    api = receiver()
    body = json.dumps(seen).encode()
    response = api.post(f"/in/{source}", headers=stripe_headers(STRIPE_SECRET, body), body=body)
    assert response.status == 200
    # When reconcile runs
    report = reconcile()
    # Then exactly the three missed events are stored, through two pages of the API
    assert report["repairs"]["catchup_events_stored"] == 3
    result = report["findings"]["catchup"][source]
    assert result["error"] is None and result["duplicates"] == 1
    assert ledger(db, source) == ["evt_missed_0", "evt_missed_1", "evt_missed_2", "evt_seen"]
    [caught] = sql(db, "SELECT type, headers FROM events WHERE dedupe_key = 'evt_missed_0'")
    assert caught == {"type": "invoice.paid", "headers": {"hookline-catchup": "stripe-events-api"}}
    calls = providers.requests("GET", "/v1/events")
    assert [c.query.get("starting_after") for c in calls] == [None, ["evt_missed_1"]]
    assert all(c.headers["authorization"] == "Bearer sk_test_fake" for c in calls)
    # And each event reaches the subscriber once
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 4})
    delivered = sorted(json.loads(r.body)["id"] for r in sink.requests("/stripe"))
    assert delivered == ["evt_missed_0", "evt_missed_1", "evt_missed_2", "evt_seen"]
    # And a second run adds nothing
    again = reconcile()
    assert again["repairs"]["catchup_events_stored"] == 0
    assert ledger(db, source) == ["evt_missed_0", "evt_missed_1", "evt_missed_2", "evt_seen"]
    assert again["unreconciled"] == 0


def test_a_long_stripe_walk_resumes_where_it_stopped(pipeline, db, providers):
    # Given five missed events and a catch-up that reads one page of one event per run
    t = tenant(db)
    source = stripe_source(db, t, providers, page_size=1, max_pages=2, overlap_seconds=1)
    now = int(time.time())
    for n in range(5):
        providers.stripe.add(f"evt_{n}", now - 100 + n)
    # When reconcile runs until the walk is done, then once more
    stored = []
    for _ in range(4):
        result = reconcile()["findings"]["catchup"][source]
        stored.append((result["stored"], result["truncated"]))
    # Then each run continued the walk, and every event arrived once
    assert stored == [(2, True), (2, True), (1, False), (0, False)]
    assert ledger(db, source) == [f"evt_{n}" for n in range(5)]


def test_stripe_catch_up_failures_are_unreconciled_and_lose_nothing(
    pipeline, db, providers, moto_endpoint
):
    # Given a source whose API key lives in Secrets Manager, and a Stripe that is down
    import boto3

    secrets = boto3.client("secretsmanager", endpoint_url=moto_endpoint, region_name="us-east-1")
    t = tenant(db)
    arn = secrets.create_secret(
        Name=f"hookline/catchup/{t}/stripe",
        SecretString=json.dumps({"api_key": providers.stripe.api_key}),
    )["ARN"]
    source = operator.add_source(
        db,
        tenant_id=t,
        scheme="stripe",
        secrets=[STRIPE_SECRET],
        options={"catchup": {"enabled": True, "api_key_secret_arn": arn}},
    )["id"]
    providers.stripe.add("evt_while_down", int(time.time()) - 60)
    providers.stripe.fail_with = 500
    # When reconcile runs
    report = reconcile()
    # Then the failure is reported (without the key) and counts as unreconciled
    result = report["findings"]["catchup"][source]
    assert result["error"] == "stripe API answered 500 to GET /v1/events"
    assert report["unreconciled"] == 1
    [state] = sql(db, "SELECT position, last_error FROM source_catchup")
    assert state["position"] == {} and "500" in state["last_error"]
    # And once Stripe is back, the next run brings the event
    providers.stripe.fail_with = None
    again = reconcile()
    assert again["repairs"]["catchup_events_stored"] == 1 and again["unreconciled"] == 0
    assert ledger(db, source) == ["evt_while_down"]


def test_github_redelivery_is_requested_for_failed_deliveries_only(pipeline, db, providers):
    # Given a hook's recent deliveries: one fine, one failed and never received, one failed
    # for GitHub although it reached the ledger, one failed then redelivered fine, and one
    # failed before the catch-up's window
    github = providers.github
    now = datetime.now(UTC)
    t = tenant(db)
    source = operator.add_source(
        db,
        tenant_id=t,
        scheme="github",
        secrets=[GITHUB_SECRET],
        options={
            "catchup": {
                "enabled": True,
                "api_key": github.token,
                "owner": github.owner,
                "repo": github.repo,
                "hook_id": github.hook_id,
                "page_size": 2,
                "lookback_hours": 24,
            }
        },
    )["id"]
    github.add("guid-old", 503, now - timedelta(days=2))
    github.add("guid-ok", 200, now - timedelta(minutes=50))
    failed = github.add("guid-failed", 503, now - timedelta(minutes=40))
    github.add("guid-stored", 504, now - timedelta(minutes=30))
    github.add("guid-retried", 502, now - timedelta(minutes=20))
    github.add("guid-retried", 200, now - timedelta(minutes=10))
    api = receiver()
    body = b'{"action": "opened"}'
    headers = github_headers(GITHUB_SECRET, body, delivery="guid-stored", event="issues")
    assert api.post(f"/in/{source}", headers=headers, body=body).status == 200
    # When reconcile runs
    report = reconcile()
    # Then GitHub is asked to redeliver exactly the failed delivery nobody received
    assert github.redelivered == [failed]
    assert report["repairs"]["redeliveries_requested"] == 1
    calls = providers.requests("GET", github.hook_path)
    assert len(calls) == 3  # six deliveries, two per page, the last page reaching past the window
    assert all(c.headers["authorization"] == f"Bearer {github.token}" for c in calls)
    assert all(c.headers["accept"] == "application/vnd.github+json" for c in calls)
    # And a run right after does not ask again
    again = reconcile()
    assert github.redelivered == [failed] and again["repairs"]["redeliveries_requested"] == 0
    assert again["unreconciled"] == 0


def test_hookline_reconcile_once_prints_the_report_and_stores_it(pipeline, db, capsys):
    # Given a late outbox row
    t = tenant(db)
    event = publish(db, t)
    sql(
        db,
        "UPDATE outbox SET created_at = now() - interval '5 minutes' WHERE event_id = %s",
        (event,),
    )
    capsys.readouterr()
    # When an operator runs one reconcile from the command line
    assert main(["reconcile", "--once", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # Then the report is printed and stored
    assert report["trigger"] == "cli" and report["repairs"]["late_outbox_fanned_out"] == 1
    [row] = sql(db, "SELECT id, unreconciled FROM reconcile_runs")
    assert row["id"] == report["id"] and row["unreconciled"] == report["unreconciled"] == 0
    # And the text form reads as a summary
    assert main(["reconcile", "--once"]) == 0
    text = capsys.readouterr().out
    assert "unreconciled  0" in text and "dlq depth     standard 0" in text
    # With where the missing-delivery walk got to (a full walk of a small window)
    assert re.search(r"repair walk   cycle \d+, \d+ pages, to the window's end", text), text
