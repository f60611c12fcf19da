"""An event's deliveries are found by their key (decision 0087, migration 0038): a delivery's
id carries its event's millisecond, so the API, the status command, the dev stack and a
replay by events read one short range of the primary key for an event, however many other
deliveries the day holds, without an index on `event_id`. What a statement reads is taken
from the server (`EXPLAIN (ANALYZE, BUFFERS)`)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import deliveries as repo
from hookline.settings import get_settings
from hookline.sqlfiles import query
from tests.support import operator

pytestmark = pytest.mark.integration

ENDPOINTS = 3


def by_event(event_id: str) -> dict[str, dict[str, Any]]:
    """Each reader of one event's deliveries, with the parameters that ask for that event."""
    return {
        "api_list_deliveries": {
            "tenant": None, "tenant_id": None, "state": None, "endpoint_id": None,
            "event_id": event_id, "since": None, "until": None, "after": None, "limit": 100,
        },
        "list_deliveries": {
            "state": None, "endpoint_id": None, "event_id": event_id, "since": None,
            "limit": 100,
        },
        "devstack_event_deliveries": {"event_id": event_id},
        "replay_deliveries_by_events": {
            "event_ids": [event_id], "states": ["queued", "delivered"], "after": None,
            "limit": 100,
        },
    }  # fmt: skip


def publish_and_fan_out(db: Database, tenant: str, count: int) -> list[str]:
    with db.connection() as conn, conn.transaction():
        ids = [
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n}).id
            for n in range(count)
        ]
    with db.connection() as conn:
        while repo.fan_out_and_claim(
            conn,
            limit=500,
            deadline=timedelta(hours=72),
            lease=timedelta(minutes=5),
            due_limit=0,
        ).to_send:
            pass
        conn.execute("ANALYZE deliveries")
    return ids


def read(db: Database, name: str, params: dict[str, Any]) -> tuple[set[str], int]:
    """The ids a query returns, and the shared buffers its plan touched."""
    with db.connection() as conn:
        ids = {r["id"] for r in conn.execute(query(name), params).fetchall()}
        plan = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + query(name), params
        ).fetchone()
    assert plan is not None
    top = next(iter(plan.values()))[0]["Plan"]
    return ids, top["Shared Hit Blocks"] + top["Shared Read Blocks"]


def test_an_events_deliveries_are_read_by_key_however_full_the_day(pipeline, db: Database):
    # Given a tenant with three endpoints and an event among a few hundred of the day's
    tenant = operator.add_tenant(db, HooklineConfig(), name="keys", group="standard")["id"]
    for n in range(ENDPOINTS):
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url=f"http://127.0.0.1:9/{n}"
        )  # fmt: skip
    event = publish_and_fan_out(db, tenant, 300)[150]
    with db.connection() as conn:
        wanted = {
            r["id"] for r in conn.execute("SELECT id FROM deliveries WHERE event_id = %s", (event,))
        }
    assert len(wanted) == ENDPOINTS
    before = {name: read(db, name, params) for name, params in by_event(event).items()}
    # When the day fills with ten times as many deliveries
    publish_and_fan_out(db, tenant, 3000)
    # Then each reader still returns exactly the event's deliveries, reading about what it
    # read. The plan may change with the statistics: an index scan instead of a bitmap one
    # visits a heap page for each delivery of the event's millisecond, which a fast publisher
    # shares with its neighbours; a scan of the day would read ~250 more.
    with db.connection() as conn:
        same_millisecond = conn.execute(
            "SELECT count(*) AS n FROM deliveries WHERE id >= hookline_event_deliveries_from(%s)"
            " AND id < hookline_event_deliveries_to(%s)", (event, event),
        ).fetchone()["n"]  # fmt: skip
    for name, params in by_event(event).items():
        ids, buffers = read(db, name, params)
        assert ids == wanted == before[name][0], name
        allowed = before[name][1] + same_millisecond + 10
        assert buffers <= allowed, (name, before[name][1], same_millisecond, buffers)


def test_a_test_events_delivery_is_keyed_by_its_event(mgmt) -> None:
    # Given an endpoint
    tenant = mgmt.post("/v1/tenants", {"name": "keyed"}).json()
    url = "https://93.184.216.34/hooks"
    endpoint = mgmt.post("/v1/endpoints", {"tenant_id": tenant["id"], "url": url}).json()
    # When a test event is sent to it
    sent = mgmt.post(f"/v1/endpoints/{endpoint['id']}/test").json()
    # Then its delivery's id carries the event's time, as every fanned-out delivery's does,
    # and the event's deliveries are that one
    assert sent["delivery_id"][:14] == "dlv_" + sent["event_id"][4:14]
    listed = mgmt.get("/v1/deliveries", event_id=sent["event_id"]).json()["items"]
    assert [d["id"] for d in listed] == [sent["delivery_id"]]
