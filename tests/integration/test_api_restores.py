"""Restores from the archive through the management API and through the replay function, on
real Postgres, moto S3 and SQS and a loopback sink: the events archived and dropped by
retention are put back and delivered again with the webhook-ids they had, the restore is
audited, and bad requests are refused (docs/decisions/0051)."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import boto3
import pytest

import hookline
from hookline.archive import S3Archive
from hookline.config import HooklineConfig
from hookline.replay import wait_for_local_replays
from hookline.retention import RetentionPolicy, apply_retention
from hookline.runtime import reset_runtime
from hookline.settings import get_settings
from hookline_dev.local.apigw import LocalContext
from tests.support import operator
from tests.support.management import OPERATOR, ManagementClient, as_tenant

pytestmark = pytest.mark.integration


@pytest.fixture
def window(now) -> dict[str, str]:
    """A restore window of two hours around the test's moment."""
    return {
        "since": (now - timedelta(hours=1)).isoformat(),
        "until": (now + timedelta(hours=1)).isoformat(),
    }


@pytest.fixture
def archive(pipeline, moto_endpoint, monkeypatch, tmp_path):
    """The pipeline's settings with an archive bucket on moto, and the API's operator."""
    s3 = boto3.client("s3", endpoint_url=moto_endpoint, region_name="us-east-1")
    name = f"archive-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    monkeypatch.setenv("HOOKLINE_ARCHIVE_BUCKET", name)
    monkeypatch.setenv("HOOKLINE_OPERATOR_PRINCIPALS", OPERATOR)
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    for var in ("HOOKLINE_REPLAY_FUNCTION", "HOOKLINE_LOCAL_MODE", "HOOKLINE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    get_settings.cache_clear()
    reset_runtime()
    yield S3Archive(s3, name)
    assert wait_for_local_replays(30), "a restore thread is still running"
    get_settings.cache_clear()
    reset_runtime()


@pytest.fixture
def mgmt(archive):
    from functions.api.handler import lambda_handler

    return ManagementClient(lambda_handler)


def archived_and_dropped(pipeline, db, sink, archive, now, n: int = 3) -> tuple[str, set[str]]:
    """A tenant whose `n` delivered events were archived and dropped by retention; the
    webhook-ids the sink saw."""
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/in"))
    with db.connection() as conn, conn.transaction():
        for i in range(n):
            hookline.publish(conn, tenant_id=t, type="a", payload={"n": i})
    pipeline.run_until(lambda: pipeline.states() == {"delivered": n})
    apply_retention(db, archive, RetentionPolicy(ledger_days=1), as_of=now + timedelta(days=2))
    assert rows(db, "SELECT id FROM events") == []
    return t, {r.headers["webhook-id"] for r in sink.requests("/in")}


def rows(db, sql: str, *params: object) -> list[dict]:
    with db.connection() as conn:
        return conn.execute(sql, params).fetchall()


def test_an_operator_restores_through_the_api_and_every_event_is_delivered_again(
    pipeline, db, sink, archive, mgmt, now, window
):
    # Given delivered events, archived and dropped
    t, first = archived_and_dropped(pipeline, db, sink, archive, now)
    # When an operator asks the API for a restore of their window
    answer = mgmt.post("/v1/restores", {"tenant_id": t, **window, "reason": "INC-42"})
    assert answer.status == 202, answer.text
    restore = answer.json()
    assert answer.headers["Location"] == f"/v1/restores/{restore['id']}"
    assert wait_for_local_replays(30)
    done = mgmt.get(f"/v1/restores/{restore['id']}").json()
    # Then it succeeded, and every event is delivered again with the webhook-id it had
    assert done["state"] == "succeeded", done
    assert (done["result"]["restored"], done["result"]["skipped"]) == (3, 0)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    webhook_ids = [r.headers["webhook-id"] for r in sink.requests("/in")]
    assert len(webhook_ids) == 6 and set(webhook_ids) == first
    # And it is audited with the operator as actor and the reason
    [audit] = rows(db, "SELECT id, actor, params FROM audit_log WHERE action = 'archive.restore'")
    assert (audit["id"], audit["actor"]) == (done["audit_id"], OPERATOR)
    assert audit["params"]["reason"] == "INC-42" and audit["params"]["restored"] == 3
    # And a second restore skips the events already back, counted
    again = mgmt.post("/v1/restores", {"tenant_id": t, **window, "reason": "again"}).json()
    assert wait_for_local_replays(30)
    result = mgmt.get(f"/v1/restores/{again['id']}").json()["result"]
    assert (result["restored"], result["skipped"]) == (0, 3)
    assert [r["id"] for r in mgmt.get("/v1/restores", tenant_id=t).json()["items"]] == [
        again["id"], restore["id"]
    ]  # fmt: skip


def test_the_api_refuses_a_backward_window_no_reason_tenants_and_unknown_tenants(
    pipeline, db, archive, mgmt, now, window
):
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    backward = {"tenant_id": t, "since": window["until"], "until": window["since"], "reason": "x"}
    refused = mgmt.post("/v1/restores", backward)
    assert refused.status == 400 and "since must be before until" in refused.json()["detail"]
    no_reason = mgmt.post("/v1/restores", {"tenant_id": t, **window})
    assert no_reason.status == 422
    assert [e["field"] for e in no_reason.json()["errors"]] == ["reason"]
    bad_time = mgmt.post("/v1/restores", {"tenant_id": t, "since": "yesterday", "until": "now",
                                          "reason": "x"})  # fmt: skip
    assert bad_time.status == 400 and "since" in bad_time.json()["detail"]
    unknown = mgmt.post("/v1/restores", {"tenant_id": "ten_nobody", **window, "reason": "x"})
    assert unknown.status == 404
    own = as_tenant(mgmt, db, t).post("/v1/restores", {"tenant_id": t, **window, "reason": "x"})
    assert own.status == 403 and "operator" in own.json()["detail"]
    assert as_tenant(mgmt, db, t).get("/v1/restores").status == 403
    assert rows(db, "SELECT id FROM restores") == []


def test_one_idempotency_key_makes_one_restore(pipeline, db, archive, mgmt, window):
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    body = {"tenant_id": t, **window, "reason": "once", "dry_run": True}
    key = {"Idempotency-Key": "restore-once"}
    first = mgmt.post("/v1/restores", body, headers=key)
    second = mgmt.post("/v1/restores", body, headers=key)
    assert first.status == second.status == 202
    assert first.json()["id"] == second.json()["id"]
    assert len(rows(db, "SELECT id FROM restores")) == 1


def test_a_dry_run_counts_restores_nothing_and_is_audited(
    pipeline, db, sink, archive, mgmt, now, window
):
    t, _ = archived_and_dropped(pipeline, db, sink, archive, now, n=2)
    made = mgmt.post("/v1/restores", {"tenant_id": t, **window, "reason": "look", "dry_run": True})
    assert wait_for_local_replays(30)
    done = mgmt.get(f"/v1/restores/{made.json()['id']}").json()
    assert done["state"] == "succeeded" and done["result"]["archived"] == 2
    assert done["result"]["restored"] == 0 and rows(db, "SELECT id FROM events") == []
    [audit] = rows(db, "SELECT params FROM audit_log WHERE action = 'archive.restore'")
    assert audit["params"]["dry_run"] is True


def test_a_restore_the_archive_cannot_serve_fails_visibly_and_is_audited(
    pipeline, db, archive, mgmt, monkeypatch, window
):
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    monkeypatch.setenv("HOOKLINE_ARCHIVE_BUCKET", "no-such-bucket")
    get_settings.cache_clear()
    reset_runtime()
    made = mgmt.post("/v1/restores", {"tenant_id": t, **window, "reason": "s3 down"}).json()
    assert wait_for_local_replays(30)
    done = mgmt.get(f"/v1/restores/{made['id']}").json()
    assert done["state"] == "failed" and "cannot read the archive" in done["result"]["error"]
    [audit] = rows(db, "SELECT params FROM audit_log WHERE action = 'archive.restore'")
    assert "cannot read the archive" in audit["params"]["error"]


def test_the_replay_function_restores_a_console_request_and_a_recorded_one(
    pipeline, db, sink, archive, mgmt, monkeypatch, moto_endpoint, now, window
):
    from functions.replay.handler import lambda_handler as replay_function

    # Given delivered events, archived and dropped
    t, first = archived_and_dropped(pipeline, db, sink, archive, now)
    request = {"tenant_id": t, **window, "reason": "INC-7", "requested_by": "ana@example.com"}
    # When the function is invoked with a restore request, as from the console
    answer = replay_function({"restore": request}, LocalContext(function_name="replay"))
    # Then it restores them, and they are delivered again with the same webhook-ids
    assert answer["ok"] and (answer["restored"], answer["skipped"]) == (3, 0), answer
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 3})
    webhook_ids = [r.headers["webhook-id"] for r in sink.requests("/in")]
    assert len(webhook_ids) == 6 and set(webhook_ids) == first
    [audit] = rows(db, "SELECT actor FROM audit_log WHERE action = 'archive.restore'")
    assert audit["actor"] == "ana@example.com"
    # And a restore the API records when deployed (the replay function's name set, its Lambda
    # API a local server; no bucket named: the API does not read it) is handed to the function
    monkeypatch.setenv("HOOKLINE_REPLAY_FUNCTION", "hookline-replay")
    monkeypatch.setenv("AWS_ENDPOINT_URL", sink.url(""))
    monkeypatch.delenv("HOOKLINE_ARCHIVE_BUCKET")
    get_settings.cache_clear()
    reset_runtime()
    made = mgmt.post("/v1/restores", {"tenant_id": t, **window, "reason": "INC-7 again"})
    assert made.status == 202, made.text
    (invocation,) = sink.requests("/2015-03-31/functions/hookline-replay/invocations")
    assert invocation.headers["x-amz-invocation-type"] == "Event"
    assert json.loads(invocation.body) == {"restore_id": made.json()["id"]}
    assert mgmt.get(made.headers["Location"]).json()["state"] == "accepted"
    # which runs it once, skipping what is back, and records the result on the restore
    monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
    monkeypatch.setenv("HOOKLINE_ARCHIVE_BUCKET", archive.bucket)
    get_settings.cache_clear()
    reset_runtime()
    event = json.loads(invocation.body)
    ran = replay_function(event, LocalContext(function_name="replay"))
    assert ran["ok"] and ran["ran"] and (ran["restored"], ran["skipped"]) == (0, 3)
    done = mgmt.get(made.headers["Location"]).json()
    assert (done["state"], done["audit_id"]) == ("succeeded", ran["audit_id"])
    again = replay_function(event, LocalContext(function_name="replay"))
    assert again == {"ok": True, "restore_id": made.json()["id"], "ran": False}
    # And a bad request is refused with the field named, nothing restored
    backward = {**request, "since": window["until"], "until": window["since"]}
    refused = replay_function({"restore": backward}, LocalContext(function_name="replay"))
    assert refused["ok"] is False and refused["error"]["type"] == "bad_request"
    assert "since must be before until" in refused["error"]["message"]
    no_reason = replay_function({"restore": {**request, "reason": " "}},
                                LocalContext(function_name="replay"))  # fmt: skip
    assert no_reason["ok"] is False and "reason is required" in no_reason["error"]["message"]


