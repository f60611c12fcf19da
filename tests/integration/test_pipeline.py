"""Fan-out and delivery end to end: real Postgres, moto SQS (a queue and DLQ per tenant
group), the real handlers, and real HTTP subscribers on loopback whose every request is
checked with an independent Standard Webhooks verifier."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import jsonschema
import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.fanout import FanoutOptions, run_fanout
from hookline.operational.catalogue import BY_NAME
from hookline.queues import DeliveryQueues
from hookline.settings import Settings, get_settings
from tests.support import operator
from tests.support.signers import verify_standard

pytestmark = pytest.mark.integration


def tenant(db: Database, group: str = "standard") -> str:
    return operator.add_tenant(db, HooklineConfig(), name=f"t-{group}", group=group)["id"]


def endpoint(db: Database, tenant_id: str, url: str, **options) -> dict:
    return operator.add_endpoint(db, get_settings(), tenant_id=tenant_id, url=url, **options)


def publish(db: Database, tenant_id: str, type: str = "order.created", payload=None) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(
            conn, tenant_id=tenant_id, type=type, payload=payload or {"n": 1}
        ).id


def assert_signed(requests, secrets: list[str]) -> None:
    assert requests, "the subscriber received nothing"
    for request in requests:
        assert verify_standard(secrets, request.headers, request.body), request.headers


def test_an_event_reaches_every_matching_endpoint_signed(pipeline, db, sink):
    # Given a tenant with three endpoints: two want orders, one wants invoices only
    t = tenant(db)
    wants_all = endpoint(db, t, sink.url("/all"))
    wants_orders = endpoint(db, t, sink.url("/orders"), event_types=["order.*"])
    wants_invoices = endpoint(db, t, sink.url("/invoices"), event_types=["invoice.paid"])
    # When an order event is published and the pipeline runs
    event_id = publish(db, t, "order.created", {"id": 42})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    # Then the matching subscribers got it once, signed, with the payload and a stable id
    for path, ep in (("/all", wants_all), ("/orders", wants_orders)):
        [request] = sink.requests(path)
        assert json.loads(request.body) == {"id": 42}
        assert request.headers["content-type"] == "application/json"
        assert_signed([request], [ep["secret"]])
        delivery = pipeline.delivery(event_id=event_id, endpoint_id=ep["id"])
        assert request.headers["webhook-id"] == delivery["id"]
        assert delivery["attempt_count"] == 1
    assert sink.requests("/invoices") == []
    assert wants_invoices["id"]


def test_custom_headers_are_sent_and_cannot_override_the_signature(pipeline, db, sink):
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/h"), headers=["X-Team: payments"])
    publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    [request] = sink.requests("/h")
    assert request.headers["x-team"] == "payments"
    assert_signed([request], [ep["secret"]])
    with pytest.raises(hookline.errors.BadRequest, match="cannot be overridden"):
        endpoint(db, t, sink.url("/h2"), headers=["webhook-signature: forged"])


def test_a_failing_subscriber_is_retried_until_it_succeeds(pipeline, db, sink):
    # Given a subscriber that fails twice with 500 then recovers
    sink.behave("/flaky", statuses=[500, 500, 200])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/flaky"))
    publish(db, t)
    # When the pipeline runs (retries ride SQS delays of ~1 s in the test schedule)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1}, timeout=30)
    # Then three attempts were made with the same webhook-id, each one recorded
    requests = sink.requests("/flaky")
    assert len(requests) == 3
    assert len({r.headers["webhook-id"] for r in requests}) == 1
    assert_signed(requests, [ep["secret"]])
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    assert [a["status_code"] for a in pipeline.attempts(delivery["id"])] == [500, 500, 200]
    assert delivery["attempt_count"] == 3
    gaps = [b.at - a.at for a, b in itertools.pairwise(requests)]
    assert all(gap >= 0.9 for gap in gaps), gaps


def test_a_subscriber_that_times_out_is_recorded_and_retried(pipeline, db, sink):
    sink.behave("/slow", statuses=[200], delay=3.5)  # the test deliver timeout is 2 s
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/slow"))
    publish(db, t)
    pipeline.fanout()
    assert pipeline.deliver_once() == 1
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    [attempt] = pipeline.attempts(delivery["id"])
    assert attempt["error_class"] == "timeout" and attempt["status_code"] is None
    assert 1900 <= attempt["duration_ms"] < 3400
    assert delivery["state"] in ("queued", "pending") and delivery["last_error"] == "timeout"


def test_retry_after_on_429_is_honoured(pipeline, db, sink):
    # Given a subscriber that throttles once, asking for 2 s (the schedule says 1 s)
    sink.behave("/throttled", statuses=[429, 200], headers={"Retry-After": "2"})
    t = tenant(db)
    endpoint(db, t, sink.url("/throttled"))
    publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1}, timeout=30)
    first, second = sink.requests("/throttled")
    # Then the retry waited for what the subscriber asked (clamped to twice the schedule)
    assert 1.9 <= second.at - first.at < 4.5


def test_410_disables_the_endpoint_and_tells_the_tenant(pipeline, db, sink):
    # Given a tenant who subscribed to endpoint.disabled on a second endpoint
    sink.behave("/gone", statuses=[410])
    t = tenant(db)
    gone = endpoint(db, t, sink.url("/gone"), event_types=["order.*"])
    ops = endpoint(db, t, sink.url("/ops"), event_types=["endpoint.disabled"])
    publish(db, t)
    # When the subscriber answers 410 Gone
    pipeline.run_until(lambda: len(sink.requests("/ops")) == 1, timeout=30)
    # Then the delivery failed, the endpoint is disabled with a reason, and the tenant heard
    assert pipeline.delivery(endpoint_id=gone["id"])["state"] == "failed"
    with db.connection() as conn:
        row = conn.execute(
            "SELECT enabled, disabled_reason FROM endpoints WHERE id = %s", (gone["id"],)
        ).fetchone()
    assert row["enabled"] is False and "410" in row["disabled_reason"]
    notice = json.loads(sink.requests("/ops")[0].body)
    assert notice["endpoint_id"] == gone["id"]
    # with how to re-enable it, in the documented shape (decision 0068)
    assert f"/v1/endpoints/{gone['id']}/enable" in notice["how_to_reenable"]
    jsonschema.validate(notice, BY_NAME["endpoint.disabled"].schema)
    assert_signed(sink.requests("/ops"), [ops["secret"]])
    # And later events no longer go to it
    publish(db, t)
    pipeline.fanout()
    assert pipeline.states().get("failed") == 1
    assert len(sink.requests("/gone")) == 1


def test_other_4xx_fail_without_retry_unless_configured(pipeline, db, sink):
    sink.behave("/bad", statuses=[400, 200])
    sink.behave("/bad-retry", statuses=[400, 200])
    t = tenant(db)
    strict = endpoint(db, t, sink.url("/bad"))
    lenient = endpoint(db, t, sink.url("/bad-retry"), retry_on_4xx=True)
    publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"failed": 1, "delivered": 1}, timeout=30)
    assert pipeline.delivery(endpoint_id=strict["id"])["last_status"] == 400
    assert len(sink.requests("/bad")) == 1
    assert pipeline.delivery(endpoint_id=lenient["id"])["attempt_count"] == 2


def test_a_delivery_past_its_deadline_is_dead_with_the_reason(pipeline, db, sink):
    sink.behave("/down", statuses=[503])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/down"))
    publish(db, t)
    pipeline.fanout()
    with db.connection() as conn:  # the deadline is close: the next retry would fall past it
        conn.execute("UPDATE deliveries SET deadline_at = now() + interval '0.5 seconds'")
    pipeline.deliver_once()
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    assert delivery["state"] == "dead"
    assert "deadline passed" in delivery["last_error"] and "503" in delivery["last_error"]


def test_a_capped_endpoint_never_sees_more_than_its_cap_while_others_flow(pipeline, db, sink):
    # Given a slow endpoint capped at 2 and a fast one, 12 events for each
    slow_behaviour = sink.behave("/capped", delay=0.4)
    t = tenant(db)
    endpoint(db, t, sink.url("/capped"), event_types=["slow.*"], max_concurrency=2)
    endpoint(db, t, sink.url("/fast"), event_types=["fast.*"])
    for i in range(12):
        publish(db, t, "slow.thing", {"i": i})
        publish(db, t, "fast.thing", {"i": i})
    # When the standard group's event source runs 4 batches at once
    started = time.monotonic()
    with pipeline.running("standard"):
        pipeline.run_until(lambda: len(sink.requests("/fast")) == 12, timeout=30)
        fast_done = time.monotonic() - started
        pipeline.run_until(lambda: pipeline.states() == {"delivered": 24}, timeout=60)
    # Then the capped endpoint never had more than 2 requests in flight, and the fast one
    # finished long before the slow one could have (12 x 0.4 s / 2 = 2.4 s at best)
    assert slow_behaviour.max_in_flight <= 2
    assert slow_behaviour.max_in_flight == 2
    assert len(sink.requests("/capped")) == 12
    with db.connection() as conn:
        attempts = conn.execute("SELECT count(*) AS n FROM attempt_log").fetchone()["n"]
    assert attempts == 24  # deferrals are not attempts
    assert fast_done < 10


def wait_for(condition: Callable[[], object], timeout: float) -> None:
    """Wait while the running event sources work (without delivering in the foreground)."""
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_flooded_group_does_not_delay_another_group(pipeline, db, sink, sqs):
    # Given the bulk group flooded: a backlog of 1,000 deliveries to a slow subscriber (1 s per
    # request), every one of its concurrent batches busy. (1,000, not 5,000: moto's SendMessage
    # costs grow with queue depth, see docs/testing.md; the isolation shown does not depend on
    # the size.) The bulk group works 2 batches of 10 at once, so it can finish at most ~20
    # deliveries a second: half the backlog takes 25 s or more.
    sink.behave("/bulk", delay=1.0)
    bulk_tenant = tenant(db, "bulk")
    endpoint(db, bulk_tenant, sink.url("/bulk"), max_concurrency=50)
    with db.connection() as conn, conn.transaction():
        for i in range(1000):
            hookline.publish(conn, tenant_id=bulk_tenant, type="bulk.item", payload={"i": i})
    pipeline.fanout()
    assert pipeline.queue_depth(pipeline.queues["bulk"].url) == 1000
    vip = tenant(db, "priority")
    endpoint(db, vip, sink.url("/vip"))
    with pipeline.running("bulk", "priority"):
        wait_for(lambda: sink.requests("/bulk"), timeout=30)
        # When a priority event arrives while the flood is being worked on
        publish(db, vip, "vip.order")
        pipeline.fanout()
        wait_for(lambda: sink.requests("/vip"), timeout=20)
        bulk_done_first = len(sink.requests("/bulk"))
    # Then it was delivered ahead of the backlog, not behind it: with one shared queue it would
    # wait for (nearly) all 1,000 bulk deliveries. Counted, not timed, so a loaded machine
    # cannot make it flaky (docs/testing.md).
    assert sink.requests("/vip"), "the priority event was not delivered"
    assert bulk_done_first < 500, bulk_done_first


def test_a_poison_message_ends_in_the_dead_letter_queue(pipeline, sqs):
    # Given a message the deliver function cannot handle at all
    queues = pipeline.queues["standard"]
    sqs.send_message(QueueUrl=queues.url, MessageBody="this is not a delivery")
    # When SQS delivers it max_receive_count (2) times, each a failure
    deadline = time.monotonic() + 15
    while pipeline.queue_depth(queues.dlq_url) == 0 and time.monotonic() < deadline:
        pipeline.deliver_once("standard")
        time.sleep(0.2)
    # Then redrive moved it to the group's DLQ
    [message] = sqs.receive_message(QueueUrl=queues.dlq_url, WaitTimeSeconds=1)["Messages"]
    assert message["Body"] == "this is not a delivery"
    assert pipeline.queue_depth(queues.url) == 0


def test_a_duplicate_queue_message_is_delivered_once(pipeline, db, sink):
    # Given a delivery whose queue message SQS hands out twice (at-least-once)
    t = tenant(db)
    endpoint(db, t, sink.url("/once"))
    publish(db, t)
    pipeline.fanout()
    url = pipeline.queues["standard"].url
    [message] = pipeline.sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    pipeline.sqs.send_message(QueueUrl=url, MessageBody=message["Body"])
    pipeline.sqs.change_message_visibility(
        QueueUrl=url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0
    )
    # When both copies are consumed
    pipeline.run_until(
        lambda: pipeline.queue_depth(url) == 0 and pipeline.states() == {"delivered": 1}
    )
    # Then the subscriber saw it once
    assert len(sink.requests("/once")) == 1


def test_two_fanouts_at_once_create_each_delivery_exactly_once(pipeline, db, sink, sqs):
    # Given 1,000 events of tenants in the three groups, each tenant with an endpoint
    tenants = [tenant(db, group) for group in ("standard", "priority", "bulk")]
    for t in tenants:
        endpoint(db, t, sink.url(f"/{t}"))
    with db.connection() as conn, conn.transaction():
        for i in range(1000):
            hookline.publish(conn, tenant_id=tenants[i % 3], type="x.y", payload={"i": i})
    settings = Settings.from_env()
    queues = DeliveryQueues(sqs, pipeline.config)
    options = FanoutOptions(batch_size=50, enqueue_batch=50)
    # When two fan-outs run side by side
    with ThreadPoolExecutor(2) as pool:
        reports = list(
            pool.map(
                lambda _: run_fanout(Database(settings.database_url), queues, options), range(2)
            )
        )
    # Then each (event, endpoint) has one delivery, each enqueued once, and both fan-outs worked
    assert sum(r.deliveries_created for r in reports) == 1000
    assert sum(r.enqueued for r in reports) == 1000
    assert all(r.events > 0 for r in reports)
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM deliveries").fetchone()["n"] == 1000
        assert (
            conn.execute("SELECT count(*) AS n FROM outbox WHERE fanned_out_at IS NULL").fetchone()[
                "n"
            ]
            == 0
        )
    assert sum(pipeline.queue_depth(q.url) for q in pipeline.queues.values()) == 1000


def test_rotating_a_secret_signs_with_both_during_the_overlap(pipeline, db, sink):
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/rot"))
    rotated = operator.rotate_endpoint_secret(db, get_settings(), ep["id"])
    publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    [request] = sink.requests("/rot")
    signatures = request.headers["webhook-signature"].split(" ")
    assert len(signatures) == 2
    assert verify_standard([ep["secret"]], request.headers, request.body)
    assert verify_standard([rotated["secret"]], request.headers, request.body)


def test_endpoint_urls_are_checked_when_saved(db, monkeypatch):
    monkeypatch.delenv("HOOKLINE_ALLOW_PRIVATE_TARGETS", raising=False)
    settings = Settings.from_env({"DATABASE_URL": "x"})
    t = tenant(db)
    for url in (
        "http://example.com/hook",
        "https://127.0.0.1/hook",
        "https://169.254.169.254/latest",
        "https://[::1]/x",
        "https://user:pw@example.com/",
    ):
        with pytest.raises(hookline.errors.UnsafeURL):
            operator.add_endpoint(db, settings, tenant_id=t, url=url)
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) AS n FROM endpoints").fetchone()["n"] == 0


def test_a_crashed_worker_cannot_leak_an_endpoint_slot(pipeline, db, sink):
    # Given an endpoint with cap 1 whose only slot is held by a worker that died
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/leak"), max_concurrency=1)
    held = pipeline.hold_slot(ep, seconds=1)
    publish(db, t)
    # When the lease runs out, the next delivery gets the slot
    pipeline.run_until(lambda: pipeline.states().get("delivered") == 1, timeout=20)
    assert len(sink.requests("/leak")) == 1
    # nobody finished it: queued, its claim run out
    assert pipeline.delivery(id=held)["state"] == "queued"


def test_a_rate_limited_endpoint_is_paced(pipeline, db, sink):
    t = tenant(db)
    endpoint(db, t, sink.url("/paced"), rate_limit="2/s", max_concurrency=10)
    for i in range(6):
        publish(db, t, payload={"i": i})
    with pipeline.running("standard"):
        pipeline.run_until(lambda: len(sink.requests("/paced")) == 6, timeout=30)
    times = sorted(r.at for r in sink.requests("/paced"))
    # burst of 2, then 2 per second: 6 requests need at least ~2 s
    assert times[-1] - times[0] >= 1.8


def test_an_endpoint_failing_for_days_is_disabled_and_the_tenant_told(pipeline, db, sink):
    # Given an endpoint that has been failing for 6 days (the limit is 5)
    sink.behave("/broken", statuses=[500])
    t = tenant(db)
    broken = endpoint(db, t, sink.url("/broken"), event_types=["order.*"])
    ops = endpoint(db, t, sink.url("/ops"), event_types=["endpoint.disabled"])
    with db.connection() as conn:
        conn.execute(
            "UPDATE endpoints SET failing_since = now() - interval '6 days' WHERE id = %s",
            (broken["id"],),
        )
    # When it fails once more
    publish(db, t)
    pipeline.run_until(lambda: len(sink.requests("/ops")) == 1, timeout=30)
    # Then it is disabled with the reason, and the tenant got endpoint.disabled
    with db.connection() as conn:
        row = conn.execute(
            "SELECT enabled, disabled_reason FROM endpoints WHERE id = %s", (broken["id"],)
        ).fetchone()
    assert row == {"enabled": False, "disabled_reason": "failing continuously for 5 days"}
    notice = json.loads(sink.requests("/ops")[0].body)
    assert notice["endpoint_id"] == broken["id"] and "5 days" in notice["reason"]
    assert_signed(sink.requests("/ops"), [ops["secret"]])


def test_a_success_ends_the_failure_streak(pipeline, db, sink):
    sink.behave("/recovering", statuses=[500, 200])
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/recovering"))
    publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1}, timeout=30)
    with db.connection() as conn:
        row = conn.execute(
            "SELECT enabled, failing_since FROM endpoints WHERE id = %s", (ep["id"],)
        ).fetchone()
    assert row == {"enabled": True, "failing_since": None}


def test_a_cookie_set_by_one_endpoint_is_never_sent_to_another(pipeline, db, sink):
    # Given two tenants' endpoints on the same host, the first answering with Set-Cookie
    sink.behave("/sets-cookie", headers={"Set-Cookie": "session=tenant-a-secret; Path=/"})
    a, b = tenant(db), tenant(db, "standard")
    endpoint(db, a, sink.url("/sets-cookie"))
    publish(db, a)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    endpoint(db, b, sink.url("/other"))
    publish(db, b)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    # Then no later request carries the cookie
    assert all("cookie" not in r.headers for r in sink.requests())
    assert len(sink.requests()) == 2


def test_a_worker_whose_claim_ran_out_cannot_overwrite_the_run_that_took_over(pipeline, db, sink):
    from datetime import UTC, datetime, timedelta

    from hookline.repositories import deliveries as repo
    from hookline.repositories.deliveries import Finish

    def utcnow() -> datetime:
        return datetime.now(UTC)

    # Given a delivery claimed by worker A, whose lease then ran out (A is slow, not dead)
    t = tenant(db)
    endpoint(db, t, sink.url("/late"), max_concurrency=1)
    publish(db, t)
    pipeline.fanout()
    queued = pipeline.delivery()
    with db.connection() as conn:
        claim_a = repo.claim_to_send(
            conn, queued["id"], queued["enqueue_seq"], timedelta(milliseconds=1), utcnow()
        )
        assert claim_a is not None and claim_a.wait_seconds == 0  # claimed, slot taken
        a = claim_a.job
    time.sleep(0.05)
    # And worker B took it over from the redelivered message, and holds the endpoint's slot
    with db.connection() as conn:
        claim_b = repo.claim_to_send(
            conn, queued["id"], queued["enqueue_seq"], timedelta(minutes=1), utcnow()
        )
        assert claim_b is not None and claim_b.wait_seconds == 0
        b = claim_b.job
    # When A finishes late and says "delivered"
    with db.connection() as conn:
        assert repo.finish(conn, a, Finish("delivered", True, 200, None)) is None
    # Then B's run stands: still delivering, its slot still held (the cap of 1 holds)
    assert pipeline.delivery()["state"] == "delivering"
    assert pipeline.slots() == [queued["id"]]
    # And B's outcome is the one that counts, and frees the slot
    with db.connection() as conn:
        assert repo.finish(conn, b, Finish("failed", True, 400, "HTTP 400")) is not None
    assert pipeline.delivery()["state"] == "failed"
    assert pipeline.slots() == []


def test_an_endpoint_url_httpx_cannot_parse_is_a_failed_attempt_not_a_crash(pipeline, db, sink):
    # Given an endpoint whose stored URL httpx refuses to parse (saved before today's checks)
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/fine"))
    with db.connection() as conn:
        conn.execute("UPDATE endpoints SET url = 'http://0177.0.0.1/x' WHERE id = %s", (ep["id"],))
    publish(db, t)
    # When it is delivered
    pipeline.run_until(lambda: bool(pipeline.states()) and pipeline.delivery()["attempt_count"])
    # Then the attempt is recorded with the reason, and the delivery waits for a retry
    delivery = pipeline.delivery()
    assert [a["error_class"] for a in pipeline.attempts(delivery["id"])] == ["invalid_url"]
    assert delivery["state"] in ("queued", "pending") and delivery["last_error"] == "invalid_url"


class CountingDatabase(Database):
    """A database that counts the connections its callers take (one per statement here)."""

    checkouts = 0

    def connection(self):  # type: ignore[no-untyped-def]
        self.checkouts += 1
        return super().connection()


def test_a_fanout_that_drains_the_outbox_stops_without_an_empty_round(pipeline, db, sink, sqs):
    # Given three events of a tenant with one endpoint, fewer than a batch
    t = tenant(db)
    endpoint(db, t, sink.url("/drain"))
    for _ in range(3):
        publish(db, t)
    counting = CountingDatabase(Settings.from_env().database_url)
    # When one fan-out runs
    report = run_fanout(counting, DeliveryQueues(sqs, pipeline.config), FanoutOptions())
    counting.close()
    # Then all three are fanned out and enqueued in one round of one statement (fan out and
    # claim what came due), with no lag statement for a drained outbox
    assert (report.events, report.deliveries_created, report.enqueued) == (3, 3, 3)
    assert counting.checkouts == 1
