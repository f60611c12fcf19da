"""Replays through the API: recorded as a resource, run in the background (a thread locally,
the replay function invoked asynchronously on AWS), with progress and the final summary on
the resource; confined to the caller's tenant; the requester is the caller."""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import pytest

from hookline import replay as replay_service
from hookline.queues import DeliveryMessage
from hookline.replay import Continue, ReplayOptions, continuation, sweeping
from hookline.repositories import audit as audit_repo
from hookline.repositories import replay as replay_repo
from hookline.runtime import delivery_queues, replay_continuation, reset_runtime
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.support.management import as_tenant, principal_of

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"


@pytest.fixture
def api(replays_api):
    return replays_api


def sweep(db: Any, start: Continue | None = None) -> dict[str, int]:
    """Reconcile's replay step as the runtime wires it (starting runs with `start` if given)."""
    settings = get_settings()
    return replay_service.sweep(
        db, start=start or replay_continuation(settings), groups=settings.config.group_names
    )


def make_tenant(mgmt, name):
    return mgmt.post("/v1/tenants", {"name": name}).json()


def dead_delivery(mgmt, db, tenant_id):
    """An endpoint of the tenant with one delivery that died."""
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant_id, "url": PUBLIC_URL}).json()
    sent = mgmt.post(f"/v1/endpoints/{endpoint['id']}/test").json()
    with db.connection() as conn:
        conn.execute(
            "UPDATE deliveries SET state = 'dead', finished_at = now() WHERE id = %s",
            (sent["delivery_id"],),
        )
    return {"endpoint_id": endpoint["id"], **sent}


def state_of(db, delivery_id):
    with db.connection() as conn:
        row = conn.execute("SELECT state FROM deliveries WHERE id = %s", (delivery_id,)).fetchone()
    return row["state"]


def queued_delivery_ids(sqs):
    url = delivery_queues(get_settings()).url("standard")
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    return sorted(DeliveryMessage.parse(m["Body"])[0] for m in messages)


def finished(client, replay_id):
    assert replay_service.wait_for_local_replays(30)
    return client.get(f"/v1/replays/{replay_id}").json()


def replay_audit(db):
    with db.connection() as conn:
        return audit_repo.list_audit_entries(conn, action="replay")


def test_a_tenant_replays_its_own_deliveries_in_the_background(api, db, sqs):
    # Given a tenant with two dead deliveries, and a caller scoped to it
    tenant = make_tenant(api, "acme")
    first, second = dead_delivery(api, db, tenant["id"]), dead_delivery(api, db, tenant["id"])
    caller = as_tenant(api, db, tenant["id"])
    # When it asks for a replay of both
    ids = [first["delivery_id"], second["delivery_id"]]
    created = caller.post("/v1/replays", {"delivery_ids": ids, "reason": "receiver was down"})
    # Then it is accepted at once, with where to follow it
    assert created.status == 202, created.body
    replay = created.json()
    assert replay["id"].startswith("rpl_")
    assert created.headers["Location"] == f"/v1/replays/{replay['id']}"
    assert replay["state"] in ("accepted", "running", "succeeded")
    assert replay["requested_by"] == principal_of(tenant["id"])
    # and it finishes with the counts, the audit entry filed under the caller
    done = finished(caller, replay["id"])
    assert (done["state"], done["total"], done["done"]) == ("succeeded", 2, 2)
    assert done["result"]["enqueued"] == 2 and done["finished_at"]
    assert done["tenant_id"] == tenant["id"]
    (entry,) = replay_audit(db)
    assert entry["id"] == done["audit_id"]
    assert entry["actor"] == principal_of(tenant["id"])
    assert entry["params"]["reason"] == "receiver was down"
    # and the same deliveries (same ids: the webhook-id receivers dedupe on) go out again
    assert queued_delivery_ids(sqs) == sorted(ids)
    assert [state_of(db, i) for i in ids] == ["queued", "queued"]
    assert [r["id"] for r in caller.get("/v1/replays").json()["items"]] == [replay["id"]]


