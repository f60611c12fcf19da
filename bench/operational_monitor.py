"""What the operational monitor (decision 0068) costs: its window statement per reconcile run,
and what its BRIN index on attempts.attempted_at costs every attempt's insert.

Given `--endpoints` (200) endpoints of one tenant with one delivery each, and `--attempts`
(200,000) attempts spread evenly over the last 24 h (so ~2,000 fall in the default 15-minute
window), with 5 % failing:

* **monitor run** — `OperationalMonitor.run` once the states are settled (the steady state:
  judge every endpoint with attempts in its window, scan dead deliveries, change nothing);
* **attempt insert, with BRIN / without** — `--inserts` (5,000) single-row `insert_attempt`
  statements (the deliverer's own, autocommitted), with the index and without, taking turns.

    .venv/bin/python bench/operational_monitor.py [--endpoints 200] [--attempts 200000]

Postgres is `DATABASE_URL` if set (a fresh database is created and dropped), else a durable
local server in a temp dir. A benchmark, not a test: it prints a table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bench_database, insert_events, machine_facts, print_table

from hookline.db import Database
from hookline.operational.monitor import OperationalMonitor
from hookline.operational.notify import Notifier
from hookline.repositories import deliveries as delivery_repo
from hookline.settings import Settings
from hookline.sqlfiles import query


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--endpoints", type=int, default=200)
    parser.add_argument("--attempts", type=int, default=200_000)
    parser.add_argument("--inserts", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with bench_database("opmon") as (url, where):
        db = Database(url, max_size=2)
        with db.connection() as conn:
            conn.execute(
                "INSERT INTO tenants (id, name, tenant_group) VALUES ('ten_b', 'b', 'standard')"
            )
            conn.execute(
                "INSERT INTO endpoints (id, tenant_id, url) SELECT 'ep_' || g, 'ten_b', "
                "'https://example.com/' || g FROM generate_series(1, %s) g",
                (args.endpoints,),
            )
        insert_events(url, "ten_b", 1, ["order.created"], b"{}")
        with db.connection() as conn:
            delivery_repo.fan_out_batch(conn, limit=10, deadline=timedelta(hours=72))
            conn.execute(
                "INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code) "
                "SELECT d.id, now() - (g * interval '1 day' / %(n)s), 20, "
                "CASE WHEN g %% 20 = 0 THEN 500 ELSE 200 END "
                "FROM generate_series(1, %(n)s) g "
                "JOIN LATERAL (SELECT id FROM deliveries ORDER BY id "
                "OFFSET (g %% %(e)s) LIMIT 1) d ON true",
                {"n": args.attempts, "e": args.endpoints},
            )
            conn.execute("VACUUM ANALYZE attempts, deliveries")
            [delivery] = conn.execute("SELECT id FROM deliveries LIMIT 1").fetchall()
        settings = Settings(database_url=url)
        settings = replace(settings, operational=replace(settings.operational))
        monitor = OperationalMonitor(db, settings, Notifier(None, None, None))
        monitor.run()  # settle: the first run may announce
        runs = []
        for _ in range(args.rounds):
            began = time.perf_counter()
            monitor.run()
            runs.append((time.perf_counter() - began) * 1000)

        def inserts() -> float:
            with db.connection() as conn:
                began = time.perf_counter()
                for _ in range(args.inserts):
                    conn.execute(
                        query("insert_attempt"),
                        {"id": delivery["id"], "attempted_at": datetime.now(UTC), "duration_ms": 1,
                         "status": 200, "excerpt": None, "error": None, "headers": None},
                    )  # fmt: skip
                return (time.perf_counter() - began) / args.inserts * 1e6

        # The two take turns, so a busy machine disturbs both alike.
        with_brin, without = [], []
        for _ in range(args.rounds):
            with_brin.append(inserts())
            with db.connection() as conn:
                conn.execute("DROP INDEX attempts_attempted_at_brin")
            without.append(inserts())
            with db.connection() as conn:
                conn.execute(
                    "CREATE INDEX attempts_attempted_at_brin ON attempts USING brin "
                    "(attempted_at) WITH (autosummarize = on)"
                )
        db.close()
    print(f"{where}; {machine_facts()}")
    print(f"{args.endpoints} endpoints, {args.attempts} attempts over 24 h\n")
    print_table(
        ["measure", "median", "best"],
        [
            ["monitor run (ms)", f"{statistics.median(runs):.1f}", f"{min(runs):.1f}"],
            [
                "insert_attempt with BRIN (µs)",
                f"{statistics.median(with_brin):.0f}",
                f"{min(with_brin):.0f}",
            ],
            [
                "insert_attempt without BRIN (µs)",
                f"{statistics.median(without):.0f}",
                f"{min(without):.0f}",
            ],
        ],
    )


if __name__ == "__main__":
    main()
