"""Replays larger than one run of the replay function (docs/decisions/0021): a run near its
time limit hands off where it got to, the next run (the function invoked again, or in this
process locally) carries on, and the replay ends once with every selected delivery re-enqueued
exactly once; reconcile re-invokes a lost hand-off and fails a dead runner."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from hookline import replay as replay_service
from hookline.queues import DeliveryMessage
from hookline.replay import Continue, ReplayOptions, continuation, sweeping
from hookline.repositories import replay as replay_repo
from hookline.runtime import delivery_queues, replay_continuation, replay_invoker, reset_runtime
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"
INVOCATIONS = "/2015-03-31/functions/hookline-replay/invocations"


@pytest.fixture
def api(replays_api):
    """Replays are recorded but not run by the API (record_replay sets HOOKLINE_REPLAY_FUNCTION,
    as deployed); the tests run them."""
    return replays_api


def sweep(db: Any, start: Continue | None = None) -> dict[str, int]:
    """Reconcile's replay step as the runtime wires it (starting runs with `start` if given)."""
    settings = get_settings()
    return replay_service.sweep(
        db, start=start or replay_continuation(settings), groups=settings.config.group_names
    )


def record_replay(api, sink, monkeypatch, body: dict[str, Any]) -> str:
    """POST /v1/replays as deployed (the invocation goes to `sink`, nothing runs here)."""
    monkeypatch.setenv("HOOKLINE_REPLAY_FUNCTION", "hookline-replay")
    endpoint_url = get_settings().aws_endpoint_url
    monkeypatch.setenv("AWS_ENDPOINT_URL", sink.url(""))
    get_settings.cache_clear()
    created = api.post("/v1/replays", body)
    assert created.status == 202, created.body
    monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint_url)
    get_settings.cache_clear()
    reset_runtime()
    return str(created.json()["id"])


def dead_deliveries(api, db, count: int) -> list[str]:
    """`count` dead deliveries of one endpoint, oldest first."""
    tenant = api.post("/v1/tenants", {"name": "acme"}).json()
    endpoint = api.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": PUBLIC_URL}).json()
    ids = [
        api.post(f"/v1/endpoints/{endpoint['id']}/test").json()["delivery_id"] for _ in range(count)
    ]
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries SET state = 'dead', finished_at = now() WHERE id = ANY(%s)", (ids,)
        )
    return ids


def generations(db, ids: list[str]) -> dict[str, int]:
    with db.connection() as conn:
        rows = conn.execute(
            "SELECT id, enqueue_seq FROM deliveries WHERE id = ANY(%s)", (ids,)
        ).fetchall()
    return {r["id"]: r["enqueue_seq"] for r in rows}


def queued_messages(sqs) -> list[str]:
    """Every delivery id waiting in the standard queue (one entry per message)."""
    url = delivery_queues(get_settings()).url("standard")
    found: list[str] = []
    while True:
        got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=300).get(
            "Messages", []
        )
        if not got:
            return found
        found += [DeliveryMessage.parse(m["Body"])[0] for m in got]


def replay_audit(db) -> list[dict[str, Any]]:
    with db.connection() as conn:
        rows = conn.execute("SELECT * FROM audit_log WHERE action = 'replay' ORDER BY id")
        return [dict(r) for r in rows.fetchall()]


def batches(n: int) -> Callable[[], Callable[[], bool]]:
    """A run budget of `n` batches: the stand-in for a function's time running out."""

    def budget() -> Callable[[], bool]:
        left = [n]

        def keep_going() -> bool:
            left[0] -= 1
            return left[0] >= 0

        return keep_going

    return budget


def row(db, replay_id: str) -> dict[str, Any]:
    with db.connection() as conn:
        found = conn.execute("SELECT * FROM replays WHERE id = %s", (replay_id,)).fetchone()
    return dict(found)


