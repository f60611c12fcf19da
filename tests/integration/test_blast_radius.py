"""One event never stalls another past the fan-out either (decision 0059): a body the
deliverer cannot build is that delivery's failed attempt, with its reason, while the rest of
the batch is delivered; the reconciler runs each step on its own, so one step's exception is
an error of its report and the other repairs still happen."""

from __future__ import annotations

import re
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.management import endpoint_service
from hookline.management.access import OPERATOR, Caller
from hookline.repositories.ledger import NewEvent, store_event
from hookline.runtime import build_reconciler, reset_runtime
from hookline.settings import get_settings
from tests.support import operator
from tests.support.console import ConsoleClient, text
from tests.support.pipeline import Pipeline
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

DEEP = b"[" * 3000 + b"]" * 3000
TRANSFORM = {"InputPathsMap": {"a": "$.payload"}, "InputTemplate": '{"got": <a>}'}


def store_deep(db: Database, tenant_id: str) -> str:
    """The probe's 3,000-deep body as stored before bodies were bounded at receive."""
    with db.connection() as conn:
        event = NewEvent(
            tenant_id=tenant_id, origin="publish", type="probe.deep", dedupe_key="deep",
            payload=DEEP, content_type="text/plain",
        )  # fmt: skip
        return store_event(conn, event).id


def publish(db: Database, tenant_id: str, payload: dict[str, Any]) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="invoice.paid", payload=payload).id


def test_a_body_that_cannot_be_built_is_a_failed_attempt_and_the_batch_delivers(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given tenant A's endpoint with an input transformer, tenant B's plain endpoint, and
    # A's deep event beside B's ordinary one
    config = HooklineConfig()
    a = operator.add_tenant(db, config, name="prober", group="standard")["id"]
    b = operator.add_tenant(db, config, name="bystander", group="standard")["id"]
    operator.add_endpoint(
        db, get_settings(), tenant_id=a, url=sink.url("/a"), input_transformer=TRANSFORM
    )
    operator.add_endpoint(db, get_settings(), tenant_id=b, url=sink.url("/b"))
    deep = store_deep(db, a)
    publish(db, b, {"amount": 1})
    # When the pipeline delivers them (one SQS batch)
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1, "failed": 1})
    # Then B's event reached B, and A's delivery failed with one recorded attempt naming why
    # (the deep payload is absent from the event's document: decision 0060)
    assert len(sink.requests("/b")) == 1
    assert sink.requests("/a") == []
    failed = pipeline.delivery(event_id=deep)
    [attempt] = pipeline.attempts(failed["id"])
    assert attempt["error_class"].startswith("transform: $.payload (<a>) is not in the event")
    assert "deeper than 64 levels" in attempt["error_class"]
    assert failed["attempt_count"] == 1 and failed["last_error"] == attempt["error_class"]


def test_a_step_that_raises_is_an_error_of_the_report_and_the_others_still_run(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given an event waiting for fan-out, and a reconciler whose replay sweep raises
    t = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    operator.add_endpoint(db, get_settings(), tenant_id=t, url=sink.url("/r"))
    publish(db, t, {"amount": 1})
    reconciler = build_reconciler(get_settings(), db)

    def sweep() -> dict[str, int]:
        raise RuntimeError("the replay table is unreadable")

    reconciler.sweep_replays = sweep
    # When it runs
    report = reconciler.run(trigger="test")
    # Then the failing step is named in the report's errors, counted as unreconciled...
    assert report.findings["errors"] == ["replays: RuntimeError: the replay table is unreadable"]
    assert report.unreconciled >= 1
    # ...and the steps after it ran: the fan-out enqueued the event's delivery, the checks
    # were made, and the report was stored
    assert report.repairs["enqueued"] == 1
    assert "dlq_depth" in report.findings
    with db.connection() as conn:
        stored = conn.execute("SELECT id FROM reconcile_runs WHERE id = %s", (report.id,))
        assert stored.fetchone() is not None
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})


