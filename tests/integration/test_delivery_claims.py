"""The deliverer's two common-path statements (decision 0025): the claim that also reads the
secrets and takes the endpoint slot, and the delivered outcome recorded in one statement.
Each keeps the guards the separate statements had: generation + lease, slot only when sent.
A slot is a live claim holding one in the in-flight table (decision 0085)."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import deliveries as repo
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration


def endpoint_of_new_tenant(db: Database, url: str, **options) -> tuple[str, dict]:
    tenant = operator.add_tenant(db, HooklineConfig(), name="t", group="standard")["id"]
    return tenant, operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=url, **options)


def publish(db: Database, tenant_id: str) -> str:
    with db.connection() as conn, conn.transaction():
        return hookline.publish(conn, tenant_id=tenant_id, type="order.created", payload={}).id


def now() -> datetime:
    return datetime.now(UTC)


def test_a_late_delivered_outcome_cannot_finish_or_free_the_run_that_took_over(pipeline, db, sink):
    # Given a delivery claimed by worker A (secrets read, slot taken), whose lease ran out
    t, _ep = endpoint_of_new_tenant(db, sink.url("/late"), max_concurrency=1)
    publish(db, t)
    pipeline.fanout()
    queued = pipeline.delivery()
    with db.connection() as conn:
        a = repo.claim_to_send(
            conn, queued["id"], queued["enqueue_seq"], timedelta(milliseconds=1), now()
        )
    assert a is not None and a.wait_seconds == 0 and len(a.sealed_secrets) == 1
    time.sleep(0.05)
    # And worker B took it over from the redelivered message, and holds the only slot
    with db.connection() as conn:
        b = repo.claim_to_send(
            conn, queued["id"], queued["enqueue_seq"], timedelta(minutes=1), now()
        )
    assert b is not None and b.wait_seconds == 0
    # When A's endpoint answered 200 and A records "delivered" in its one statement
    with db.connection() as conn:
        late = repo.record_delivered(conn, a.job, repo.AttemptRecord(now(), 5, 200, "ok", None))
    # Then A's attempt is on record (it was made), but B's run stands: still delivering,
    # no attempt counted, its slot still held (the cap of 1 holds)
    assert late is None
    delivery = pipeline.delivery()
    assert (delivery["state"], delivery["attempt_count"]) == ("delivering", 0)
    assert [x["status_code"] for x in pipeline.attempts(queued["id"])] == [200]
    assert pipeline.slots() == [queued["id"]]
    # And B's own delivered outcome finishes it and frees the slot
    with db.connection() as conn:
        mine = repo.record_delivered(conn, b.job, repo.AttemptRecord(now(), 5, 204, "", None))
    assert mine == queued["enqueue_seq"]
    delivery = pipeline.delivery()
    assert (delivery["state"], delivery["attempt_count"], delivery["last_status"]) == (
        "delivered", 1, 204,
    )  # fmt: skip
    assert pipeline.slots() == []


def test_a_delivery_past_its_deadline_or_to_a_disabled_endpoint_takes_no_slot(pipeline, db, sink):
    # Given an endpoint with a cap of 1, one delivery past its deadline and one whose
    # endpoint is then disabled (slots are released only after an attempt: one taken
    # here would block the endpoint until its lease ran out)
    t, ep = endpoint_of_new_tenant(db, sink.url("/capped"), max_concurrency=1)
    publish(db, t)
    publish(db, t)
    pipeline.fanout()
    with db.connection() as conn:
        rows = conn.execute("SELECT id, enqueue_seq FROM deliveries ORDER BY id").fetchall()
        late, other = rows
        conn.execute(
            "UPDATE deliveries SET deadline_at = now() - interval '1 second' WHERE id = %s",
            (late["id"],),
        )
    # When each is claimed
    with db.connection() as conn:
        dead = repo.claim_to_send(conn, late["id"], late["enqueue_seq"], timedelta(minutes=1),
                                  now())  # fmt: skip
    admin_disable = "UPDATE endpoints SET enabled = false WHERE id = %s"
    with db.connection() as conn:
        conn.execute(admin_disable, (ep["id"],))
        off = repo.claim_to_send(conn, other["id"], other["enqueue_seq"], timedelta(minutes=1),
                                 now())  # fmt: skip
    # Then neither read a secret nor took the slot
    assert dead is not None and off is not None
    assert (dead.wait_seconds, dead.sealed_secrets) == (None, [])
    assert (off.wait_seconds, off.sealed_secrets, off.job.endpoint_enabled) == (None, [], False)
    assert pipeline.slots() == []


def test_a_secret_that_cannot_be_opened_gives_the_claim_and_the_slot_back(pipeline, db, sink):
    # Given an endpoint (cap 1) whose stored secret cannot be decrypted
    t, ep = endpoint_of_new_tenant(db, sink.url("/sealed"), max_concurrency=1)
    with db.connection() as conn:
        conn.execute(
            "UPDATE endpoint_secrets SET secret = 'hlenc1:key_missing:AAAA' WHERE endpoint_id = %s",
            (ep["id"],),
        )
    publish(db, t)
    pipeline.fanout()
    # When the deliverer handles its message (the claim and slot are committed before the
    # secrets are opened)
    pipeline.deliver_once()
    # Then nothing was sent, the slot is free again and the delivery is queued for the
    # message's retry, not left delivering until its lease runs out
    assert sink.requests() == []
    delivery = pipeline.delivery()
    assert (delivery["state"], delivery["attempt_count"]) == ("queued", 0)
    assert pipeline.slots() == []
