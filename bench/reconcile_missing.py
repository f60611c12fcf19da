"""What the reconciler's missing-delivery walk costs when content filters leave pairs
"missing" for good (decision 0056).

Given two tenants, each with `--plain` (2) endpoints without a content filter and `--events`
(10,000) events fanned out, the second tenant also with 2 endpoints whose pattern matches none of
its events (so every one of its events has 2 pairs the walk must match in Python every run),
each row times the whole walk (`hookline.repositories.reconcile.create_missing_deliveries`
page after page, as `Reconciler.run` does) in pages of `--batch` events:

* **no filters** — before the second tenant exists: nothing missing, nothing returned;
* **+ filtered non-matches** — both tenants: the second tenant's events come back with
  their payloads and patterns, and nothing is created;
* **+ 1% lost** — the same after deleting 1% of the unfiltered deliveries: those are
  re-created (and deleted again after each pass).

    .venv/bin/python bench/reconcile_missing.py [--events 10000] [--batch 500] [--rounds 3]
        [--plain 2] [--past-days 0]

Each row also gives the walk's Postgres server CPU (its backend's user + system time) per
event the walk read, the figure that prices a cycle: a cycle reads every event of the 24-hour
window. `--past-days 90` first makes the day partitions the default retention keeps.

Postgres is `DATABASE_URL` if set, else a local server in a temp dir (bench/common.py).
A benchmark, not a test: it prints a table and never fails on a figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import timedelta

from common import (
    backend_cpu_seconds,
    bench_database,
    insert_events,
    machine_facts,
    make_past_partitions,
    print_table,
    quiet_environment,
    run_statement,
    server_facts,
)

PAYLOAD = b'{"id": "ord_0000", "amount": 42, "items": [' + b"1, " * 150 + b"1]}"  # ~500 B
NO_MATCH = {"payload": {"amount": [{"numeric": [">", 100]}]}}


def make_tenant(url: str, name: str, events: int, plain: int, filtered: int) -> None:
    """A tenant with `plain` endpoints and `filtered` ones, then its events, fanned out."""
    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import endpoint_service, tenant_service
    from hookline.management.access import Caller
    from hookline.repositories.deliveries import fan_out_batch
    from hookline.settings import Settings

    settings = Settings.from_env({"DATABASE_URL": url, "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
                                  "HOOKLINE_ALLOW_HTTP_TARGETS": "1"})  # fmt: skip
    db = Database(url, max_size=1)
    try:
        operator = Caller("bench", "*")
        tenant = tenant_service.create_tenant(db, HooklineConfig(), operator, name=name, group=None)
        for i in range(plain + filtered):
            body = {"tenant_id": tenant["id"], "url": f"http://127.0.0.1:9/{name}/{i}"}
            if i >= plain:
                body["content_filter"] = NO_MATCH
            endpoint_service.create_endpoint(db, settings, operator, body)
        time.sleep(0.01)  # the events arrive after the endpoints
        insert_events(url, tenant["id"], events, ("order.created",), PAYLOAD)
        with db.connection() as conn:
            while fan_out_batch(conn, limit=2000, deadline=timedelta(days=1))[0]:
                pass
            conn.execute("VACUUM ANALYZE deliveries")
    finally:
        db.close()


def walk(url: str, batch: int) -> tuple[float, float | None, int, int]:
    """One whole walk over the window: (seconds, server CPU seconds, pages, deliveries
    created)."""
    from hookline.db import Database
    from hookline.repositories.reconcile import create_missing_deliveries

    db = Database(url, max_size=1)
    try:
        after, pages, created, dense = None, 0, 0, False
        with db.connection() as conn:  # the pool's one connection: the walk's backend
            cpu_before = backend_cpu_seconds(conn)
        start = time.perf_counter()
        while True:
            with db.connection() as conn:
                page = create_missing_deliveries(
                    conn, window=timedelta(hours=24), deadline=timedelta(days=1),
                    limit=batch, after=after, dense=dense,
                )  # fmt: skip
                dense = page.full
                pages, created = pages + 1, created + len(page.created)
                if not page.more:
                    seconds = time.perf_counter() - start
                    cpu_after = backend_cpu_seconds(conn)
                    cpu = None
                    if cpu_before is not None and cpu_after is not None:
                        cpu = cpu_after - cpu_before
                    return seconds, cpu, pages, created
            after = page.last
    finally:
        db.close()


def lose(url: str, share: float) -> None:
    """Delete `share` of the deliveries to endpoints without a content filter."""
    run_statement(
        url,
        "DELETE FROM deliveries WHERE random() < %s AND endpoint_id IN"
        " (SELECT id FROM endpoints WHERE content_filter IS NULL)",
        (share,),
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Set up, time each case, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--batch", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--plain", type=int, default=2, help="endpoints without a filter")
    parser.add_argument("--past-days", type=int, default=0, help="earlier days' partitions")
    args = parser.parse_args(argv)
    quiet_environment()
    machine = machine_facts()
    rows = []
    with bench_database("reconcile") as (url, where):
        print("creating events ...", file=sys.stderr, flush=True)
        if args.past_days:
            make_past_partitions(url, args.past_days)
        make_tenant(url, "plain", args.events, args.plain, filtered=0)
        cases = [("no filters", 0, 0.0), ("+ filtered non-matches", 2, 0.0), ("+ 1% lost", 0, 0.01)]
        read = args.events  # events the walk reads
        for name, filtered, share in cases:
            if filtered:
                make_tenant(url, "filtered", args.events, args.plain, filtered=filtered)
                read += args.events
            times, cpus = [], []
            for _ in range(args.rounds):
                if share:
                    lose(url, share)
                seconds, cpu, pages, created = walk(url, args.batch)
                times.append(seconds)
                cpus.append(cpu)
            known = [c for c in cpus if c is not None]
            per_event = f"{statistics.median(known) / read * 1e6:,.1f}" if known else "-"
            rows.append(
                (name, f"{min(times) * 1000:,.0f}", f"{statistics.median(times) * 1000:,.0f}",
                 per_event, pages, created)
            )  # fmt: skip
        facts = server_facts(url)
    print(
        f"reconcile missing-delivery walk: {args.events} events per tenant, {args.plain} plain "
        f"endpoints each, pages of {args.batch}, best and median of {args.rounds}, "
        f"{9 + args.past_days} day partitions per hot table; {machine}"
    )
    print(f"postgres: {where}; {facts}")
    print()
    headers = ("case", "best ms", "median ms", "server µs/event", "pages", "created (last)")
    print_table(headers, rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
