"""The reconciler's missing-delivery walk plans only the day partitions from where a step
starts (decision 0090): with the default retention's 99 partitions per hot table, a step that
named them all spent 80 ms planning, more than it spent reading 10,000 events. What a step
planned is read from the locks its planner took."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

import hookline
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import deliveries as deliveries_repo
from hookline.repositories.reconcile import create_missing_deliveries
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration

WINDOW = timedelta(hours=24)


def planned_days(conn: Any, call: Any) -> tuple[Any, set[str]]:
    """What `call` returned, and the days (YYYYMMDD) of the partitions its statements were
    planned over: the planner locks every partition it keeps in a plan (one it prunes while
    planning is never opened), and the locks last until the transaction ends."""
    with conn.transaction(force_rollback=True):
        result = call()
        locked = conn.execute(
            "SELECT relation::regclass::text AS name FROM pg_locks"
            " WHERE pid = pg_backend_pid() AND locktype = 'relation'"
        ).fetchall()
    return result, {d for r in locked for d in re.findall(r"_d(\d{8})$", r["name"])}


def test_a_walk_step_plans_only_the_days_from_where_it_starts(pipeline, db: Database) -> None:
    # Given thirty earlier days' partitions, as a long retention keeps them, and today's
    # events fanned out to two endpoints
    today = datetime.now(UTC)
    with db.connection() as conn:
        for days in range(1, 31):
            day = (today - timedelta(days=days)).date()
            conn.execute("SELECT hookline_create_day_partitions(%s::date)", (day,))
    tenant = operator.add_tenant(db, HooklineConfig(), name="walk", group="standard")["id"]
    for n in range(2):
        operator.add_endpoint(db, get_settings(), tenant_id=tenant, url=f"http://127.0.0.1:9/{n}")
    with db.connection() as conn, conn.transaction():
        for n in range(3):
            hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})
    with db.connection() as conn:
        while deliveries_repo.fan_out_batch(conn, limit=100, deadline=WINDOW)[0]:
            pass

    # When one step of the walk runs over the 24-hour window
    with db.connection() as conn:
        page, days = planned_days(
            conn,
            lambda: create_missing_deliveries(conn, window=WINDOW, deadline=WINDOW, limit=10),
        )

    # Then it read the whole window, finding nothing missing, from plans over no partition
    # of a day before the window's
    assert page.created == [] and not page.more
    window_start = (today - WINDOW - timedelta(minutes=1)).strftime("%Y%m%d")
    assert days and min(days) >= window_start, sorted(days)