def test_a_tenant_cannot_replay_another_tenants_deliveries_events_or_endpoints(api, db):
    # Given tenant B's dead delivery, and a caller scoped to tenant A
    a, b = make_tenant(api, "a"), make_tenant(api, "b")
    own = dead_delivery(api, db, a["id"])
    theirs = dead_delivery(api, db, b["id"])
    caller = as_tenant(api, db, a["id"])
    # Then every way of naming B's things is answered as unknown, and nothing is recorded
    for body in (
        {"delivery_ids": [theirs["delivery_id"]]},
        {"delivery_ids": [own["delivery_id"], theirs["delivery_id"]]},
        {"event_ids": [theirs["event_id"]]},
        {"endpoint_id": theirs["endpoint_id"], "since": "1h"},
        {"since": "1h", "tenant_id": b["id"]},
    ):
        refused = caller.post("/v1/replays", {**body, "reason": "try"})
        assert refused.status == 404, (body, refused.body)
        assert refused.json()["detail"].startswith("no ")
        assert own["delivery_id"] not in refused.json()["detail"]
    assert api.get("/v1/replays").json()["items"] == []
    assert state_of(db, theirs["delivery_id"]) == "dead"
    # and B's replays are not A's to read
    theirs_replay = api.post(
        "/v1/replays", {"delivery_ids": [theirs["delivery_id"]], "reason": "ops"}
    ).json()
    assert caller.get(f"/v1/replays/{theirs_replay['id']}").status == 404
    assert caller.get("/v1/replays").json()["items"] == []


def test_a_tenant_window_replay_is_confined_to_its_tenant(api, db):
    a, b = make_tenant(api, "a"), make_tenant(api, "b")
    own, theirs = dead_delivery(api, db, a["id"]), dead_delivery(api, db, b["id"])
    caller = as_tenant(api, db, a["id"])
    created = caller.post("/v1/replays", {"since": "1h", "reason": "outage"})
    assert created.status == 202, created.body
    assert created.json()["request"]["tenant_id"] == a["id"]
    done = finished(caller, created.json()["id"])
    assert done["state"] == "succeeded" and done["result"]["enqueued"] == 1
    assert (state_of(db, own["delivery_id"]), state_of(db, theirs["delivery_id"])) == (
        "queued",
        "dead",
    )


def test_moving_a_dead_letter_queue_is_for_operators_only(api, db):
    tenant = make_tenant(api, "acme")
    caller = as_tenant(api, db, tenant["id"])
    refused = caller.post("/v1/replays", {"redrive_dlq": "standard", "reason": "drain"})
    assert refused.status == 403 and "operator" in refused.json()["detail"]
    allowed = api.post("/v1/replays", {"redrive_dlq": "standard", "reason": "drain"})
    assert allowed.status == 202, allowed.body
    assert finished(api, allowed.json()["id"])["state"] == "succeeded"


def test_a_dry_run_counts_and_sends_nothing(api, db, sqs):
    tenant = make_tenant(api, "acme")
    dead = dead_delivery(api, db, tenant["id"])
    created = api.post(
        "/v1/replays", {"event_ids": [dead["event_id"]], "dry_run": True, "reason": "how many?"}
    )
    done = finished(api, created.json()["id"])
    assert done["state"] == "succeeded"
    assert done["result"]["dry_run"] is True and done["result"]["would_enqueue"] == 1
    assert (done["total"], done["done"]) == (1, 1)
    assert state_of(db, dead["delivery_id"]) == "dead"
    assert queued_delivery_ids(sqs) == []
    assert replay_audit(db)[0]["params"]["request"]["dry_run"] is True


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"reason": "x"}, 400, "say what to replay with one selector"),
        ({"delivery_ids": ["dlv_1"], "since": "1h", "reason": "x"}, 400, "choose one selector"),
        ({"since": "yesterday-ish", "reason": "x"}, 400, "is not a time"),
        ({"since": "1h", "until": "2h", "reason": "x"}, 400, "bad window"),
        ({"since": "1h", "states": ["lost"], "reason": "x"}, 422, "states"),
        ({"delivery_ids": ["dlv_1"]}, 422, "reason: required"),
        ({"delivery_ids": ["dlv_1"], "reason": "x", "requested_by": "someone"}, 422, "unknown"),
        ({"redrive_dlq": "nope", "reason": "x"}, 400, "unknown tenant group"),
    ],
)
def test_a_bad_replay_request_is_a_clear_4xx_and_records_nothing(api, body, status, says):
    refused = api.post("/v1/replays", body)
    assert refused.status == status, refused.body
    assert says in refused.json()["detail"]
    assert api.get("/v1/replays").json()["items"] == []


