"""Fan-out throughput: the real fan-out statement against a bare INSERT ... SELECT of the
same rows, in the same run, on the same Postgres.

Given one tenant with 5 enabled endpoints whose event-type filters all match, and
`--events` (10,000) events with their outbox rows, each row of the table fans every event
out in statements of `--batch-sizes` outbox rows (so 50,000 deliveries), timing only the
statements (each one autocommitted, as fan-out runs them):

* **fan_out_batch** — `hookline.repositories.deliveries.fan_out_batch`, the statement the
  fan-out Lambda runs: claim outbox rows (FOR UPDATE SKIP LOCKED), match each enabled
  endpoint's filters, insert the deliveries (ON CONFLICT DO NOTHING), mark the outbox rows.
* **+ claim_due** — the same, each batch followed by `claim_due` (claim_due_deliveries:
  the new deliveries marked queued with a lease), as fan-out does before `SendMessageBatch`;
  no SQS.
* **bare -> deliveries** — the baseline: `INSERT INTO deliveries ... SELECT` of the same
  rows (event x endpoint of its tenant, ordered ids of the same length, the same deadline)
  over a range of event ids: no claim, no filter, no conflict check, no outbox update.
  It writes into the deliveries table itself, truncated before every pass, so both sides
  pay the same indexes, defaults and CHECKs: the ratio is then what our statement's logic
  costs, not what the schema costs.
* **+ content filters** — fan_out_batch with every endpoint carrying an EventBridge
  pattern (CONTENT_FILTERS, each matching every event, so the same deliveries): the pairs
  come back to Python, are matched, and inserted in a second statement (decision 0044).

Before every pass the deliveries are truncated, the outbox reset to pending,
both vacuumed and a checkpoint taken, so every pass starts from the same state; the paths
take turns within each round. Each figure is over `--rounds` passes: the best rate (the
pass the machine disturbed least; the ratio uses it), the median, and — when the server is
local — the server process's CPU time per delivery, which a busy machine disturbs less
than wall time.

    .venv/bin/python bench/fanout.py [--events 10000] [--batch-sizes 500,2000,10000]
                                     [--rounds 2]

Postgres is `DATABASE_URL` if set (a fresh database is created on it and dropped at the
end), else a durable local server started in a temp dir and stopped at the end. This is a
benchmark, not a test: it prints a table and never fails on a figure.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from common import (
    backend_cpu_seconds,
    bench_database,
    insert_events,
    machine_facts,
    make_past_partitions,
    print_table,
    quiet_environment,
    server_facts,
)

TARGET_RATE = 50_000.0  # deliveries per second
TARGET_RATIO = 0.8  # of the bare statement
TARGET_FILTERED_SHARE = 0.5  # with content filters, of the rate without (decision 0044)
DEADLINE = timedelta(hours=72)
QUEUED_LEASE = timedelta(minutes=15)
PAYLOAD = b'{"id": "ord_0000", "amount": 4200, "items": [' + b"1, " * 150 + b"1]}"  # ~500 B

# Every filter matches both event types, through wildcards and literals alike.
ENDPOINT_FILTERS: list[list[str]] = [
    ["order.*"],
    ["order.created", "order.updated"],
    ["*"],
    ["invoice.paid", "order.*"],
    ["refund.*", "order.created", "order.updated"],
]
EVENT_TYPES = ("order.created", "order.updated")
# For the "with content filters" rows: one EventBridge pattern per endpoint, each matching
# every event (so the same deliveries are written), through different operators.
CONTENT_FILTERS: list[dict[str, Any]] = [
    {"payload": {"amount": [{"numeric": [">", 100]}]}},
    {"payload": {"id": [{"prefix": "ord_"}]}},
    {"type": [{"wildcard": "order.*"}], "payload": {"items": [1]}},
    {"$or": [{"payload": {"currency": ["EUR"]}}, {"payload": {"amount": [{"anything-but": 0}]}}]},
    {"payload": {"refunded": [{"exists": False}]}},
]

BARE_INSERT = """
INSERT INTO {table} (id, event_id, endpoint_id, tenant_id, tenant_group, deadline_at)
SELECT 'dlv_' || lpad(nextval('bench_dlv_seq')::text, 28, '0'), e.id, p.id, e.tenant_id,
       %(group)s, now() + %(deadline)s
