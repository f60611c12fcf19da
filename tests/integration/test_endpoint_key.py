"""One endpoint's deliveries are read through the endpoint's key (decision 0106, migration
0049): the deliveries' endpoint index holds a 64-bit hash of the endpoint's id, not its text.
What a user sees must not change: an endpoint's delivery list, log, replay and health, and a
tenant's counts and erasure, answer with that endpoint's (that tenant's) deliveries only, and
read those only, however many deliveries other endpoints have. What a statement reads is
taken from the server (`EXPLAIN ANALYZE`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hookline.db import Database
from hookline.sqlfiles import query
from tests.support.ledger import publish_fanned_out

pytestmark = pytest.mark.integration

PUBLIC_URL = "https://93.184.216.34/hooks"
SMALL_EVENTS, LARGE_EVENTS = 20, 2000


def tenant_with_endpoint(mgmt, name: str, endpoints: int = 1) -> tuple[str, str]:
    """A tenant and (the first of) its endpoints."""
    tenant = mgmt.post("/v1/tenants", {"name": name}).json()["id"]
    made = [
        mgmt.post("/v1/endpoints", {"tenant_id": tenant, "url": PUBLIC_URL}).json()["id"]
        for _ in range(endpoints)
    ]
    return tenant, made[0]


def publish(db: Database, tenant: str, count: int) -> None:
    """`count` events for the tenant, fanned out to its endpoints, each delivery with an
    attempt just now (what the endpoint's health reads)."""
    publish_fanned_out(db, [tenant], count)
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code)"
            " SELECT d.id, now(), 12, 200 FROM deliveries d"
            " WHERE NOT EXISTS (SELECT 1 FROM attempt_log a WHERE a.delivery_id = d.id)"
        )
        conn.execute("ANALYZE attempts")


def reads(db: Database, name: str, params: dict[str, Any]) -> tuple[list[Any], int]:
    """What a statement answers (its rows, or how many it deleted), and how many delivery
    rows its plan read, kept or filtered out; a statement that writes is rolled back."""
    with db.connection() as conn, conn.transaction(force_rollback=True):
        cursor = conn.execute(query(name), params)
        answer = cursor.fetchall() if cursor.description else [cursor.rowcount]
    with db.connection() as conn, conn.transaction(force_rollback=True):
        plan = conn.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + query(name), params).fetchone()
    assert plan is not None
    return answer, delivery_rows_read(next(iter(plan.values()))[0]["Plan"])


def delivery_rows_read(node: dict[str, Any]) -> int:
    """The rows a plan's scans of deliveries (any day's partition) found, with those their
    filters removed."""
    read = 0
    if str(node.get("Relation Name", "")).startswith("deliveries"):
        found = node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)
        read = int(found + node.get("Rows Removed by Index Recheck", 0)) * node["Actual Loops"]
    return read + sum(delivery_rows_read(child) for child in node.get("Plans", []))


def readers(tenant: str, endpoint: str) -> dict[str, dict[str, Any]]:
    """Every statement that reads one endpoint's or one tenant's deliveries, with its
    parameters for that endpoint or tenant."""
    now = datetime.now(UTC)
    listed = {"state": None, "endpoint_id": endpoint, "since": None, "limit": 25}
    return {
        "api_list_deliveries": {
            **listed, "tenant": None, "tenant_id": None, "event_id": None, "until": None,
            "after": None,
        },
        "delivery_log": {**listed, "tenant": None, "tenant_id": None, "event_type": None,
                         "until": None},
        "list_deliveries": {**listed, "event_id": None},
        "replay_deliveries_by_endpoint": {
            "endpoint_id": endpoint, "since": now - timedelta(hours=1), "until": now,
            "states": ["queued"], "after": None, "limit": 25,
        },
        "endpoint_health_summary": {
            "endpoint_id": endpoint, "now": now, "period": timedelta(hours=1),
            "deadline": timedelta(hours=72),
        },
        "endpoint_health_buckets": {
            "endpoint_id": endpoint, "now": now, "deadline": timedelta(hours=72),
        },
        "api_status_deliveries": {"tenant": tenant},
        "erase_tenant_attempts": {"tenant_id": tenant},
        "erase_tenant_deliveries": {"tenant_id": tenant},
    }  # fmt: skip


def test_an_endpoints_deliveries_read_the_same_as_another_endpoint_grows(mgmt, db: Database):
    # Given a small tenant's endpoint with a few deliveries, and a large tenant's beside it,
    # among forty more endpoints (so that the statistics know an endpoint is a few rows)
    crowd, _ = tenant_with_endpoint(mgmt, "crowd", 40)
    small, mine = tenant_with_endpoint(mgmt, "small")
    large, _ = tenant_with_endpoint(mgmt, "large")
    publish(db, crowd, 5)
    publish(db, small, SMALL_EVENTS)
    publish(db, large, 200)
    statements = readers(small, mine)
    before = {name: reads(db, name, params) for name, params in statements.items()}
    # When the large tenant's endpoint gets ten times as many deliveries
    publish(db, large, LARGE_EVENTS)
    # Then each statement answers as it did and reads its endpoint's deliveries (or its
    # tenant's), found through the endpoint's key, and none of the other endpoint's
    for name, params in statements.items():
        answer, read = reads(db, name, params)
        assert answer == before[name][0], name
        assert read <= SMALL_EVENTS, (name, read)


def test_each_reader_answers_with_its_endpoints_deliveries_only(mgmt, db: Database):
    # Given two tenants' endpoints with deliveries of their own
    small, mine = tenant_with_endpoint(mgmt, "small")
    large, theirs = tenant_with_endpoint(mgmt, "large")
    publish(db, small, 3)
    publish(db, large, 5)
    with db.connection() as conn:
        owner = {
            r["id"]: r["endpoint_id"]
            for r in conn.execute("SELECT id, endpoint_id FROM deliveries").fetchall()
        }
    # Then each endpoint's list, log and replay name its deliveries and no other
    for endpoint, count in ((mine, 3), (theirs, 5)):
        for name, params in readers(small, endpoint).items():
            if name.startswith(("api_list", "delivery_log", "list_", "replay")):
                answer, _ = reads(db, name, params)
                ids = [r["id"] for r in answer]
                assert len(ids) == count, (name, endpoint)
                assert {owner[i] for i in ids} == {endpoint}, name
    # And a tenant's counts and erasure are its own
    for tenant, count in ((small, 3), (large, 5)):
        answer, _ = reads(db, "api_status_deliveries", {"tenant": tenant})
        assert sum(r["n"] for r in answer) == count
        assert reads(db, "erase_tenant_deliveries", {"tenant_id": tenant})[0] == [count]
