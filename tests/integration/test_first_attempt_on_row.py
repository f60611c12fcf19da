"""A delivery's first attempt, when it delivers it soon after the delivery was made, is kept on
the delivery's row (decision 0109, migration 0050): no row of `attempts`, yet every reader of
attempts (the API, the delivery pages, the monitor, the console's charts, the archive) finds
it. Later, failed and late attempts stay rows of `attempts`. Real Postgres, moto SQS, a
loopback sink, the real fan-out, deliver and replay."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest

from hookline.db import Database
from hookline.repositories import api as api_repo
from hookline.repositories import console as console_repo
from hookline.repositories import delivery_log
from hookline.repositories import operational as operational_repo
from hookline.repositories.deliveries import AttemptRecord, claim_to_send, record_delivered
from tests.integration.test_reconcile import endpoint, publish, sql, tenant
from tests.support import operator
from tests.support.pipeline import Pipeline

pytestmark = pytest.mark.integration


@pytest.fixture
def pipeline(make_pipeline) -> Pipeline:
    # A failed attempt is retried at once.
    return make_pipeline(retry_schedule_seconds=[0, 0, 0])


def kept_in_attempts(db: Database, delivery_id: str) -> list[int]:
    """The ids of the delivery's rows of `attempts`."""
    rows = sql(db, "SELECT id FROM attempts WHERE delivery_id = %s ORDER BY id", (delivery_id,))
    return [r["id"] for r in rows]


def shown(db: Database, delivery_id: str) -> list[dict]:
    """The attempts as the API lists them, oldest first."""
    with db.connection() as conn:
        return api_repo.list_attempts(conn, None, delivery_id, None, 10)


def delivered(pipeline: Pipeline, db: Database, sink, path: str) -> tuple[str, dict]:
    """A tenant, an endpoint at `path` and one event published to it, delivered: the tenant
    and the delivery."""
    t = tenant(db)
    ep = endpoint(db, t, sink.url(path))
    publish(db, t)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    return t, pipeline.delivery(endpoint_id=ep["id"])


def monitor_stats(db: Database) -> dict[str, dict]:
    """The monitor's counts per endpoint over the last ten minutes."""
    with db.connection() as conn:
        rows = operational_repo.endpoint_attempt_stats(
            conn, now=datetime.now(UTC), window=timedelta(minutes=10),
            max_window=timedelta(minutes=10), after_attempts=3, error_rate=0.5,
            operational_types=[],
        )  # fmt: skip
    return {r["endpoint_id"]: r for r in rows}


def test_a_first_attempt_that_delivers_is_kept_on_the_row_and_read_everywhere(pipeline, db, sink):
    # Given an endpoint that answers with a header and a body
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/soon"))
    sink.behave("/soon", statuses=[200], body=b"thanks", headers={"x-seen": "yes"})
    publish(db, t)
    # When its delivery is delivered at the first try
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    # Then no row of `attempts` was written: the attempt is on the delivery's row
    assert kept_in_attempts(db, delivery["id"]) == []
    # And the API lists it, with an id, its status and its duration
    [listed] = shown(db, delivery["id"])
    assert listed["id"] > 0 and listed["status_code"] == 200
    assert listed["duration_ms"] >= 0 and listed["error_class"] is None
    # And the delivery page shows what the endpoint answered
    with db.connection() as conn:
        [page] = delivery_log.attempts(conn, delivery["id"], 10)
    assert page["id"] == listed["id"] and page["response_excerpt"] == "thanks"
    assert page["response_headers"]["x-seen"] == "yes"
    # And the monitor and the console's charts count it as a success
    stats = monitor_stats(db)[ep["id"]]
    assert (stats["attempts"], stats["failures"], stats["last_ok"]) == (1, 0, True)
    with db.connection() as conn:
        [hour] = console_repo.attempts_by_hour(conn)
        [latency] = console_repo.attempt_latency_by_hour(conn)
    assert (hour["attempts"], hour["succeeded"], latency["attempts"]) == (1, 1, 1)
    # And so does the endpoint's health, in the API and the portal, and its hourly chart
    now, deadline = datetime.now(UTC), timedelta(hours=72)
    with db.connection() as conn:
        health = operational_repo.endpoint_health_summary(
            conn, ep["id"], now=now, period=timedelta(hours=1), deadline=deadline
        )
        [bucket] = operational_repo.endpoint_health_buckets(
            conn, ep["id"], now=now, deadline=deadline
        )
    assert (health["attempts"], health["successes"]) == (1, 1)
    assert (bucket["attempts"], bucket["successes"]) == (1, 1)


def test_a_failed_first_attempt_and_the_retry_that_delivers_are_rows_of_attempts(
    pipeline, db, sink
):
    # Given an endpoint that fails once, then answers 200
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/flaky"))
    sink.behave("/flaky", statuses=[503, 200])
    publish(db, t)
    # When the retry delivers it
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    # Then both attempts are rows of `attempts`, listed in the order they were made
    ids = kept_in_attempts(db, delivery["id"])
    assert [a["status_code"] for a in shown(db, delivery["id"])] == [503, 200]
    assert [a["id"] for a in shown(db, delivery["id"])] == ids
    # And the monitor sees the failure, then the success that ended the streak
    stats = monitor_stats(db)[ep["id"]]
    assert (stats["attempts"], stats["failures"], stats["streak"]) == (2, 1, 0)


