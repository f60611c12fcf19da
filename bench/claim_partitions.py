"""What a deliver batch's claim and a fan-out round cost as the day partitions add up
(decisions 0071, 0072).

One endpoint, ten queued deliveries claimed by `claim_deliveries_to_send` (the deliver
function's batch claim, committed without waiting for the disk as deployed, decision 0081),
then ended (their in-flight rows deleted, decision 0085), over and over: first with the
partitions a fresh database has (today, the week ahead, the default), then after 90 earlier
days' partitions are made, as 90 days of retention keep them. Each end leaves the claim's
in-flight index entries dead inside the lease window, as the records of real deliveries do.
Then as many fan-out rounds that find nothing to do (what a nudge or the schedule pays when
the outbox is empty). Prints the median and 90th percentile of each.

    PYTHONPATH=layers/core:devtools:. .venv/bin/python bench/claim_partitions.py [--claims 300]

Postgres is a durable local server started in a temp dir (or `DATABASE_URL`). A benchmark:
prints, never fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import UTC, datetime, timedelta

from common import bench_database, machine_facts, print_table, quiet_environment

LEASE = timedelta(minutes=5)


def main() -> int:
    """Set up one endpoint with ten queued deliveries, time the claims, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=300, help="claims timed per row")
    args = parser.parse_args()
    quiet_environment()
    os.environ["HOOKLINE_ALLOW_PRIVATE_TARGETS"] = "true"  # the endpoint is never sent to
    os.environ["HOOKLINE_ALLOW_HTTP_TARGETS"] = "true"
    import hookline
    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.repositories import deliveries as repo
    from hookline.repositories.delivery_batches import claim_batch_to_send
    from hookline.settings import get_settings
    from tests.support import operator

    rows = []
    with bench_database("claims") as (url, where):
        os.environ["DATABASE_URL"] = url
        db = Database(url, max_size=2, timeout=5)
        tenant = operator.add_tenant(db, HooklineConfig(), name="claims", group="standard")["id"]
        operator.add_endpoint(
            db, get_settings(), tenant_id=tenant, url="http://127.0.0.1:9/never",
            max_concurrency=100,
        )  # fmt: skip
        with db.connection() as conn, conn.transaction():
            for n in range(10):
                hookline.publish(conn, tenant_id=tenant, type="claimed", payload={"n": n})
        with db.connection() as conn:
            made = repo.fan_out_and_claim(
                conn, limit=10, deadline=timedelta(hours=72), lease=LEASE, due_limit=0
            ).to_send
        messages = [(e.id, e.seq) for e in made]
        for label, days_back in (("a fresh database", 0), ("90 days of retention", 90)):
            with db.connection() as conn:
                today = datetime.now(UTC).date()
                for day in range(1, days_back + 1):
                    conn.execute(
                        "SELECT hookline_create_day_partitions(%s)", (today - timedelta(days=day),)
                    )
                partitions = conn.execute(
                    "SELECT count(*) AS n FROM pg_inherits WHERE inhparent = 'deliveries'::regclass"
                ).fetchone()["n"]
            times = []
            for _ in range(args.claims):
                with db.connection() as conn:
                    began = time.perf_counter()
                    claimed = claim_batch_to_send(conn, messages, LEASE, datetime.now(UTC))
                    times.append(time.perf_counter() - began)
                    assert len(claimed) == len(messages), claimed
                    # the claims ended (since migration 0037 they are rows of the in-flight
                    # table; the code before it marked the deliveries `delivering`)
                    conn.execute(
                        "DELETE FROM deliveries_in_flight WHERE id = ANY(%s)",
                        ([m[0] for m in messages],),
                    )
            rounds = []
            for _ in range(args.claims):
                with db.connection() as conn:
                    began = time.perf_counter()
                    repo.fan_out_and_claim(
                        conn, limit=100, deadline=timedelta(hours=72), lease=LEASE, due_limit=100
                    )
                    rounds.append(time.perf_counter() - began)
            for what, series in (("batch claim of 10", times), ("empty fan-out round", rounds)):
                kept = sorted(series[len(series) // 3 :])  # after a warm-up third
                rows.append((
                    what, label, partitions, f"{statistics.median(kept) * 1000:.2f}",
                    f"{kept[int(len(kept) * 0.9)] * 1000:.2f}",
                ))  # fmt: skip
        db.close()
    print(f"one endpoint; postgres: {where}; {machine_facts()}")
    print_table(("call", "database", "deliveries partitions", "median ms", "p90 ms"), rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
