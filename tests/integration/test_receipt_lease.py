"""A delivery made at receipt writes no lease: it holds the one its id implies (decision 0111).
Reconcile's sweeps, the status counts and a replay's judgement read it as a written one.
Real Postgres, moto SQS, a loopback sink, the receiver's statement (accept_event) and the real
reconcile, replay and deliver handlers. A message never sent after the commit is a lost one."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.ids import ulid
from hookline.migrate import migrate
from hookline.queues import DeliveryMessage
from hookline.repositories import ledger
from hookline.repositories import reconcile as reconcile_repo
from hookline.repositories import status as status_repo
from hookline.repositories.ledger import NewEvent, accept_event
from tests.integration.test_reconcile import endpoint, reconcile, sql, tenant
from tests.integration.test_replay import OPERATOR, replay
from tests.support.pipeline import Pipeline

pytestmark = pytest.mark.integration

RECEIPT_LEASE = timedelta(seconds=900)  # config.delivery_queued_lease_seconds' default
DEADLINE = timedelta(hours=72)


def received(
    db: Database,
    monkeypatch: pytest.MonkeyPatch,
    tenant_id: str,
    ago: timedelta = timedelta(0),
    *,
    lease: timedelta = RECEIPT_LEASE,
    deadline: timedelta = DEADLINE,
) -> list[str]:
    """An event accepted by the receiver's statement `ago` (its id minted then), its
    deliveries' message never sent: their ids."""
    at = datetime.now(UTC) - ago
    minted = f"evt_{ulid(int(at.timestamp() * 1000), os.urandom(10))}"
    monkeypatch.setattr(ledger, "new_id", lambda prefix: minted)
    event = NewEvent(
        tenant_id=tenant_id, origin="publish", type="order.created",
        dedupe_key=minted, payload=b'{"n": 1}',
    )  # fmt: skip
    with db.connection() as conn:
        accepted = accept_event(conn, event, deadline=deadline, lease=lease)
    monkeypatch.undo()
    assert accepted.fanned_out
    return [d.id for d in accepted.to_send]


def lease(db: Database, delivery_id: str) -> dict[str, Any]:
    [row] = sql(
        db,
        "SELECT state, lease_expires_at AS written,"
        " hookline_lease_of(id, lease_expires_at) AS held FROM deliveries WHERE id = %s",
        (delivery_id,),
    )
    return row


def backlog(db: Database) -> dict[str, int]:
    with db.connection() as conn:
        return status_repo.backlog_by_group(conn)["standard"]


def by_state(db: Database) -> dict[str, int]:
    with db.connection() as conn:
        return reconcile_repo.deliveries_by_state(conn)


def test_a_delivery_made_at_receipt_holds_the_lease_its_id_implies(pipeline, db, sink, monkeypatch):
    # Given a tenant's endpoint and an event just received
    t = tenant(db)
    endpoint(db, t, sink.url("/now"))
    before = datetime.now(UTC)
    [delivery] = received(db, monkeypatch, t)
    # Then its delivery is queued with no lease written, holding one 15 minutes from receipt
    row = lease(db, delivery)
    assert row["state"] == "queued" and row["written"] is None
    assert before + RECEIPT_LEASE - timedelta(seconds=1) <= row["held"]
    assert row["held"] <= datetime.now(UTC) + RECEIPT_LEASE
    # And it counts as queued, for the status page and reconcile's gauges
    assert backlog(db)["queued"] == 1 and by_state(db)["queued"] == 1
    # And reconcile leaves it: its message may still be on the queue
    report = reconcile()
    assert report["repairs"]["lost_messages_requeued"] == 0
    assert lease(db, delivery)["state"] == "queued"
    # And a replay of it is skipped as in flight
    result = replay(delivery_ids=[delivery], **OPERATOR)
    assert result["skipped"] == {"in_flight": 1} and result["enqueued"] == 0


def test_a_receipt_whose_message_was_lost_is_requeued_once_its_lease_ran_out(
    pipeline: Pipeline, db, sink, monkeypatch
):
    # Given three events whose messages were lost: one received 20 minutes ago (its lease ran
    # out 5 minutes ago), one 21 minutes ago that a claim (a deferral's, without a slot)
    # still holds, and one 10 minutes ago (5 minutes left)
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/lost"))
    [old] = received(db, monkeypatch, t, ago=timedelta(minutes=20))
    [held] = received(db, monkeypatch, t, ago=timedelta(minutes=21))
    [young] = received(db, monkeypatch, t, ago=timedelta(minutes=10))
    assert {lease(db, d)["written"] for d in (old, held, young)} == {None}
    sql(
        db,
        "INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)"
        " VALUES (%s, %s, 1, now() + interval '1 hour', false)",
        (held, ep["id"]),
    )
    assert reconcile_count(db) == 1
    # When reconcile runs
    report = reconcile()
    # Then the one whose lease ran out is requeued, alone, and delivered once
    assert report["repairs"]["lost_messages_requeued"] == 1
    assert lease(db, young)["state"] == lease(db, held)["state"] == "queued"
    pipeline.run_until(lambda: lease(db, old)["state"] == "delivered")
    assert len(sink.requests("/lost")) == 1
    # And the lease floor stops at the held one's lease, which the next runs read again
    assert datetime.fromisoformat(report["findings"]["lease_floor"]) == lease(db, held)["held"]
    # And once its claim has run out too, the next run requeues it and it arrives
    sql(db, "UPDATE deliveries_in_flight SET lease_expires_at = now() - interval '1 second'")
    assert reconcile()["repairs"]["lost_messages_requeued"] == 1
    pipeline.run_until(lambda: lease(db, held)["state"] == "delivered")
    assert len(sink.requests("/lost")) == 2 and lease(db, young)["state"] == "queued"