def test_a_replay_bigger_than_one_run_continues_until_every_delivery_went_out_once(
    api, db, sqs, sink, monkeypatch
):
    # Given 25 dead deliveries and a replay of them recorded through the API
    ids = dead_deliveries(api, db, 25)
    before = generations(db, ids)
    replay_id = record_replay(api, sink, monkeypatch, {"since": "1h", "reason": "outage"})
    # When it runs with time for only two batches of three per run (locally: runs in-process)
    summary = replay_service.run_recorded_replay(
        db, delivery_queues(get_settings()), ReplayOptions(batch_size=3), replay_id,
        budget=batches(2),
    )  # fmt: skip
    # Then it took five runs and ended succeeded, counting across them
    done = api.get(f"/v1/replays/{replay_id}").json()
    assert (done["state"], done["runs"]) == ("succeeded", 5)
    assert (done["total"], done["done"]) == (25, 25)
    assert done["result"] == summary
    assert summary["selected"] == summary["enqueued"] == 25 and summary["skipped"] == {}
    assert summary["stopped_early"] is False and "not_reached" not in summary
    # and every delivery was re-enqueued exactly once, under its own id (its webhook-id)
    assert sorted(queued_messages(sqs)) == sorted(ids)
    assert generations(db, ids) == {i: seq + 1 for i, seq in before.items()}
    # and the audit log has the replay once, with its final result
    (entry,) = replay_audit(db)
    assert entry["id"] == done["audit_id"]
    assert entry["params"]["result"]["enqueued"] == 25


def test_deployed_each_run_invokes_the_next_and_a_duplicate_or_late_invoke_does_nothing(
    api, db, sqs, sink, monkeypatch
):
    from functions.replay.handler import lambda_handler

    ids = dead_deliveries(api, db, 10)
    replay_id = record_replay(
        api, sink, monkeypatch, {"delivery_ids": ids, "reason": "receiver was down"}
    )
    sink.received.clear()
    lambda_api = replace(get_settings(), aws_endpoint_url=sink.url(""))
    # When the first run has time for two batches of three
    first = replay_service.run_recorded_replay(
        db, delivery_queues(get_settings()), ReplayOptions(batch_size=3), replay_id,
        budget=batches(2), continue_elsewhere=replay_invoker(lambda_api, "hookline-replay"),
    )  # fmt: skip
    # Then it handed off after six, and invoked the function asynchronously for run 2
    assert first is not None and first["continued"] is True and first["enqueued"] == 6
    (invocation,) = sink.requests(INVOCATIONS)
    assert invocation.headers["x-amz-invocation-type"] == "Event"
    assert json.loads(invocation.body) == {"replay_id": replay_id, "run": 2}
    running = api.get(f"/v1/replays/{replay_id}").json()
    assert (running["state"], running["runs"], running["done"], running["total"]) == (
        "running", 1, 6, 10,
    )  # fmt: skip
    assert replay_audit(db) == []  # not yet: once, at the end
    # When the function receives that invocation, run 2 does the rest
    answer = lambda_handler(json.loads(invocation.body), LocalContext(function_name="replay"))
    assert answer["ok"] is True and answer["ran"] is True
    done = api.get(f"/v1/replays/{replay_id}").json()
    assert (done["state"], done["runs"], done["done"], done["total"]) == ("succeeded", 2, 10, 10)
    assert done["result"]["enqueued"] == 10
    # And a duplicate of that invocation, or a late first one, does nothing
    assert lambda_handler(json.loads(invocation.body), LocalContext())["ran"] is False
    assert lambda_handler({"replay_id": replay_id}, LocalContext())["ran"] is False
    assert sorted(queued_messages(sqs)) == sorted(ids)
    (entry,) = replay_audit(db)
    assert entry["params"]["result"]["enqueued"] == 10


def test_a_replay_that_would_run_forever_fails_at_the_cap_with_the_reason(
    api, db, sink, monkeypatch
):
    ids = dead_deliveries(api, db, 9)
    replay_id = record_replay(api, sink, monkeypatch, {"delivery_ids": ids, "reason": "r"})
    monkeypatch.setattr(continuation, "MAX_RUNS", 2)
    replay_service.run_recorded_replay(
        db, delivery_queues(get_settings()), ReplayOptions(batch_size=3), replay_id,
        budget=batches(1),
    )  # fmt: skip
    failed = api.get(f"/v1/replays/{replay_id}").json()
    assert (failed["state"], failed["runs"], failed["done"]) == ("failed", 2, 6)
    assert "stopped after 2 runs" in failed["result"]["error"]
    assert failed["result"]["not_reached"] == 3
    (entry,) = replay_audit(db)
    assert entry["params"]["result"]["enqueued"] == 6


