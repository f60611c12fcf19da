"""The receiver's statement (decision 0077): `accept_event` sent to libpq on the pool's
autocommit connection stores what psycopg stored, answers a duplicate with the original, and
refuses what psycopg refused; in a caller's transaction it still rolls back with it.
Real Postgres."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import psycopg
import pytest

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.errors import NotFound
from hookline.repositories.ledger import NewEvent, accept_event, store_event
from hookline.settings import get_settings
from tests.support import operator
from tests.support.sinks import Sink

pytestmark = pytest.mark.integration

DEADLINE = timedelta(hours=72)
LEASE = timedelta(minutes=15, microseconds=500)


def new_event(tenant_id: str, source_id: str | None, key: str, **fields: object) -> NewEvent:
    return NewEvent(
        tenant_id=tenant_id,
        origin=source_id or "publish",
        source_id=source_id,
        type=str(fields.get("type", "invoice.paid")),
        dedupe_key=key,
        payload=bytes(fields.get("payload", b'{"id": "evt_1", "amount": 7}')),  # type: ignore[call-overload]
        headers=fields.get("headers"),  # type: ignore[arg-type]
        traceparent=fields.get("traceparent"),  # type: ignore[arg-type]
    )


def stored(db: Database, event_id: str) -> dict:
    with db.connection() as conn:
        row = conn.execute(
            "SELECT e.tenant_id, e.source_id, e.type, e.dedupe_key, e.payload, e.content_type,"
            " e.headers, o.traceparent, o.fanned_out_at FROM events e"
            " JOIN outbox o ON o.event_id = e.id WHERE e.id = %s",
            (event_id,),
        ).fetchone()
    assert row is not None
    return dict(row)


def test_the_pools_statement_stores_the_event_and_returns_its_deliveries(
    db: Database, tenant: dict[str, str], stripe_source: dict[str, str], sink: Sink
) -> None:
    # Given a tenant with two endpoints, one of which wants this type
    settings = replace(get_settings(), allow_private_targets=True, allow_http_targets=True)
    wanted = operator.add_endpoint(
        db, settings, tenant_id=tenant["id"], url=sink.url("/a"), event_types=["invoice.*"]
    )
    operator.add_endpoint(
        db, settings, tenant_id=tenant["id"], url=sink.url("/b"), event_types=["order.*"]
    )
    payload = b'{"id": "evt_\xc3\xa9", "nested": {"n": [1, 2]}}\x00\xff'  # any bytes, as sent
    traceparent = "00-" + "a" * 32 + "-" + "b" * 16 + "-01"
    event = new_event(
        tenant["id"], stripe_source["id"], "evt_é", payload=payload,
        headers={"user-agent": "Stripe/1.0 ü"}, traceparent=traceparent,
    )  # fmt: skip
    # When the receiver's pooled (autocommit) connection accepts it
    before = datetime.now(UTC)
    with db.connection() as conn:
        received = accept_event(conn, event, deadline=DEADLINE, lease=LEASE)
    # Then the event is stored exactly, fanned out as it was stored
    assert not received.stored.duplicate and received.fanned_out
    row = stored(db, received.stored.id)
    assert row["payload"] == payload and row["dedupe_key"] == "evt_é"
    assert row["headers"] == {"user-agent": "Stripe/1.0 ü"}
    assert row["traceparent"] == event.traceparent and row["fanned_out_at"] is not None
    assert (row["tenant_id"], row["source_id"], row["type"]) == (
        tenant["id"], stripe_source["id"], "invoice.paid"
    )  # fmt: skip
    # And the one matching delivery is returned as the database holds it, queued to send
    [delivery] = received.to_send
    with db.connection() as conn:
        held = conn.execute(
            "SELECT endpoint_id, tenant_group, enqueue_seq, state, deadline_at,"
            " lease_expires_at FROM deliveries WHERE id = %s",
            (delivery.id,),
        ).fetchone()
    assert held is not None and held["state"] == "queued"
    assert (delivery.endpoint_id, delivery.tenant_group, delivery.seq) == (
        wanted["id"], held["tenant_group"], held["enqueue_seq"]
    )  # fmt: skip
    # And its deadline and lease are the intervals given, to the microsecond
    assert held["lease_expires_at"] - held["deadline_at"] == LEASE - DEADLINE
    assert before + DEADLINE - timedelta(seconds=5) < held["deadline_at"]


def test_a_duplicate_answers_the_original_and_an_unknown_tenant_is_not_found(
    db: Database, tenant: dict[str, str], stripe_source: dict[str, str]
) -> None:
    # Given an accepted event
    with db.connection() as conn:
        first = accept_event(
            conn, new_event(tenant["id"], stripe_source["id"], "evt_once"),
            deadline=DEADLINE, lease=LEASE,
        )  # fmt: skip
        # When the provider retries it
        again = accept_event(
            conn, new_event(tenant["id"], stripe_source["id"], "evt_once"),
            deadline=DEADLINE, lease=LEASE,
        )  # fmt: skip
        # Then the retry is the original, stored once
        assert again.stored.duplicate and again.stored.id == first.stored.id
        assert again.to_send == []
        # And an event of a tenant that does not exist is NotFound, as through psycopg
        with pytest.raises(NotFound):
            accept_event(conn, new_event("ten_nope", None, "k"), deadline=DEADLINE, lease=LEASE)
        # And a NUL in text is refused, never cut short
        with pytest.raises(psycopg.DataError):
            accept_event(
                conn, new_event(tenant["id"], None, "nul\x00key"), deadline=DEADLINE, lease=LEASE
            )
        # And the connection is still good for the next request
        assert conn.execute("SELECT 1 AS one").fetchone() == {"one": 1}


def test_in_a_callers_transaction_the_event_rolls_back_with_it(
    database_url: str, db: Database, tenant: dict[str, str]
) -> None:
    # Given a producer's own connection, in a transaction
    # When it accepts an event and the transaction rolls back
    with psycopg.connect(database_url) as conn, conn.transaction(force_rollback=True):
        received = accept_event(
            conn, new_event(tenant["id"], None, "idem:rolled-back"),
            deadline=DEADLINE, lease=LEASE,
        )  # fmt: skip
    # Then the event it wrote never existed
    with db.connection() as check:
        found = check.execute(
            "SELECT count(*) AS n FROM events WHERE id = %s", (received.stored.id,)
        ).fetchone()
    assert not received.stored.duplicate and found == {"n": 0}


def test_a_key_is_one_key_for_its_tenant_and_origin_alone(
    db: Database, tenant: dict[str, str]
) -> None:
    # Given a second tenant
    other = operator.add_tenant(db, HooklineConfig(), name="other", group=None)["id"]

    def accepted(tenant_id: str, origin: str, key: str) -> tuple[str, bool]:
        with db.connection() as conn:
            stored = accept_event(
                conn, replace(new_event(tenant_id, None, key), origin=origin),
                deadline=DEADLINE, lease=LEASE,
            ).stored  # fmt: skip
        return stored.id, stored.duplicate

    # When the same key arrives for two tenants, for two origins, and split differently
    # between the origin and the key
    first, _ = accepted(tenant["id"], "src_a", "bc")
    answers = [
        accepted(other, "src_a", "bc"),
        accepted(tenant["id"], "src_b", "bc"),
        accepted(tenant["id"], "src_ab", "c"),
        accepted(tenant["id"], "src_a", "bc "),
    ]
    # Then each is an event of its own
    assert [duplicate for _, duplicate in answers] == [False] * 4
    assert len({first, *(event_id for event_id, _ in answers)}) == 5
    # And the same key again is the original, whether it comes back at receipt or through
    # the API's statement
    assert accepted(tenant["id"], "src_a", "bc") == (first, True)
    with db.connection() as conn, conn.transaction():
        again = store_event(conn, replace(new_event(tenant["id"], None, "bc"), origin="src_a"))
    assert (again.id, again.duplicate) == (first, True)