def test_a_receipt_whose_deliverer_died_mid_attempt_is_requeued_when_its_claim_ran_out(
    pipeline: Pipeline, db, sink, monkeypatch
):
    # Given an event just received, its delivery claimed with a slot by a deliverer that died
    # (the claim's lease ran out), while the lease its id implies lasts 15 minutes more
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/died"))
    [delivery] = received(db, monkeypatch, t)
    sql(
        db,
        "INSERT INTO deliveries_in_flight (id, endpoint_id, enqueue_seq, lease_expires_at, slot)"
        " VALUES (%s, %s, 1, now() - interval '1 second', true)",
        (delivery, ep["id"]),
    )
    assert lease(db, delivery)["held"] > datetime.now(UTC) + timedelta(minutes=14)
    # When reconcile runs, it is requeued now, not a lease later, its slot freed
    report = reconcile()
    assert report["repairs"]["crashed_deliveries_requeued"] == 1
    assert pipeline.slots(ep["id"]) == []
    # And it arrives once
    pipeline.run_until(lambda: lease(db, delivery)["state"] == "delivered")
    assert len(sink.requests("/died")) == 1


def reconcile_count(db: Database) -> int:
    with db.connection() as conn:
        return reconcile_repo.count_expired_leases(conn)


def test_past_its_deadline_a_receipt_whose_lease_ran_out_is_dead(pipeline, db, sink, monkeypatch):
    # Given an event received 20 minutes ago whose deadline has passed, its message lost
    t = tenant(db)
    endpoint(db, t, sink.url("/late"))
    [late] = received(db, monkeypatch, t, ago=timedelta(minutes=20), deadline=timedelta(0))
    time.sleep(0.01)
    # When reconcile runs, it is dead with the reason, never sent
    report = reconcile()
    assert report["repairs"]["deadline_dead"] == 1
    assert lease(db, late)["state"] == "dead"
    assert sink.requests("/late") == []


def test_another_lease_than_the_receipt_lease_is_written(pipeline, db, sink, monkeypatch):
    # Given a receiver configured with a 10-minute lease
    t = tenant(db)
    endpoint(db, t, sink.url("/ten"))
    [delivery] = received(db, monkeypatch, t, lease=timedelta(minutes=10))
    # Then its delivery's lease is written, and held as written
    row = lease(db, delivery)
    assert row["written"] is not None and row["held"] == row["written"]
    assert row["written"] < datetime.now(UTC) + timedelta(minutes=10, seconds=1)


def test_set_off_for_a_rollback_the_leases_are_written(pipeline, db, sink, monkeypatch):
    # Given a delivery queued at receipt with no lease written, and one delivered
    t = tenant(db)
    ep = endpoint(db, t, sink.url("/back"))
    [queued] = received(db, monkeypatch, t)
    [done] = received(db, monkeypatch, t)
    message = DeliveryMessage(done, 1, ep["id"], "standard")
    pipeline.sqs.send_message(QueueUrl=pipeline.queues["standard"].url, MessageBody=message.body())
    pipeline.run_until(lambda: lease(db, done)["state"] == "delivered")
    held = lease(db, queued)["held"]
    # When the receipt lease is set off, as before deploying a version from before it
    [written] = sql(db, "SELECT hookline_set_receipt_lease(NULL) AS n")
    # Then the queued one's lease is written as it was held, and the delivered one left
    assert written["n"] == 1
    assert lease(db, queued)["written"] == held
    assert lease(db, done)["written"] is None
    # And a receipt from then on writes its lease, which reconcile reads as that version does
    [later] = received(db, monkeypatch, t)
    assert lease(db, later)["written"] is not None
    assert backlog(db)["queued"] == 2
    # And set again, the next receipt writes none
    sql(db, "SELECT hookline_set_receipt_lease(interval '900 seconds')")
    [again] = received(db, monkeypatch, t)
    assert lease(db, again)["written"] is None
    assert backlog(db)["queued"] == 3


def test_a_deploy_keeps_the_receipt_lease_at_the_deployments_queued_lease(
    pipeline, db, database_url, sink, monkeypatch
):
    # Given a delivery queued at receipt under the default lease, holding it unwritten
    t = tenant(db)
    endpoint(db, t, sink.url("/lease"))
    [before] = received(db, monkeypatch, t)
    held = lease(db, before)["held"]
    # When a deploy migrates with a queued lease of ten minutes
    ten_minutes = timedelta(seconds=600)
    migrate(database_url, HooklineConfig(delivery_queued_lease_seconds=600))
    # Then that delivery keeps the lease it held, written now
    assert lease(db, before)["written"] == held
    # And a receipt under the deployment's lease writes none, holding ten minutes from then
    sent_at = datetime.now(UTC)
    [after] = received(db, monkeypatch, t, lease=ten_minutes)
    row = lease(db, after)
    assert row["written"] is None
    assert sent_at + ten_minutes - timedelta(seconds=1) < row["held"]
    assert row["held"] < datetime.now(UTC) + ten_minutes
    # And reconcile counts both as queued
    assert by_state(db)["queued"] == 2
    # And the next deploy with the same lease changes nothing: the new one stays unwritten
    migrate(database_url, HooklineConfig(delivery_queued_lease_seconds=600))
    assert lease(db, after)["written"] is None
    # And back to the default, the one held under ten minutes keeps its lease, written
    migrate(database_url, HooklineConfig())
    assert lease(db, after)["written"] == row["held"]
    [default] = received(db, monkeypatch, t)
    assert lease(db, default)["written"] is None