def test_reconcile_fails_a_dead_runner_reinvokes_a_lost_hand_off_and_leaves_a_live_one(
    api, db, sink, monkeypatch
):
    # Given four replays recorded as deployed
    ids = dead_deliveries(api, db, 6)
    body = {"delivery_ids": ids, "reason": "r"}
    dead, live, lost, never = (record_replay(api, sink, monkeypatch, body) for _ in range(4))
    with db.connection() as conn:
        for replay_id in (dead, live, lost):
            assert replay_repo.claim_replay(conn, replay_id) is not None
        # one whose runner went quiet mid-run, one alive
        conn.execute(
            "UPDATE replays SET heartbeat_at = now() - %s WHERE id = %s",
            (sweeping.RUNNING_QUIET + timedelta(seconds=1), dead),
        )
        # one handed off to run 2, whose invocation never arrived
        assert replay_repo.hand_off(
            conn, lost, run=1, done=3, total=6,
            resume={"after": ids[2], "remaining": 3, "result": {
                "selector": "delivery_ids", "dry_run": False, "selected": 6, "enqueued": 3,
            }},
        )  # fmt: skip
        conn.execute(
            "UPDATE replays SET handed_off_at = now() - %s, heartbeat_at = now() - %s "
            "WHERE id = %s",
            (sweeping.HANDOFF_QUIET * 2, sweeping.RUNNING_QUIET * 2, lost),
        )
        # and one never started
        conn.execute(
            "UPDATE replays SET created_at = now() - %s WHERE id = %s",
            (sweeping.ACCEPTED_QUIET + timedelta(seconds=1), never),
        )
    sink.received.clear()
    # When reconcile runs (deployed: the replay function's API is the sink)
    monkeypatch.setenv("AWS_ENDPOINT_URL", sink.url(""))
    get_settings.cache_clear()
    repairs = sweep(db)
    # Then the dead runner and the never started are failed, saying why
    assert repairs == {"replays_failed": 2, "replays_continued": 1}
    assert row(db, dead)["state"] == "failed"
    assert "stopped reporting" in row(db, dead)["result"]["error"]
    assert "never started" in row(db, never)["result"]["error"]
    # and each has its audit entry, filed as its runner would have (requester, reason, the
    # request) with why it failed, and linked from the replay
    entries = {e["params"]["replay_id"]: e for e in replay_audit(db)}
    assert set(entries) == {dead, never}
    for replay_id in (dead, never):
        entry = entries[replay_id]
        assert entry["actor"] == row(db, replay_id)["requested_by"]
        assert entry["params"]["reason"] == "r"
        assert entry["params"]["request"]["delivery_ids"] == ids
        assert entry["params"]["result"]["error"] == row(db, replay_id)["result"]["error"]
        assert row(db, replay_id)["audit_id"] == entry["id"]
    # and the lost hand-off is invoked again for run 2, and is still running
    (invocation,) = sink.requests(INVOCATIONS)
    assert json.loads(invocation.body) == {"replay_id": lost, "run": 2}
    assert (row(db, lost)["state"], row(db, lost)["reinvoked"]) == ("running", 1)
    # and the live one is left alone
    assert row(db, live)["state"] == "running"
    # And a second sweep at once does not invoke it twice
    assert sweep(db) == {"replays_failed": 0, "replays_continued": 0}
    assert len(sink.requests(INVOCATIONS)) == 1


