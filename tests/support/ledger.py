"""Filling a test database's ledger through the library, as an application publishing would."""

from __future__ import annotations

from datetime import timedelta

import hookline
from hookline.db import Database
from hookline.repositories import deliveries as repo


def publish_fanned_out(db: Database, tenants: list[str], count: int) -> None:
    """`count` events for each tenant in turn, fanned out to their endpoints, then the
    statistics taken (so a plan test sees the tables as they are)."""
    with db.connection() as conn, conn.transaction():
        for n in range(count):
            for tenant in tenants:
                hookline.publish(conn, tenant_id=tenant, type="order.paid", payload={"n": n})
    with db.connection() as conn:
        while repo.fan_out_and_claim(
            conn, limit=500, deadline=timedelta(hours=72), lease=timedelta(minutes=5), due_limit=0
        ).to_send:
            pass
        conn.execute("ANALYZE")
