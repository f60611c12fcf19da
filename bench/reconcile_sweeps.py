"""What reconcile's lease sweeps cost as the delivery rate grows (decisions 0097, 0111).

Since the delivery's record became a HOT update, a delivered row keeps its lease, and the
sweeps that look for queued deliveries read the lease index from the lease floor on
(`hookline_lease_floor()`): every lease of the window, delivered ones included, where the
partial index of queued rows before held only the queued ones. Since decision 0111 a delivery
made at receipt writes no lease: it holds the one its id implies, and the sweeps read those by
the range of the ids (`hookline_leased`). The deliveries here are laid out that way (no lease
written, the id's time a lease before the lease). This bench prices that.

For each `--rates` figure R (deliveries per second), the deliveries table holds what a
deployment at R holds when a run starts, with the default schedule (a run every 5 minutes,
queued leases of 15 minutes): R deliveries a second with leases from the floor (6 minutes
ago: a minute behind the previous run) to 15 minutes ahead, delivered, and among them the
same few stuck ones at every rate: `--stuck` queued deliveries whose lease ran out (half of
them past their deadline, all never attempted for over an hour). Each statement of a run
that reads leases runs as reconcile runs it (`hookline.repositories.reconcile`), in a
transaction rolled back after it, `--rounds` times; the table gives the median backend CPU
(`/proc/<pid>/schedstat`) and wall time per call, and the rows in the statement's window.

The baseline, in the same run: rate 0, the stuck deliveries alone, which is what a sweep
must read. From it, **per delivery**: each statement's extra CPU at rate R over the
baseline's per lease it read, times the runs that read a delivery's lease (the expired
window's 6 minutes over a run's 5: 1.2 runs; the queued count's 21 minutes: 4.2), summed:
what the sweeps add to a delivery's server CPU (compare the pipeline's ~50-200 us per
delivery, docs/performance.md). The leases are laid out before the statements run, which at
high rates takes minutes; the floor and the stuck leases are set again just before, so the
windows are as a run finds them.

    .venv/bin/python bench/reconcile_sweeps.py [--rates 100,1000] [--rounds 3] [--stuck 50]

Every round checks that the sweeps found the stuck deliveries (requeued, killed, counted)
and nothing else; a run that finds otherwise stops instead of printing figures of something
else. Postgres is `DATABASE_URL` if set (the CPU columns need the server on this machine),
else a durable local server in a temp dir (bench/common.py). A benchmark: it prints, never
fails on a figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from common import backend_us, bench_database, machine_facts, print_table, server_facts

PERIOD = timedelta(minutes=5)  # the default schedule (config.reconcile_minutes)
LEASE = timedelta(minutes=15)  # config.delivery_queued_lease_seconds
BEHIND = timedelta(minutes=1)  # how far the floor stays behind a run (advance_lease_floor)
# The deliveries of `count` seconds at one a second each, leases spread evenly from the floor
# (the previous run's time less a minute) to a lease ahead of now; delivered, tried once.
SEED = """
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, state,
                        attempt_count, lease_expires_at, deadline_at, created_at, updated_at,
                        finished_at, last_status, enqueue_seq)
SELECT 'dlv_' || hookline_ulid_time(l.at - %(lease)s) || lpad((%(first)s + g)::text, 16, '0'),
       'evt_' || hookline_ulid_time(l.at - %(lease)s) || lpad((%(first)s + g)::text, 16, '0'),
       'ep_bench', 'ten_bench', 'default', 'delivered', 1, NULL, now() + interval '1 day',
       now() - interval '2 minutes', now(), now(), 200, 1
FROM generate_series(0, %(count)s - 1) AS g
CROSS JOIN LATERAL (SELECT now() - %(behind)s + (%(span)s * g / %(count)s) AS at) l
"""
# The stuck ones, made again before each rate's statements: queued at receipt 17 minutes ago
# (their implied lease ran out two minutes ago), never attempted, the first half past deadline.
STUCK = """
WITH gone AS (DELETE FROM deliveries WHERE id LIKE 'dlv___________stuck%%')
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, state,
                        attempt_count, lease_expires_at, deadline_at, created_at, enqueue_seq)
SELECT 'dlv_' || hookline_ulid_time(now() - interval '2 minutes' - %(lease)s) || 'stuck'
           || lpad(g::text, 11, '0'),
       'evt_' || hookline_ulid_time(now() - interval '2 minutes' - %(lease)s) || 'stuck'
           || lpad(g::text, 11, '0'),
       'ep_bench', 'ten_bench', 'default', 'queued', 0, NULL,
       CASE WHEN g < %(stuck)s / 2 THEN now() - interval '1 minute' ELSE now() + interval '1 day'
       END,
       now() - interval '2 hours', 1