FROM events e
JOIN endpoints p ON p.tenant_id = e.tenant_id
WHERE e.id BETWEEN %(first)s AND %(last)s
"""

Conn = Any  # a psycopg connection with dict rows


@dataclass(frozen=True)
class World:
    """The tenant, its group and the events every pass fans out."""

    url: str
    tenant_id: str
    group: str
    event_ids: list[str]  # sorted
    expected: int  # deliveries per pass


@dataclass
class Path_:
    """One way of producing the deliveries; `run` does one whole pass and returns the
    deliveries written."""

    name: str
    run: Callable[[Conn, World, int], int]
    baseline: bool = False
    content_filters: bool = False  # the endpoints carry CONTENT_FILTERS during the pass
    rates: dict[int, list[float]] = field(default_factory=dict)  # deliveries per second
    cpu: dict[int, list[float]] = field(default_factory=dict)  # backend CPU s per delivery

    def best(self, batch: int) -> float:
        """The best rate at one batch size: the pass the machine disturbed least."""
        return max(self.rates[batch])

    def median(self, batch: int) -> float:
        """The median rate at one batch size."""
        return statistics.median(self.rates[batch])

    def cpu_us(self, batch: int) -> float | None:
        """The median backend CPU microseconds per delivery, if it could be read."""
        values = self.cpu.get(batch)
        return statistics.median(values) * 1e6 if values else None


def fan_out_pass(conn: Conn, world: World, batch: int) -> int:
    """The real fan-out statement until the outbox is empty."""
    from hookline.repositories.deliveries import fan_out_batch

    total = 0
    while True:
        events, created = fan_out_batch(conn, limit=batch, deadline=DEADLINE)
        total += created
        if events == 0:
            return total


def fan_out_and_claim_pass(conn: Conn, world: World, batch: int) -> int:
    """Fan-out then claim_due per batch, as the fan-out Lambda does (minus SQS)."""
    from hookline.repositories.deliveries import claim_due, fan_out_batch

    total = 0
    while True:
        events, created = fan_out_batch(conn, limit=batch, deadline=DEADLINE)
        total += created
        claimed = claim_due(conn, limit=max(created, 1), lease=QUEUED_LEASE)
        if len(claimed) != created:
            raise RuntimeError(f"claimed {len(claimed)} of {created} new deliveries")
        if events == 0:
            return total


def bare_pass(table: str) -> Callable[[Conn, World, int], int]:
    """The bare INSERT ... SELECT over ranges of `batch` event ids into `table`."""
    statement = BARE_INSERT.format(table=table)

    def run(conn: Conn, world: World, batch: int) -> int:
        total = 0
        ids = world.event_ids
        for start in range(0, len(ids), batch):
            chunk = ids[start : start + batch]
            params = {
                "group": world.group,
                "deadline": DEADLINE,
                "first": chunk[0],
                "last": chunk[-1],
            }
            total += conn.execute(statement, params).rowcount
        return total

    return run


# --- the data -------------------------------------------------------------------------


def create_world(url: str, events: int) -> World:
    """A tenant, its 5 matching endpoints, `events` events with pending outbox rows, and
    through the management service where there is one."""
    import psycopg

    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import endpoint_service, tenant_service
    from hookline.management.access import Caller
    from hookline.settings import Settings

    settings = Settings.from_env({"DATABASE_URL": url, "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
                                  "HOOKLINE_ALLOW_HTTP_TARGETS": "1"})  # fmt: skip
    setup = Database(url, max_size=1)
    try:
        operator = Caller("bench", "*")
        tenant = tenant_service.create_tenant(
            setup, HooklineConfig(), operator, name="bench", group=None
        )
        for i, filters in enumerate(ENDPOINT_FILTERS):
            body = {
                "tenant_id": tenant["id"],
                "url": f"http://127.0.0.1:9/hook/{i}",
                "event_types": filters,
            }
            endpoint_service.create_endpoint(setup, settings, operator, body)
    finally:
        setup.close()
    ids = insert_events(url, tenant["id"], events, EVENT_TYPES, PAYLOAD)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE bench_dlv_seq")
        conn.execute("VACUUM ANALYZE")
    return World(url, tenant["id"], tenant["group"], ids, events * len(ENDPOINT_FILTERS))


def reset(conn: Conn, content_filters: bool) -> None:
    """Back to 'every event pending, no delivery', vacuumed, after a checkpoint; the
    endpoints with or without their content filters."""
    from psycopg.types.json import Jsonb

    ids = [r["id"] for r in conn.execute("SELECT id FROM endpoints ORDER BY id")]
    for endpoint_id, pattern in zip(ids, CONTENT_FILTERS, strict=True):
        conn.execute(
            "UPDATE endpoints SET content_filter = %s WHERE id = %s",
            (Jsonb(pattern) if content_filters else None, endpoint_id),
        )
    conn.execute("TRUNCATE deliveries, attempts")
    conn.execute("UPDATE outbox SET fanned_out_at = NULL")
    conn.execute("VACUUM ANALYZE outbox, deliveries")
    conn.execute("CHECKPOINT")


# --- the run --------------------------------------------------------------------------


def measure(paths: Sequence[Path_], world: World, batches: Sequence[int], rounds: int) -> None:
    """Every path at every batch size, `rounds` times, the paths taking turns."""
    import psycopg
    from psycopg.rows import dict_row

    with psycopg.connect(world.url, autocommit=True, row_factory=dict_row) as conn:
        for batch in batches:
            print(f"batch {batch} ...", file=sys.stderr, flush=True)
            for r in range(rounds):
                turn = list(paths[r % len(paths) :]) + list(paths[: r % len(paths)])
                for path in turn:
                    reset(conn, path.content_filters)
                    cpu = backend_cpu_seconds(conn)
                    start = time.perf_counter()
                    written = path.run(conn, world, batch)
                    elapsed = time.perf_counter() - start
                    cpu_after = backend_cpu_seconds(conn)
                    if written != world.expected:
                        raise RuntimeError(f"{path.name} wrote {written}, not {world.expected}")
                    path.rates.setdefault(batch, []).append(written / elapsed)
                    if cpu is not None and cpu_after is not None:
                        path.cpu.setdefault(batch, []).append((cpu_after - cpu) / written)


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Fan-out statement throughput against a bare INSERT ... SELECT."
    )
    parser.add_argument("--events", type=int, default=10_000, help="events per pass")
    parser.add_argument(
        "--batch-sizes", default="500,2000,10000", help="outbox rows per statement, comma-separated"
    )
    parser.add_argument("--rounds", type=int, default=2, help="passes per path and batch size")
    parser.add_argument(
        "--past-days",
        type=int,
        default=0,
        help="day partitions of past days to create first, as a long retention has (0040)",
    )
    args = parser.parse_args(argv)
    try:
        args.batch_sizes = [int(b) for b in str(args.batch_sizes).split(",") if b.strip()]
    except ValueError:
        parser.error("--batch-sizes takes comma-separated integers")
    if not args.batch_sizes or min(args.batch_sizes) < 1 or args.rounds < 1 or args.events < 1:
        parser.error("--events, --batch-sizes and --rounds must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Set up, measure every path at every batch size, print the table."""
    args = parse_args(argv)
    quiet_environment()
    paths = [
        Path_("bare -> deliveries", bare_pass("deliveries"), baseline=True),
        Path_("fan_out_batch", fan_out_pass),
        Path_("+ content filters", fan_out_pass, content_filters=True),
        Path_("+ claim_due", fan_out_and_claim_pass),
    ]
    machine = machine_facts()
    with bench_database("fanout") as (url, where):
        if args.past_days:
            make_past_partitions(url, args.past_days)
        print("creating events ...", file=sys.stderr, flush=True)
        world = create_world(url, args.events)
        facts = server_facts(url)
        measure(paths, world, args.batch_sizes, args.rounds)
    report(paths, args, world, where, facts, machine)
    return 0


