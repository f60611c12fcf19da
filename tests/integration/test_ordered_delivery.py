"""Ordered delivery (decision 0069): an ordered endpoint receives each key's events one at a
time, in ledger order, through failures, a crashed deliverer, a dead head and a replay; keys
proceed side by side; a bad key path is refused when the endpoint is saved."""

from __future__ import annotations

import json
import time
from datetime import timedelta
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import reconcile as reconcile_repo
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.support import operator
from tests.support.management import ManagementClient
from tests.support.pipeline import Pipeline
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

ORDER_BY_CUSTOMER = {"key": "$.payload.customer"}
OPERATOR = {"requested_by": "ana@example.com", "reason": "the receiver lost a day"}


def tenant(db: Database) -> str:
    return operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]


def endpoint(db: Database, tenant_id: str, url: str, **options: Any) -> dict[str, Any]:
    return operator.add_endpoint(db, get_settings(), tenant_id=tenant_id, url=url, **options)


def publish(db: Database, tenant_id: str, events: list[tuple[str, int]]) -> list[str]:
    """One event per (customer, n), in this order, each in its own transaction."""
    ids = []
    for customer, n in events:
        with db.connection() as conn, conn.transaction():
            payload = {"customer": customer, "n": n}
            ids.append(hookline.publish(conn, tenant_id=tenant_id, type="o.c", payload=payload).id)
    return ids


def in_one_millisecond() -> None:
    """Make the ids this process makes next all fall in one millisecond, as a burst of events
    published together does: ULIDs one apart (monotonic), so the deliveries' ids, which keep
    only the event id's time and then a hash of the pair (decision 0040), sort by the hash."""
    from hookline import ids

    ahead = (time.time_ns() // 1_000_000 + 1_000) << 80  # a second ahead: a burst's time
    ids._last = max(ids._last, ahead)


def arrivals(sink: Sink, path: str, statuses: list[int]) -> list[tuple[str, int, int]]:
    """(customer, n, status answered) per request, in arrival order; the sink answers the
    i-th request of a path with statuses[i] (the last one repeating)."""
    return [
        (body["customer"], body["n"], statuses[min(i, len(statuses) - 1)])
        for i, body in enumerate(json.loads(r.body) for r in sink.requests(path))
    ]


def assert_in_order_one_at_a_time(seen: list[tuple[str, int, int]], expected: list[int]) -> None:
    """Per key: every request is for the key's oldest event not yet accepted (2xx), so no
    event is sent before the one ahead of it was accepted, and all are accepted in order."""
    for customer in {c for c, _, _ in seen}:
        mine = [(n, status) for c, n, status in seen if c == customer]
        accepted: list[int] = []
        for n, status in mine:
            assert n == expected[len(accepted)], (customer, mine)
            if status < 300:
                accepted.append(n)
        assert accepted == expected, (customer, mine)


def test_each_key_arrives_in_ledger_order_through_failures_and_keys_run_side_by_side(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given an endpoint ordered by customer whose receiver fails the first three requests
    statuses = [500, 500, 500, 200]
    sink.behave("/ordered", statuses=statuses)
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/ordered"), ordering=ORDER_BY_CUSTOMER)
    # And four events of each of three customers, published interleaved
    publish(db, t, [(c, n) for n in range(1, 5) for c in ("a", "b", "c")])
    # When the pipeline runs until everything is delivered
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 12}, timeout=40)
    # Then each customer's events arrived in order, none before the one ahead was accepted
    seen = arrivals(sink, "/ordered", statuses)
    assert_in_order_one_at_a_time(seen, [1, 2, 3, 4])
    # And the three customers' first events went out together, not one customer after another
    assert {c for c, _, _ in seen[:3]} == {"a", "b", "c"}
    assert all(n == 1 for _, n, _ in seen[:3])
    assert ep["ordering"] == ORDER_BY_CUSTOMER