def test_a_late_costly_event_is_quarantined_and_the_reconciler_repairs_the_rest(
    pipeline: Pipeline, db: Database, sink: Sink
) -> None:
    # Given tenant A's event over its filter budget (200 prefixes over 5,000 strings:
    # decision 0060) and tenant B's event, both late for fan-out, and a content filter on
    # each tenant's endpoint
    config = HooklineConfig()
    a = operator.add_tenant(db, config, name="prober", group="standard")["id"]
    b = operator.add_tenant(db, config, name="bystander", group="standard")["id"]
    anything = {"payload": {"amount": [{"exists": True}]}}
    prefixes = {"payload": {"x": [{"prefix": f"p{i}"} for i in range(200)]}}
    operator.add_endpoint(db, get_settings(), tenant_id=a, url=sink.url("/a"),
                          content_filter=prefixes)  # fmt: skip
    operator.add_endpoint(db, get_settings(), tenant_id=b, url=sink.url("/b"),
                          content_filter=anything)  # fmt: skip
    costly = publish(db, a, {"x": ["y"] * 5000})
    publish(db, b, {"amount": 1})
    with db.connection() as conn:
        conn.execute("UPDATE outbox SET created_at = now() - interval '1 hour'")
    # When the reconciler runs
    report = build_reconciler(get_settings(), db).run(trigger="test")
    # Then its first step fanned both out: B's delivery is made, A's pair quarantined
    assert report.repairs["late_outbox_fanned_out"] == 2
    assert report.repairs["late_outbox_deliveries_created"] == 1
    assert report.findings["fanout_quarantined"] == 1
    assert "errors" not in report.findings
    with db.connection() as conn:
        [row] = conn.execute("SELECT event_id, stage FROM fanout_quarantine").fetchall()
    assert (row["event_id"], row["stage"]) == (costly, "fanout")
    # And B's event is delivered
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/b")) == 1


def test_the_console_shows_a_quarantined_pair_and_retries_it_once_fixed(
    pipeline: Pipeline, db: Database, sink: Sink, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    # Given tenant A's event over its filter budget (decision 0060), quarantined by the
    # fan-out against A's filtered endpoint
    monkeypatch.setenv("HOOKLINE_LOCAL_MODE", "1")
    monkeypatch.setenv("HOOKLINE_LOCAL_KEY_FILE", str(tmp_path / "master.key"))
    get_settings.cache_clear()
    reset_runtime()
    from functions.console.handler import lambda_handler

    console = ConsoleClient(lambda_handler)
    a = operator.add_tenant(db, HooklineConfig(), name="prober", group="standard")["id"]
    endpoint = operator.add_endpoint(
        db, get_settings(), tenant_id=a, url=sink.url("/a"),
        content_filter={"payload": {"x": [{"prefix": f"p{i}"} for i in range(200)]}},
    )  # fmt: skip
    costly = publish(db, a, {"x": ["y"] * 5000})
    pipeline.fanout()
    # When the operator opens the quarantine page
    page = text(console.get("/console/quarantine"))
    # Then the pair is listed with the reason it failed
    row = re.search(r'<tr class="pair">(.*?)</tr>', page, re.S)
    assert row and costly in row.group(1) and endpoint["id"] in row.group(1)
    assert '<td class="reason">content filter: EvaluationBudgetExceeded' in row.group(1)
    # When the cause is fixed (the filter cleared: the endpoint takes every event) and the
    # operator retries
    endpoint_service.update_endpoint(
        db, get_settings(), Caller("test-operator", OPERATOR), endpoint["id"],
        {"clear_content_filter": True},
    )  # fmt: skip
    retried = text(console.post("/console/quarantine/retry", {"tenant_id": a}))
    # Then the page says one was delivered, nothing is left, and the event is delivered
    assert re.search(r'id="retried".*?<strong>1</strong> delivered', retried, re.S)
    assert "Nothing is quarantined." in retried
    pipeline.run_until(lambda: pipeline.states() == {"delivered": 1})
    assert len(sink.requests("/a")) == 1
