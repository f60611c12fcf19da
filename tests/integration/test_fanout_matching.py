"""The fan-out statement reads endpoint filters in SQL exactly as `hookline.filters` reads
them in Python, and gives every delivery a well-formed, unique id (migration 0005)."""

from __future__ import annotations

import re
from datetime import timedelta

import psycopg
import pytest

import hookline
from hookline.db import Database
from hookline.filters import matches, sql_like_patterns
from hookline.repositories.deliveries import fan_out_batch
from hookline.settings import Settings
from tests.support import operator

pytestmark = pytest.mark.integration

FILTERS = [
    [],
    ["*"],
    ["order.*"],
    ["order.created"],
    ["a_b.c"],
    ["invoice.paid", "order.*"],
    ["*.created"],
    ["pull_request"],
]
TYPES = [
    "order.created",
    "order.updated",
    "a_b.c",
    "aXb.c",
    "invoice.paid",
    "pull_request",
    "pullXrequest",
    "customer.created",
]


def test_fan_out_creates_a_delivery_exactly_where_python_says_the_filters_match(
    db: Database, database_url: str, tenant: dict[str, str]
) -> None:
    # Given endpoints with every kind of filter, and one event of each type
    settings = Settings.from_env(
        {"DATABASE_URL": database_url, "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
         "HOOKLINE_ALLOW_HTTP_TARGETS": "1"}
    )  # fmt: skip
    filters = {
        operator.add_endpoint(
            db, settings, tenant_id=tenant["id"], url=f"http://127.0.0.1:9/{i}", event_types=f
        )["id"]: f
        for i, f in enumerate(FILTERS)
    }
    with db.connection() as conn, conn.transaction():
        types = {
            hookline.publish(conn, tenant_id=tenant["id"], type=t, payload={}).id: t for t in TYPES
        }
    # When the fan-out statement runs
    with db.connection() as conn:
        events, created = fan_out_batch(conn, limit=100, deadline=timedelta(hours=1))
        rows = conn.execute("SELECT id, event_id, endpoint_id FROM deliveries").fetchall()
    # Then there is one delivery per (event, endpoint) that Python's reading matches, no other
    expected = {(e, p) for e, t in types.items() for p, f in filters.items() if matches(f, t)}
    assert {(r["event_id"], r["endpoint_id"]) for r in rows} == expected
    assert (events, created) == (len(TYPES), len(expected))
    # And every id carries its event's time (its day partition) and a hash of the pair
    # (decision 0040): the event's 10 ULID time characters, then 16 hex digits
    assert all(re.fullmatch(r"dlv_[0-9A-Z]{10}[0-9a-f]{16}", r["id"]) for r in rows)
    assert all(r["id"][4:14] == r["event_id"][4:14] for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)


def test_the_sql_like_patterns_are_pythons(database_url: str) -> None:
    # Including characters LIKE would read as wildcards or escapes, which filters refuse
    # on input but the function must still keep literal.
    with psycopg.connect(database_url) as conn:
        for patterns in [*FILTERS, ["a%b"], ["a\\b"], ["x_*"]]:
            row = conn.execute("SELECT hookline_like_patterns(%s::text[])", (patterns,)).fetchone()
            assert row is not None
            assert row[0] == sql_like_patterns(patterns), patterns