def test_the_deliverer_sends_a_keys_next_event_itself_without_waiting_for_fan_out(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given one order across an endpoint and three events, fanned out once
    sink.behave("/one", statuses=[200])
    t = tenant(db)
    endpoint(db, t, sink.url("/one"), ordering={"key": None})
    publish(db, t, [("x", 1), ("x", 2), ("x", 3)])
    pipeline.fanout()
    # When only the deliverer runs (no fan-out run, no schedule)
    for _ in range(6):
        pipeline.deliver_once()
    # Then each finished delivery handed the next to the queue: all three arrived, in order
    assert [n for _, n, _ in arrivals(sink, "/one", [200])] == [1, 2, 3]
    assert pipeline.states() == {"delivered": 3}


@pytest.mark.parametrize(
    "stuck",
    [
        "delivering",  # a deliverer claimed it and died: its lease ran out
        "queued",  # its SQS message was lost: the queued lease ran out
    ],
)
def test_a_crashed_deliverer_or_lost_message_holds_its_key_until_reconcile_in_order(
    pipeline: Pipeline, db: Database, sink: Sink, stuck: str
) -> None:
    # Given an ordered endpoint and three events each of two customers, fanned out
    sink.behave("/ordered", statuses=[200])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/ordered"), ordering=ORDER_BY_CUSTOMER)
    publish(db, t, [(c, n) for n in range(1, 4) for c in ("a", "b")])
    pipeline.fanout()
    # And a's head stuck with its lease run out (the message it was sent in is stale)
    with db.connection() as conn:
        heads = conn.execute(
            "UPDATE deliveries d SET enqueue_seq = enqueue_seq + 1, "
            "lease_expires_at = now() - interval '1 second' FROM events e "
            "WHERE e.id = d.event_id AND d.endpoint_id = %s AND d.state = 'queued' "
            "AND convert_from(e.payload, 'UTF8')::jsonb ->> 'customer' = 'a' "
            "RETURNING d.id, d.endpoint_id, d.enqueue_seq",
            (ep["id"],),
        ).fetchall()
        if stuck == "delivering":  # and its claim, with a slot, run out too
            for head in heads:
                conn.execute(
                    "INSERT INTO deliveries_in_flight VALUES (%s, %s, %s,"
                    " now() - interval '1 second', true)",
                    (head["id"], head["endpoint_id"], head["enqueue_seq"]),
                )
    # When the pipeline runs: b's events all go; a's stay behind their crashed head
    pipeline.run_until(lambda: pipeline.states().get("delivered") == 3)
    for _ in range(3):
        pipeline.fanout()
        pipeline.deliver_once()
    seen = arrivals(sink, "/ordered", [200])
    assert [(c, n) for c, n, _ in seen] == [("b", 1), ("b", 2), ("b", 3)]
    assert pipeline.states() == {"delivered": 3, "queued": 1, "held": 2}
    # And when the reconciler requeues the expired lease, a's events follow in order
    with db.connection() as conn:
        requeued = reconcile_repo.requeue_expired_leases(conn, limit=100)
    assert [r.was for r in requeued] == [stuck]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 6})
    seen = arrivals(sink, "/ordered", [200])
    assert [(c, n) for c, n, _ in seen if c == "a"] == [("a", 1), ("a", 2), ("a", 3)]


def test_a_dead_head_releases_the_next_and_stays_replayable(
    make_pipeline: Any, db: Database, sink: Sink
) -> None:
    # Given one order across the endpoint, whose receiver fails the first request, and
    # retries an hour apart
    pipeline = make_pipeline(retry_schedule_seconds=[0, 3600, 3600])
    sink.behave("/one", statuses=[500, 200])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/one"), ordering={"key": None})
    ids = publish(db, t, [("x", 1), ("y", 2), ("z", 3)])
    pipeline.fanout()
    pipeline.deliver_once()
    head = pipeline.delivery(event_id=ids[0])
    assert head["state"] == "pending" and head["last_status"] == 500
    assert pipeline.states() == {"pending": 1, "held": 2}
    # When the head's deadline passes and the reconciler kills it
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries SET deadline_at = now() - interval '1 second' WHERE id = %s",
            (head["id"],),
        )
        killed = reconcile_repo.kill_past_deadline(conn, limit=100)
    assert [k.id for k in killed] == [head["id"]]
    # Then the next ones are delivered in order; the dead one is visible
    pipeline.run_until(lambda: pipeline.states() == {"dead": 1, "delivered": 2})
    assert [n for _, n, _ in arrivals(sink, "/one", [500, 200])] == [1, 2, 3]
    # And replaying it delivers it (behind whatever its key holds)
    result = replay(delivery_ids=[head["id"]], **OPERATOR)
    assert result["enqueued"] == 1
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    assert [n for _, n, _ in arrivals(sink, "/one", [500, 200])] == [1, 2, 3, 1]
    assert ep["ordering"] == {"key": None}


def replay(**doc: Any) -> dict[str, Any]:
    from functions.replay.handler import lambda_handler

    return lambda_handler(doc, LocalContext(function_name="replay"))


def test_a_replayed_window_is_redelivered_per_key_in_ledger_order(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given an ordered endpoint that received four events each of two customers
    sink.behave("/ordered", statuses=[200])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/ordered"), ordering=ORDER_BY_CUSTOMER)
    with db.connection() as conn:
        since = conn.execute("SELECT now() AS t").fetchone()["t"].isoformat()
    # (published in one millisecond, so the deliveries' ids do not sort in ledger order)
    in_one_millisecond()
    publish(db, t, [(c, n) for n in range(1, 5) for c in ("a", "b")])
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 8})
    first = len(sink.requests("/ordered"))
    # And the receiver now fails its next two requests
    statuses = [200] * first + [500, 500, 200]
    sink.behave("/ordered", statuses=statuses)
    sink.behaviours["/ordered"].served = first
    # When the endpoint's window is replayed
    result = replay(endpoint_id=ep["id"], since=since, states=["delivered"], **OPERATOR)
    assert (result["selected"], result["enqueued"]) == (8, 8)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 8}, timeout=40)
    pipeline.run_until(lambda: len(sink.requests("/ordered")) == first + 10, timeout=40)
    # Then each customer's events came again one at a time, in ledger order
    again = arrivals(sink, "/ordered", statuses)[first:]
    assert_in_order_one_at_a_time(again, [1, 2, 3, 4])