def test_the_same_idempotency_key_returns_the_first_replay_and_runs_it_once(api, db):
    tenant = make_tenant(api, "acme")
    dead = dead_delivery(api, db, tenant["id"])
    body = {"delivery_ids": [dead["delivery_id"]], "reason": "once"}
    key = {"Idempotency-Key": "replay-once"}
    first = api.post("/v1/replays", body, headers=key)
    second = api.post("/v1/replays", body, headers=key)
    assert (first.status, second.status) == (202, 202)
    assert second.json()["id"] == first.json()["id"]
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.headers["Location"] == f"/v1/replays/{first.json()['id']}"
    assert finished(api, first.json()["id"])["state"] == "succeeded"
    assert len(api.get("/v1/replays").json()["items"]) == 1
    assert len(replay_audit(db)) == 1


def test_deployed_the_api_invokes_the_replay_function_asynchronously_which_runs_it(
    api, db, sqs, sink, moto_endpoint, monkeypatch
):
    from functions.replay.handler import lambda_handler

    # Given a deployment: the replay function's name is set (its Lambda API is a local server)
    tenant = make_tenant(api, "acme")
    dead = dead_delivery(api, db, tenant["id"])
    monkeypatch.setenv("HOOKLINE_REPLAY_FUNCTION", "hookline-replay")
    monkeypatch.setenv("AWS_ENDPOINT_URL", sink.url(""))
    get_settings.cache_clear()
    # When a replay is created
    created = api.post("/v1/replays", {"delivery_ids": [dead["delivery_id"]], "reason": "r"})
    assert created.status == 202, created.body
    replay_id = created.json()["id"]
    # Then the function was invoked once, asynchronously, with the replay's id — nothing ran here
    (invocation,) = sink.requests("/2015-03-31/functions/hookline-replay/invocations")
    assert invocation.headers["x-amz-invocation-type"] == "Event"
    assert json.loads(invocation.body) == {"replay_id": replay_id}
    assert api.get(f"/v1/replays/{replay_id}").json()["state"] == "accepted"

    # When the function receives that event, it runs the replay and records the result
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    get_settings.cache_clear()
    reset_runtime()
    answer = lambda_handler(json.loads(invocation.body), LocalContext(function_name="replay"))
    assert answer["ok"] is True and answer["ran"] is True and answer["enqueued"] == 1
    done = api.get(f"/v1/replays/{replay_id}").json()
    assert (done["state"], done["done"], done["audit_id"]) == ("succeeded", 1, answer["audit_id"])
    # and a second delivery of the same event (Lambda retries async events) does nothing
    again = lambda_handler(json.loads(invocation.body), LocalContext(function_name="replay"))
    assert again["ran"] is False
    assert len(replay_audit(db)) == 1