def test_a_lost_hand_off_reinvoked_in_vain_fails_with_the_reason(api, db, sink, monkeypatch):
    ids = dead_deliveries(api, db, 1)
    lost = record_replay(api, sink, monkeypatch, {"delivery_ids": ids, "reason": "r"})
    with db.connection() as conn:
        replay_repo.claim_replay(conn, lost)
        replay_repo.hand_off(
            conn, lost, run=1, done=0, total=1,
            resume={"after": None, "remaining": 1, "result": {
                "selector": "delivery_ids", "dry_run": False, "selected": 1, "enqueued": 0,
            }},
        )  # fmt: skip
        conn.execute(
            "UPDATE replays SET handed_off_at = now() - %s, reinvoked = %s WHERE id = %s",
            (sweeping.HANDOFF_QUIET * 2, sweeping.MAX_REINVOKES, lost),
        )
    assert sweep(db, start=lambda *_: None) == {
        "replays_failed": 1, "replays_continued": 0,
    }  # fmt: skip
    failed = row(db, lost)
    assert failed["state"] == "failed" and "next run never started" in failed["result"]["error"]
    assert failed["result"]["selected"] == 1  # the summary so far is kept


def test_the_reconcile_function_runs_the_replay_sweep(api, db, sink, monkeypatch):
    from functions.reconcile.handler import lambda_handler

    ids = dead_deliveries(api, db, 1)
    dead = record_replay(api, sink, monkeypatch, {"delivery_ids": ids, "reason": "r"})
    with db.connection() as conn:
        replay_repo.claim_replay(conn, dead)
        conn.execute(
            "UPDATE replays SET heartbeat_at = now() - %s WHERE id = %s",
            (sweeping.RUNNING_QUIET * 2, dead),
        )
    report = lambda_handler({"trigger": "test"}, LocalContext(function_name="reconcile"))
    assert report["repairs"]["replays_failed"] == 1
    assert row(db, dead)["state"] == "failed"


def test_a_refanout_bigger_than_one_run_creates_and_sends_each_missing_delivery_once(
    api, db, sqs, sink, monkeypatch
):
    import hookline

    # Given 7 events of a tenant with two endpoints, none fanned out (14 deliveries missing)
    tenant = api.post("/v1/tenants", {"name": "acme"}).json()
    for path in ("/a", "/b"):
        api.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": PUBLIC_URL + path})
    with db.connection() as conn, conn.transaction():
        for n in range(7):
            hookline.publish(conn, tenant_id=tenant["id"], type="order.created", payload={"n": n})
    replay_id = record_replay(
        api, sink, monkeypatch, {"since": "1h", "refanout": True, "reason": "restore"}
    )
    # When it runs three events at a time, with time for two steps per run
    summary = replay_service.run_recorded_replay(
        db, delivery_queues(get_settings()), ReplayOptions(batch_size=2, event_batch=3),
        replay_id, budget=batches(2),
    )  # fmt: skip
    # Then it continued over several runs and each missing delivery was made and sent once
    done = api.get(f"/v1/replays/{replay_id}").json()
    assert done["state"] == "succeeded" and done["runs"] > 3
    assert (done["total"], done["done"]) == (14, 14)
    assert summary is not None
    assert (summary["selected"], summary["created"], summary["enqueued"]) == (14, 14, 14)
    with db.connection() as conn:
        made = [r["id"] for r in conn.execute("SELECT id FROM deliveries").fetchall()]
    assert len(made) == 14
    assert sorted(queued_messages(sqs)) == sorted(made)
    assert len(replay_audit(db)) == 1


def test_the_consoles_synchronous_replay_stops_early_and_says_what_was_not_reached(api, db):
    from hookline.replay import run_replay

    # Given 5 dead deliveries, replayed through the function's console event (it answers
    # synchronously, so it cannot continue)
    ids = dead_deliveries(api, db, 5)
    doc = {"delivery_ids": ids, "requested_by": "ana", "reason": "r"}
    summary = run_replay(
        db, delivery_queues(get_settings()), doc, ReplayOptions(batch_size=2),
        keep_going=batches(1)(),
    )  # fmt: skip
    # Then it sent one batch and says the rest were not reached, and how to carry on
    assert (summary["enqueued"], summary["stopped_early"], summary["not_reached"]) == (2, True, 3)
    assert "run the same replay again" in summary["notes"][-1]
    (entry,) = replay_audit(db)
    assert entry["params"]["result"]["not_reached"] == 3
