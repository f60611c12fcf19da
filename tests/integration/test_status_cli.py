"""`hookline status`, `deliveries list|show|attempts|resend` against real Postgres and moto
SQS, on a pipeline brought into a known state by the real handlers. The commands are
management API requests run in this process (`status --pipeline` reads queues directly)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.settings import get_settings
from hookline_dev.cli import main
from tests.support import operator

pytestmark = pytest.mark.integration


@pytest.fixture
def cli(pipeline, capsys, monkeypatch, tmp_path) -> Callable[..., tuple[int, Any]]:
    """Run `hookline …`; (exit code, parsed JSON output or the text, stderr on failure)."""
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))

    def run(*argv: str) -> tuple[int, Any]:
        capsys.readouterr()
        code = main(list(argv))
        out = capsys.readouterr()
        if code != 0 and not out.out:
            return code, out.err
        return code, json.loads(out.out) if "--json" in argv else out.out

    return run


def publish(db: Database, tenant_id: str, n: int) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(
            conn, tenant_id=tenant_id, type="order.created", payload={"n": n}
        ).id


@pytest.fixture
def scene(pipeline, db, sink, sqs) -> dict[str, Any]:
    """Two delivered, two failed, two queued (messages on the queue), one event not fanned
    out yet, and one message in the standard group's DLQ."""
    sink.behave("/bad", statuses=[400])
    t = operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")["id"]
    ok = operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/ok"))
    bad = operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/bad"))
    events = [publish(db, t, 1), publish(db, t, 2)]
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 2, "failed": 2})
    events.append(publish(db, t, 3))
    pipeline.fanout()
    events.append(publish(db, t, 4))
    sqs.send_message(QueueUrl=pipeline.queues["standard"].dlq_url, MessageBody="poison")
    return {"tenant": t, "ok": ok, "bad": bad, "events": events}


def test_status_reports_states_outbox_backlog_queues_and_dlqs(cli, scene, db):
    # Given a reconcile report (when the reconcile migration is there)
    with db.connection() as conn:
        has_runs = conn.execute("SELECT to_regclass('reconcile_runs') IS NOT NULL AS t").fetchone()
        if has_runs["t"]:
            conn.execute(
                "INSERT INTO reconcile_runs (id, trigger, started_at, finished_at, unreconciled)"
                " VALUES ('rec_1', 'test', now(), now(), 2)"
            )
    # When the operator asks for the pipeline's status
    code, status = cli("status", "--pipeline", "--json")
    # Then every part is there
    assert code == 0
    assert status["deliveries"] == {
        "pending": 0, "queued": 2, "delivering": 0, "delivered": 2, "failed": 2, "dead": 0,
        "held": 0,
    }  # fmt: skip
    assert status["outbox"]["pending"] == 1
    assert status["outbox"]["oldest_pending_seconds"] >= 0
    groups = {g["group"]: g for g in status["groups"]}
    assert list(groups) == ["standard", "priority", "bulk"]
    standard = groups["standard"]
    assert (standard["backlog"], standard["pending"], standard["queued"]) == (2, 0, 2)
    assert standard["queue"] == {"visible": 2, "in_flight": 0, "delayed": 0}
    assert standard["dlq"] == 1
    assert groups["bulk"]["backlog"] == 0 and groups["bulk"]["dlq"] == 0
    assert status["dlq_total"] == 1
    assert any("standard DLQ holds 1" in note for note in status["attention"])
    if has_runs["t"]:
        assert status["last_reconcile"]["unreconciled"] == 2
        assert any("left 2 unreconciled" in note for note in status["attention"])
    # And the text form is a readable table
    code, text = cli("status", "--pipeline")
    assert code == 0
    assert "GROUP" in text and "DLQ" in text
    assert "queued 2" in text and "failed 2" in text


def test_status_without_a_reconcile_table_or_a_queue_still_answers(cli, scene, db, sqs, pipeline):
    # Given an older schema without reconcile_runs, and the bulk group's DLQ gone
    with db.connection() as conn:
        conn.execute("DROP TABLE IF EXISTS reconcile_runs")
    sqs.delete_queue(QueueUrl=pipeline.queues["bulk"].dlq_url)
    code, status = cli("status", "--pipeline", "--json")
    # Then the rest is reported, and what could not be read says why
    assert code == 0
    assert status["last_reconcile"] is None
    assert "no reconcile report yet" in status["attention"]
    bulk = next(g for g in status["groups"] if g["group"] == "bulk")
    assert bulk["dlq"] is None and "SQS" in bulk["error"]
    assert status["deliveries"]["failed"] == 2


def test_status_is_the_api_s_summary(cli, scene):
    code, status = cli("status", "--json")
    assert code == 0
    assert status["deliveries"]["failed"] == 2 and status["deliveries"]["queued"] == 2
    assert status["outbox_pending"] == 1 and status["endpoints_enabled"] == 2
    code, text = cli("status")
    assert "failed 2" in text and "1 waiting for fan-out" in text