def test_reconcile_fails_a_restore_whose_run_died_and_audits_it(
    pipeline, db, archive, mgmt, window
):
    from hookline.runtime import build_reconciler

    # Given a restore whose run started half an hour ago and never reported, and a fresh one
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    dead, fresh = (
        mgmt.post("/v1/restores", {"tenant_id": t, **window, "reason": r}).json()["id"]
        for r in ("died", "fresh")
    )
    assert wait_for_local_replays(30)
    with db.connection() as conn:
        conn.execute(
            "UPDATE restores SET state = 'running', finished_at = NULL, result = NULL,"
            " started_at = now() - interval '30 minutes' WHERE id = %s", (dead,),
        )  # fmt: skip
        conn.execute(
            "UPDATE restores SET state = 'running', finished_at = NULL, result = NULL,"
            " started_at = now() WHERE id = %s", (fresh,),
        )  # fmt: skip
    # When reconcile runs
    report = build_reconciler(get_settings(), db).run(trigger="test")
    # Then the dead one is failed, with why and an audit entry; the fresh one is left running
    assert report.repairs["restores_failed"] == 1
    failed = mgmt.get(f"/v1/restores/{dead}").json()
    assert failed["state"] == "failed" and "restore again" in failed["result"]["error"]
    [audit] = rows(db, "SELECT params FROM audit_log WHERE id = %s", failed["audit_id"])
    assert audit["params"]["restore_id"] == dead and "error" in audit["params"]
    assert mgmt.get(f"/v1/restores/{fresh}").json()["state"] == "running"