def test_lost_deliveries_recreated_by_the_reconciler_or_a_refanout_keep_the_order(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given an ordered endpoint that received three events each of two customers
    sink.behave("/ordered", statuses=[200])
    t = tenant(db)
    endpoint(db, t, sink.url("/ordered"), ordering=ORDER_BY_CUSTOMER)
    with db.connection() as conn:
        since = conn.execute("SELECT now() AS t").fetchone()["t"].isoformat()
    publish(db, t, [(c, n) for n in range(1, 4) for c in ("a", "b")])
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 6})

    def lose_all() -> int:
        with db.connection() as conn, conn.transaction():
            conn.execute("DELETE FROM attempts")
            conn.execute("DELETE FROM deliveries")
        return len(sink.requests("/ordered"))

    def assert_redelivered_in_order(since_request: int) -> None:
        again = arrivals(sink, "/ordered", [200])[since_request:]
        assert len(again) == 6
        assert_in_order_one_at_a_time(again, [1, 2, 3])

    # When they are lost and the reconciler re-creates them
    first = lose_all()
    with db.connection() as conn:
        page = reconcile_repo.create_missing_deliveries(
            conn, window=timedelta(hours=1), deadline=timedelta(hours=1), limit=100
        )
    # Then they are held behind one head per key, and delivered per key in order
    assert len(page.created) == 6
    assert pipeline.states() == {"held": 4, "pending": 2}
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 6})
    assert_redelivered_in_order(first)
    # And the same when a replay re-fans the window out from the ledger
    second = lose_all()
    result = replay(since=since, refanout=True, **OPERATOR)
    assert (result["created"], result["enqueued"]) == (6, 6)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 6})
    assert_redelivered_in_order(second)


@pytest.mark.parametrize(
    ("ordering", "status", "message"),
    [
        ({"key": "payload.customer"}, 400, "ordering.key: 'payload.customer' is not a JSON path"),
        ({"key": "$.payload[*]"}, 400, "ordering.key: '$.payload[*]': only dot names"),
        ({"key": ""}, 400, "ordering.key: must be a JSON path"),
        ({"key": "$"}, 400, "ordering.key: '$' is the whole event"),
        ({"path": "$.payload.a"}, 422, '"field": "ordering.key", "in": "body"'),
    ],
)  # fmt: skip
def test_a_bad_ordering_key_is_a_4xx_naming_the_field(
    mgmt: ManagementClient, ordering: dict[str, Any], status: int, message: str
) -> None:
    t = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    answer = mgmt.post(
        "/v1/endpoints",
        {"tenant_id": t["id"], "url": "https://93.184.216.34/h", "ordering": ordering},
    )
    assert answer.status == status, answer.json()
    assert message in json.dumps(answer.json())


def test_ordering_is_saved_shown_changed_and_cleared_through_the_api(
    mgmt: ManagementClient,
) -> None:
    t = mgmt.post("/v1/tenants", {"name": "acme"}).json()
    created = mgmt.post(
        "/v1/endpoints",
        {"tenant_id": t["id"], "url": "https://93.184.216.34/h", "ordering": ORDER_BY_CUSTOMER},
    ).json()
    assert created["ordering"] == ORDER_BY_CUSTOMER
    path = f"/v1/endpoints/{created['id']}"
    assert mgmt.patch(path, {"ordering": {"key": None}}).json()["ordering"] == {"key": None}
    assert mgmt.patch(path, {"clear_ordering": True}).json()["ordering"] is None
    assert mgmt.get(path).json()["ordering"] is None


def test_clearing_the_ordering_releases_what_was_held(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given an ordered endpoint whose receiver keeps failing, so events wait behind the head
    sink.behave("/stuck", statuses=[500])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/stuck"), ordering={"key": None})
    publish(db, t, [("x", 1), ("x", 2), ("x", 3)])
    pipeline.fanout()
    assert pipeline.states() == {"queued": 1, "held": 2}
    # When the ordering is cleared
    from hookline.management import endpoint_service
    from tests.support.operator import OPERATOR as OPERATOR_CALLER

    endpoint_service.update_endpoint(
        db, get_settings(), OPERATOR_CALLER, ep["id"], {"clear_ordering": True}
    )
    # Then nothing is held any longer: the held ones are due at once, unordered
    assert pipeline.states() == {"queued": 1, "pending": 2}