def test_deliveries_list_filters_by_state_endpoint_event_and_time(cli, scene):
    code, failed = cli("deliveries", "list", "--state", "failed", "--json")
    assert code == 0
    failed = failed["items"]
    assert len(failed) == 2
    assert {d["state"] for d in failed} == {"failed"}
    assert {d["endpoint_id"] for d in failed} == {scene["bad"]["id"]}
    assert {d["last_status"] for d in failed} == {400}
    _, to_ok = cli("deliveries", "list", "--endpoint", scene["ok"]["id"], "--json")
    assert sorted(d["state"] for d in to_ok["items"]) == ["delivered", "delivered", "queued"]
    _, of_event = cli("deliveries", "list", "--event", scene["events"][2], "--json")
    assert {d["state"] for d in of_event["items"]} == {"queued"} and len(of_event["items"]) == 2
    _, recent = cli("deliveries", "list", "--since", "1h", "--limit", "1", "--json")
    [newest] = recent["items"]
    assert newest["event_id"] == scene["events"][2] and recent["next_cursor"]  # newest first
    _, future = cli("deliveries", "list", "--since", "2999-01-01T00:00:00Z", "--json")
    assert future == {"items": [], "next_cursor": None}
    code, err = cli("deliveries", "list", "--since", "yesterday", "--json")
    assert code == 1 and "is not a time" in err
    code, text = cli("deliveries", "list", "--state", "failed")
    assert "STATE" in text and "failed" in text


def test_deliveries_show_and_attempts(cli, scene):
    _, listed = cli("deliveries", "list", "--state", "failed", "--json")
    failed = listed["items"][0]
    code, shown = cli("deliveries", "show", failed["id"], "--json")
    assert code == 0
    assert shown == failed
    code, text = cli("deliveries", "show", failed["id"])
    assert "attempts" in text and "400" in text  # the attempts below the delivery
    for argv in (("deliveries", "attempts"), ("attempts",)):
        code, attempts = cli(*argv, failed["id"], "--json")
        assert code == 0
        [attempt] = attempts["items"]
        assert attempt["delivery_id"] == failed["id"] and attempt["status_code"] == 400
        assert attempt["duration_ms"] >= 0 and attempt["attempted_at"]
        assert json.loads(attempt["response_excerpt"]) == {"error": "nope"}
    code, err = cli("deliveries", "attempts", "dlv_missing", "--json")
    assert code == 1 and "no delivery dlv_missing" in err


def test_bulk_resend_sends_each_selected_delivery_once(cli, scene, pipeline, sink, db):
    # Given the failing endpoint is fixed
    sink.behave("/bad", statuses=[200])
    # When the operator resends every failed delivery to it
    code, summary = cli(
        "deliveries", "resend", "--endpoint", scene["bad"]["id"], "--state", "failed", "--json"
    )
    # Then both are enqueued, once each, and the summary says so
    assert code == 0
    assert (summary["selected"], summary["enqueued"], summary["failed"]) == (2, 2, [])
    resent = {r["delivery_id"] for r in summary["results"]}
    assert len(resent) == 2 and all(r["audit_id"] for r in summary["results"])

    def states_of_resent() -> set[str]:
        with db.connection() as conn:
            rows = conn.execute(
                "SELECT state FROM deliveries WHERE id = ANY(%s)", (list(resent),)
            ).fetchall()
        return {r["state"] for r in rows}

    pipeline.run_until(lambda: states_of_resent() == {"delivered"})
    sent = [r.headers["webhook-id"] for r in sink.requests("/bad")]
    for delivery_id in resent:
        _, attempts = cli("deliveries", "attempts", delivery_id, "--json")
        assert [a["status_code"] for a in attempts["items"]] == [400, 200]
        assert sent.count(delivery_id) == 2  # the failed try, then the resend: once
    # When ids are named, an unknown one is reported and the exit code says so
    one = next(iter(resent))
    code, text = cli("deliveries", "resend", one, "dlv_missing")
    assert code == 1
    assert "OUTCOME" in text and "no delivery dlv_missing" in text
    rows = dict(line.rsplit(None, 1) for line in text.split("\n\n")[0].splitlines()[1:])
    assert (rows["enqueued"], rows["failed"]) == ("1", "1")
    # And a delivery already queued again is not sent twice
    code, summary = cli("deliveries", "resend", one, "dlv_missing", "--json")
    assert code == 1
    assert (summary["selected"], summary["enqueued"]) == (2, 0)
    assert summary["skipped"] == {"in_flight": 1}
    assert summary["failed"] == [{"delivery_id": "dlv_missing", "error": "no delivery dlv_missing"}]
    # And neither ids nor filters is refused
    code, err = cli("deliveries", "resend")
    assert code == 1 and "give delivery ids" in err
