"""A deliver batch whose deliveries lie in several days: its claim and record as one statement
each through the functions over the parent, or one per day through each day's copies
(decision 0103), beside a batch of one day in the same run.

Retries reach deliver among new messages: a delivery made yesterday and retried today shares
its SQS batch with today's. Each day partition of `deliveries` has its own copies of the claim
and the record (decision 0084); a batch spanning days used to go through the functions over
the parent, which open every day's partition. Per row, batches of ten deliveries (an event's
ten endpoints' for today, one delivery of an event of each earlier day in place of as many of
today's) are claimed and recorded as deliver does (`claim_batch_to_send`, then
`record_batch_delivered` with a 200 for every claim): **one statement** each, or **per day**
(each day's part its own statement, whatever the number of days); the table marks which of
the two deliver runs (`hookline.repositories.hot_cursors.day_parts`). The routes
take turns batch by batch in a new order each round, after warm-up rounds. Time is the
backend's CPU (`/proc/<pid>/schedstat`).

    .venv/bin/python bench/batch_days.py [--batches 100] [--days 2,3,4,5,6] [--past-days 90]

`--past-days` first makes the day partitions of that many earlier days, as the default
retention keeps them (99 partitions per table with 90). Postgres is a durable local server
started in a temp dir (or `DATABASE_URL`). A benchmark: prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import (
    backend_us,
    bench_database,
    machine_facts,
    make_past_partitions,
    print_table,
    quiet_environment,
)

LEASE = timedelta(minutes=5)
DEADLINE = timedelta(hours=72)
ENDPOINTS = 10
WARM_ROUNDS = 5
Message = tuple[str, int]


def setup(url: str, batches: int, spans: list[int]) -> dict[int, list[Message]]:
    """A tenant with ENDPOINTS endpoints; its queued deliveries by how many days ago their
    event was: enough for `batches` rounds of every route (a batch of one day and two per
    span in `spans`), a batch taking one delivery of each earlier day it spans."""
    from psycopg.types.json import Jsonb

    import hookline
    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.ids import ulid_day
    from hookline.management import endpoint_service, tenant_service
    from hookline.management.access import Caller
    from hookline.repositories import deliveries as repo
    from hookline.settings import get_settings
    from hookline.sqlfiles import query

    db = Database(url, max_size=1)
    operator = Caller("bench", "*")
    tenant = tenant_service.create_tenant(db, HooklineConfig(), operator, name="days", group=None)
    for n in range(ENDPOINTS):
        endpoint_service.create_endpoint(
            db, get_settings(), operator,
            {"tenant_id": tenant["id"], "url": f"http://127.0.0.1:9/{n}", "max_concurrency": 1000},
        )  # fmt: skip
    routes = 1 + 2 * len(spans)
    old_events = -(-batches * 2 * len(spans) // ENDPOINTS) + 1  # a delivery per batch spanning
    most_days = max(spans)
    with db.connection() as conn, conn.transaction():
        for ago in range(1, most_days):
            then = datetime.now(UTC) - timedelta(days=ago)
            conn.execute("SELECT hookline_create_day_partitions(%s::date)", (then.date(),))
            for n in range(old_events):
                event_id = conn.execute(
                    "SELECT 'evt_' || hookline_ulid_time(%s) || %s AS id",
                    (then, f"B{ago:03d}{n:013d}"),
                ).fetchone()["id"]
                conn.execute(query("insert_event"), {
                    "id": event_id, "tenant_id": tenant["id"], "source_id": None,
                    "origin": "publish", "type": "order.paid", "dedupe_key": event_id,
                    "payload": b'{"n": 1}', "content_type": "application/json",
                    "headers": Jsonb({}), "traceparent": None,
                })  # fmt: skip
        for n in range(batches * routes + 1):  # an event's ENDPOINTS deliveries per batch
            hookline.publish(conn, tenant_id=tenant["id"], type="order.paid", payload={"n": n})
    by_age: dict[int, list[Message]] = {}
    today = datetime.now(UTC).date()
    with db.connection() as conn:
        while repo.fan_out_and_claim(
            conn, limit=500, deadline=DEADLINE, lease=LEASE, due_limit=0
        ).to_send:
            pass
        for row in conn.execute("SELECT id, enqueue_seq FROM deliveries ORDER BY id"):
            day = ulid_day(row["id"])
            age = (today - day).days if day else -1
            by_age.setdefault(age, []).append((row["id"], row["enqueue_seq"]))
        conn.execute("ANALYZE")
    db.close()
    return by_age


def batch_cost(conn: Any, batch: list[Message], per_day: bool) -> float:
    """Backend µs to claim and record `batch` as one statement each, or per day."""
    from hookline.ids import ulid_day
    from hookline.repositories.deliveries import AttemptRecord
    from hookline.repositories.delivery_batches import claim_batch_to_send, record_batch_delivered

    days: dict[Any, list[Message]] = {}
    for message in batch:
        days.setdefault(ulid_day(message[0]), []).append(message)
    parts = list(days.values()) if per_day else [batch]
    start, recorded = backend_us(conn), 0
    for part in parts:
        claims = claim_batch_to_send(conn, part, LEASE, datetime.now(UTC))
        attempt = AttemptRecord(datetime.now(UTC), 5, 200, "ok", None)
        recorded += len(record_batch_delivered(conn, [(c.job, attempt) for c in claims.values()]))
    if recorded != len(batch):
        raise SystemExit(f"{recorded} of {len(batch)} deliveries recorded")
    return backend_us(conn) - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=100, help="batches timed per route")
    parser.add_argument("--days", default="2,3,4,5,6", help="days a mixed batch spans")
    parser.add_argument("--past-days", type=int, default=90)
    args = parser.parse_args(argv)
    spans = [int(d) for d in args.days.split(",")]
    quiet_environment()
    os.environ.update(HOOKLINE_DATABASE_PROXIED="true", HOOKLINE_ALLOW_PRIVATE_TARGETS="1",
                      HOOKLINE_ALLOW_HTTP_TARGETS="1")  # fmt: skip
    with (
        tempfile.TemporaryDirectory(prefix="hookline-bench-key-") as keys,
        bench_database("batch_days") as (url, where),
    ):
        os.environ["HOOKLINE_LOCAL_KEY_FILE"] = str(Path(keys) / "master.key")
        os.environ["DATABASE_URL"] = url
        import psycopg
        from psycopg.rows import dict_row

        from hookline.repositories.hot_cursors import MOST_DAYS_SPLIT

        if args.past_days:
            make_past_partitions(url, args.past_days)
        print("making deliveries ...", file=sys.stderr, flush=True)
        by_age = setup(url, args.batches + WARM_ROUNDS, spans)
        routes = [(1, False)] + [(span, per_day) for span in spans for per_day in (False, True)]
        taken = dict.fromkeys(by_age, 0)

        def batch(span: int) -> list[Message]:
            picked = []
            for age in range(1, span):
                picked.append(by_age[age][taken[age]])
                taken[age] += 1
            fresh = ENDPOINTS - len(picked)
            picked += by_age[0][taken[0] : taken[0] + fresh]
            taken[0] += fresh
            return picked

        costs: dict[tuple[int, bool], list[float]] = {route: [] for route in routes}
        conn = psycopg.connect(url, autocommit=True, prepare_threshold=None, row_factory=dict_row)
        for round_ in range(args.batches + WARM_ROUNDS):
            for span, per_day in random.Random(round_).sample(routes, len(routes)):
                cost = batch_cost(conn, batch(span), per_day)
                if round_ >= WARM_ROUNDS:
                    costs[(span, per_day)].append(cost)
        conn.close()
        print(f"postgres: {where}; {machine_facts()}")
        print(f"{args.past_days + 9} day partitions per table; {ENDPOINTS} deliveries a batch; "
              f"{args.batches} batches per route after {WARM_ROUNDS} warm-up rounds")  # fmt: skip
        base = statistics.median(costs[(1, False)])
        rows = []
        for (span, per_day), values in costs.items():
            median = statistics.median(values)
            built = (1 < span <= MOST_DAYS_SPLIT) == per_day
            how = f"per day ({span} each)" if per_day else "one statement each"
            rows.append([f"{span} day{'s' if span > 1 else ''}", how, "yes" if built else "",
                         f"{median:,.0f}", f"{statistics.quantiles(values, n=10)[-1]:,.0f}",
                         f"{median / base:.2f}"])  # fmt: skip
        print_table(
            ["batch spans", "claim and record", "as deliver runs", "backend µs (median)",
             "p90", "x one day's"],
            rows,
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