def report(
    paths: Sequence[Path_],
    args: argparse.Namespace,
    world: World,
    where: str,
    facts: str,
    machine: str,
) -> None:
    """One line per batch size and path, with the ratio to the bare statement."""
    print(
        f"fan-out benchmark: {args.events} events x {len(ENDPOINT_FILTERS)} matching endpoints "
        f"= {world.expected} deliveries per pass, {args.rounds} passes each; {machine}"
    )
    print(f"postgres: {where}; {facts}")
    print()
    baseline = next(p for p in paths if p.baseline)
    rows = []
    for batch in args.batch_sizes:
        base, base_cpu = baseline.best(batch), baseline.cpu_us(batch)
        for path in paths:
            cpu = path.cpu_us(batch)
            rows.append(
                (
                    path.name,
                    batch,
                    f"{path.best(batch):,.0f}",
                    f"{path.median(batch):,.0f}",
                    f"{path.best(batch) / base:.2f}",
                    "-" if cpu is None else f"{cpu:.1f}",
                    "-" if cpu is None or base_cpu is None else f"{base_cpu / cpu:.2f}",
                )
            )
    print_table(
        ("path", "batch", "best/s", "median/s", "x bare", "server CPU us each", "x bare CPU"),
        rows,
    )
    print()
    fan_out = next(p for p in paths if p.run is fan_out_pass and not p.content_filters)
    top = max(args.batch_sizes, key=fan_out.best)
    rate, ratio = fan_out.best(top), fan_out.best(top) / baseline.best(top)
    verdict = "met" if rate >= TARGET_RATE and ratio >= TARGET_RATIO else "missed"
    print(
        f"target: fan_out_batch >= {TARGET_RATE:,.0f}/s and >= {TARGET_RATIO}x bare; "
        f"best at batch {top}: {rate:,.0f}/s, {ratio:.2f}x: {verdict}"
    )
    filtered = next(p for p in paths if p.content_filters)
    top = max(args.batch_sizes, key=filtered.best)
    share = filtered.best(top) / fan_out.best(top)
    print(
        f"target: with content filters >= {TARGET_FILTERED_SHARE}x without; best at batch "
        f"{top}: {filtered.best(top):,.0f}/s, {share:.2f}x: "
        f"{'met' if share >= TARGET_FILTERED_SHARE else 'missed'}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