def test_a_replay_function_that_cannot_be_invoked_is_a_503_and_a_failed_replay(
    api, db, monkeypatch
):
    tenant = make_tenant(api, "acme")
    dead = dead_delivery(api, db, tenant["id"])
    monkeypatch.setenv("HOOKLINE_REPLAY_FUNCTION", "hookline-replay")
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")  # nothing listens there
    get_settings.cache_clear()
    refused = api.post("/v1/replays", {"delivery_ids": [dead["delivery_id"]], "reason": "r"})
    assert refused.status == 503, refused.body
    (replay,) = api.get("/v1/replays").json()["items"]
    assert replay["state"] == "failed" and "could not be started" in replay["result"]["error"]


def test_progress_is_reported_while_a_replay_runs(api, db, monkeypatch, sink, moto_endpoint):
    # Given three dead deliveries and a replay recorded (deployed: not run by the API)
    tenant = make_tenant(api, "acme")
    ids = [dead_delivery(api, db, tenant["id"])["delivery_id"] for _ in range(3)]
    monkeypatch.setenv("HOOKLINE_REPLAY_FUNCTION", "hookline-replay")
    monkeypatch.setenv("AWS_ENDPOINT_URL", sink.url(""))
    get_settings.cache_clear()
    replay_id = api.post("/v1/replays", {"delivery_ids": ids, "reason": "slowly"}).json()["id"]
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    get_settings.cache_clear()
    reset_runtime()

    # When the runner sends them one batch at a time, reporting every batch
    monkeypatch.setattr(continuation, "PROGRESS_EVERY_SECONDS", 0.0)
    seen = []

    def keep_going():
        shown = api.get(f"/v1/replays/{replay_id}").json()
        seen.append((shown["state"], shown["done"], shown["total"]))
        return True

    replay_service.run_recorded_replay(
        db,
        delivery_queues(get_settings()),
        ReplayOptions(batch_size=1),
        replay_id,
        keep_going=keep_going,
    )
    # Then the resource showed it running, with the total and the count done growing
    assert seen == [("running", 0, 3), ("running", 1, 3), ("running", 2, 3)]
    final = api.get(f"/v1/replays/{replay_id}").json()
    assert (final["state"], final["done"], final["total"]) == ("succeeded", 3, 3)


def test_a_replay_whose_runner_died_is_marked_failed(api, db, monkeypatch, sink):
    # Given two recorded replays that are not run here (deployed)
    tenant = make_tenant(api, "acme")
    dead = dead_delivery(api, db, tenant["id"])
    monkeypatch.setenv("HOOKLINE_REPLAY_FUNCTION", "hookline-replay")
    monkeypatch.setenv("AWS_ENDPOINT_URL", sink.url(""))
    get_settings.cache_clear()
    body = {"delivery_ids": [dead["delivery_id"]], "reason": "r"}
    running = api.post("/v1/replays", body).json()["id"]
    never = api.post("/v1/replays", body).json()["id"]
    # When one's runner claimed it then went quiet, and the other was never started
    with db.connection() as conn:
        assert replay_repo.claim_replay(conn, running) is not None
        conn.execute(
            "UPDATE replays SET heartbeat_at = now() - %s WHERE id = %s",
            (sweeping.RUNNING_QUIET + timedelta(seconds=1), running),
        )
        conn.execute(
            "UPDATE replays SET created_at = now() - %s WHERE id = %s",
            (sweeping.ACCEPTED_QUIET + timedelta(seconds=1), never),
        )
    # Then reconcile's sweep (decision 0021; reads no longer sweep) marks both failed
    assert api.get(f"/v1/replays/{running}").json()["state"] == "running"
    assert sweep(db) == {"replays_failed": 2, "replays_continued": 0}
    # and reading them shows why
    died = api.get(f"/v1/replays/{running}").json()
    lost = api.get(f"/v1/replays/{never}").json()
    assert died["state"] == "failed" and "stopped reporting" in died["result"]["error"]
    assert lost["state"] == "failed" and "never started" in lost["result"]["error"]
    assert died["finished_at"] and lost["finished_at"]
    assert [r["id"] for r in api.get("/v1/replays", state="failed").json()["items"]] == [
        never,
        running,
    ]