FROM generate_series(0, %(stuck)s - 1) AS g
RETURNING id
"""
FLOOR = """
INSERT INTO reconcile_positions (name, after_at) VALUES ('lease_floor', now() - %(floor)s)
ON CONFLICT (name) DO UPDATE SET after_at = excluded.after_at
"""
WINDOW = (
    "SELECT count(*) FILTER (WHERE hookline_lease_of(id, lease_expires_at) < now()) AS expired,"
    " count(*) AS all FROM hookline_leased(hookline_lease_floor())"
)


def sweeps(stuck: int) -> list[tuple[str, str, Callable[[Any], object], object]]:
    """(statement, window it reads, call as reconcile makes it, what it must find)."""
    from hookline.repositories import reconcile as repo

    dead = stuck // 2
    return [
        ("kill_past_deadline", "expired",
         lambda c: len(repo.kill_past_deadline(c, limit=500)), dead),
        ("requeue_expired_leases", "expired",
         lambda c: len(repo.requeue_expired_leases(c, limit=500)), stuck),
        ("advance_lease_floor", "expired", lambda c: repo.advance_lease_floor(c) is not None, True),
        ("count_expired_leases", "expired", repo.count_expired_leases, stuck),
        ("never_attempted (2 statements)", "expired",
         lambda c: repo.never_attempted(c, age=timedelta(hours=1), exclude=[], sample=10)[0],
         stuck),
        ("count_deliveries_by_state", "all",
         lambda c: repo.deliveries_by_state(c)["queued"], stuck),
    ]  # fmt: skip


def measure(conn: Any, rounds: int, stuck: int) -> dict[str, tuple[float, float]]:
    """Each sweep's median (backend µs, wall ms) per call, each call rolled back."""
    costs: dict[str, tuple[list[float], list[float]]] = {}
    for _ in range(rounds + 1):  # the first round warms the caches and is not kept
        for name, _window, call, expected in sweeps(stuck):
            with conn.transaction(force_rollback=True):
                cpu, wall = backend_us(conn), time.perf_counter()
                found = call(conn)
                cpu, wall = backend_us(conn) - cpu, time.perf_counter() - wall
            if found != expected:
                raise SystemExit(f"{name}: found {found!r}, expected {expected!r}")
            kept = costs.setdefault(name, ([], []))
            kept[0].append(cpu)
            kept[1].append(wall * 1e3)
    return {n: (statistics.median(c[rounds > 0 :]), statistics.median(w[rounds > 0 :]))
            for n, (c, w) in costs.items()}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="100,1000", help="deliveries per second")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--stuck", type=int, default=50, help="stuck queued deliveries")
    args = parser.parse_args(argv)
    rates = sorted({0, *(int(r) for r in args.rates.split(","))})
    floor = PERIOD + BEHIND
    span = floor + LEASE  # leases from the floor to a lease ahead
    with bench_database("reconcile_sweeps") as (url, where):
        import psycopg
        from psycopg.rows import dict_row

        rows: list[list[object]] = []
        cost: dict[int, dict[str, float]] = {}  # rate -> statement -> CPU µs per call
        read: dict[int, dict[str, int]] = {}  # rate -> statement -> leases in its window
        with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
            made = 0
            for rate in rates:
                count = int(rate * span.total_seconds())
                if count > made:
                    print(f"rate {rate}/s: {count:,} leases ...", file=sys.stderr, flush=True)
                    conn.execute(SEED, {"first": made, "count": count - made, "behind": floor,
                                        "span": span, "lease": LEASE})  # fmt: skip
                    conn.execute("VACUUM ANALYZE deliveries")
                    made = count
                conn.execute(STUCK, {"stuck": args.stuck, "lease": LEASE})
                conn.execute(FLOOR, {"floor": floor})
                window = conn.execute(WINDOW).fetchone()
                assert window is not None
                costs = measure(conn, args.rounds, args.stuck)
                cost[rate], read[rate] = {}, {}
                for name, reads, *_ in sweeps(args.stuck):
                    cpu, wall = costs[name]
                    cost[rate][name], read[rate][name] = cpu, window[reads]
                    rows.append([rate, name, f"{window[reads]:,}", f"{cpu:,.0f}", f"{wall:.1f}"])
        print(f"postgres: {where}; {server_facts(url)}")
        print(f"machine: {machine_facts()}")
        print(f"a run every {PERIOD}, leases of {LEASE}, {args.stuck} stuck deliveries\n")
        print_table(["rate/s", "statement", "leases read", "CPU µs/call", "wall ms"], rows)
        print()
        table = [[0, f"{sum(cost[0].values()):,.0f}", "-"]]
        for rate in rates[1:]:
            per_delivery = sum(
                (cost[rate][name] - cost[0][name]) / read[rate][name]
                * ((span if reads == "all" else floor) / PERIOD)
                for name, reads, *_ in sweeps(args.stuck)
            )  # fmt: skip
            table.append([rate, f"{sum(cost[rate].values()):,.0f}", f"{per_delivery:.2f}"])
        print_table(["rate/s", "a run's sweeps, CPU µs", "µs per delivery"], table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