def test_a_first_attempt_made_long_after_its_delivery_is_a_row_of_attempts(pipeline, db, sink):
    # Given a queued delivery, claimed as the deliverer claims it
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/late"))
    publish(db, t)
    pipeline.fanout()
    delivery = pipeline.delivery(endpoint_id=ep["id"])
    with db.connection() as conn:
        claim = claim_to_send(
            conn, delivery["id"], delivery["enqueue_seq"], timedelta(minutes=30),
            datetime.now(UTC),
        )  # fmt: skip
        assert claim is not None
        # When its first attempt is made more than five minutes after the delivery was
        attempt = AttemptRecord(datetime.now(UTC) + timedelta(minutes=6), 12, 200, "ok", None)
        assert record_delivered(conn, claim.job, attempt) == claim.job.seq
    # Then it is a row of `attempts`, and the row holds none
    assert len(kept_in_attempts(db, delivery["id"])) == 1
    [row] = sql(db, "SELECT first_attempt_id FROM deliveries WHERE id = %s", (delivery["id"],))
    assert row["first_attempt_id"] is None
    assert [a["status_code"] for a in shown(db, delivery["id"])] == [200]


def test_a_replay_keeps_the_first_attempt_and_lists_its_own_after_it(pipeline, db, sink):
    # Given a delivery delivered at the first try, its attempt on its row
    _, delivery = delivered(pipeline, db, sink, "/again")
    [first] = shown(db, delivery["id"])
    # When an operator replays it and it is delivered again
    from hookline.management import delivery_service
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options
    from hookline.settings import get_settings

    settings = get_settings()
    resent = delivery_service.resend_delivery(
        db, operator.OPERATOR, delivery["id"],
        lambda doc: run_replay(db, delivery_queues(settings), doc, replay_options(settings)),
    )  # fmt: skip
    assert resent["enqueued"] == 1, resent
    pipeline.run_until(lambda: len(shown(db, delivery["id"])) == 2)
    # Then the first attempt is still listed first, as it was, and the replay's after it,
    # as a row of `attempts`
    listed = shown(db, delivery["id"])
    assert listed[0] == first
    assert listed[1]["id"] > first["id"] and kept_in_attempts(db, delivery["id"]) == [
        listed[1]["id"]
    ]


def test_the_archive_carries_the_first_attempt_then_a_replays(pipeline, db, sink):
    # Given a delivery delivered at the first try (its attempt on its row), then replayed and
    # delivered again (that attempt a row of `attempts`)
    _, delivery = delivered(pipeline, db, sink, "/archived")
    from hookline.management import delivery_service
    from hookline.replay import run_replay
    from hookline.runtime import delivery_queues, replay_options
    from hookline.settings import get_settings

    settings = get_settings()
    delivery_service.resend_delivery(
        db, operator.OPERATOR, delivery["id"],
        lambda doc: run_replay(db, delivery_queues(settings), doc, replay_options(settings)),
    )  # fmt: skip
    pipeline.run_until(lambda: len(shown(db, delivery["id"])) == 2)
    listed = shown(db, delivery["id"])
    # When the day's archive lines are selected
    from hookline.repositories import retention as retention_repo

    day = datetime.now(UTC).date()
    with db.connection() as conn, conn.transaction():
        bounds = retention_repo.day_bounds(conn, day)
        rows = list(retention_repo.archive_selection(conn, bounds, None, with_ids=True))
    # Then the event's line holds both attempts, as the API lists them, in their order, and
    # the selection counts them and names the delivery
    [row] = [x for x in rows if x["id"] == delivery["event_id"]]
    [archived] = json.loads(row["line"])["deliveries"]
    assert [
        (datetime.fromisoformat(a["attempted_at"]), a["status_code"], a["duration_ms"])
        for a in archived["attempts"]
    ] == [(a["attempted_at"], a["status_code"], a["duration_ms"]) for a in listed]
    assert (row["deliveries"], row["attempts"], row["delivery_ids"]) == (1, 2, [delivery["id"]])


def test_turned_off_for_a_rollback_the_first_attempts_move_to_attempts(pipeline, db, sink):
    # Given a delivery whose first attempt is on its row
    t, kept = delivered(pipeline, db, sink, "/back")
    [before] = shown(db, kept["id"])
    # When the rule is turned off, as before deploying a version from before it
    [moved] = sql(db, "SELECT hookline_first_attempts_off() AS n")
    # Then that attempt is a row of `attempts` under its id, listed once as before
    assert moved["n"] == 1
    assert kept_in_attempts(db, kept["id"]) == [before["id"]]
    assert shown(db, kept["id"]) == [before]
    # And a delivery recorded from then on gets a row of `attempts`, as that version reads
    publish(db, t, n=2)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2})
    [later] = [d for d in sql(db, "SELECT id FROM deliveries") if d["id"] != kept["id"]]
    assert len(kept_in_attempts(db, later["id"])) == 1
    # And turned on again, the next first attempt is on its row
    sql(db, "SELECT hookline_first_attempts_on()")
    publish(db, t, n=3)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    on_rows = sql(db, "SELECT count(*) AS n FROM deliveries WHERE first_attempt_id IS NOT NULL")
    assert on_rows == [{"n": 1}]
