"""Deliver's two statements per SQS batch, call by call: the Postgres backend CPU of the batch
claim and of the batch record, beside the bare relay's one statement per batch in the same
run, and what each costs per call and per delivery.

Issue 24 sets the server CPU per delivered event at most 2x the bare relay's; with ten
endpoints deliver's statements are most of it (docs/performance.md, "What dominates now").
The pipeline bench measures the whole; this one isolates deliver's calls, so that a change of
the claim or the record is measured before it is built. Per cell (endpoints per event x
messages per batch), events go through the receiver handler as deployed (fan-out at receipt,
its SQS messages caught), and then each batch of their messages is claimed and recorded
(`claim_batch_to_send`, then `record_batch_delivered` with a 200 for every claim, as deliver
calls them: the day partition's functions, no server-side prepared statements). The **bare**
row marks as many of the bare relay's deliveries delivered (`bench/pipeline.py`'s statement).
The **floor** row is the least a relay that claims before it sends pays on the bare relay's
rows: a claim statement (the batch's rows marked as being sent, their payloads returned,
committed without waiting for the disk, as Hookline's claims are) and then the bare mark, two
transactions per batch with no cap, lease or attempt log. Time is the backend's from
`/proc/<pid>/schedstat` (nanoseconds, not 10 ms ticks).

`--variant FILE` (repeatable) measures other templates of the two functions beside the ones
built: FILE holds blocks of `-- replace:` (text of the built `hookline_make_hot_function`, as
`pg_get_functiondef` gives it), `-- with:` (what it becomes) and `-- end`; each must match once.
The edited maker is loaded under its own name, so the built functions stay, and its claim and
record are made for today's partition (bench/variants). The routes take turns batch by batch,
each on its own events, in a new order each round (a call right after another backend's runs
with cold caches: in a fixed order the first hot route paid 5-8 % more than an unedited copy
of itself), and the first rounds are warm-up. From the batches of 1 and of 10
the table derives each route's cost per call (fixed) and per delivery.

    .venv/bin/python bench/deliver_calls.py [--events 1000] [--widths 1,10] [--batches 1,10]
        [--variant bench/variants/FILE.sql ...] [--shape bench/shapes/FILE.sql[,...]]

`--shape` runs what-if SQL after the migrations, as `bench/pipeline.py --shape` does (a row
shape measured before a migration builds it): the built route is then the shape's.

Postgres is a durable local server (default fsync), or `DATABASE_URL` (a fresh database; the
CPU columns need the server on this machine). A benchmark: prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import os
import queue
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import backend_us, bench_database, machine_facts, print_table, quiet_environment
from pipeline import prepare
from pipeline_workers import BARE_INSERT, BARE_MARK, FLOOR_CLAIM, PAYLOAD_BYTES, receiver_step

LEASE = timedelta(seconds=60)
WARM_ROUNDS = 2
BUILT, BARE, FLOOR = "built", "bare", "floor"


@dataclass
class Cost:
    """One route's summed backend time in one cell."""

    claim_us: float = 0.0
    record_us: float = 0.0
    calls: int = 0
    deliveries: int = 0

    def per_call(self) -> float:
        return (self.claim_us + self.record_us) / self.calls

    def per_delivery(self) -> float:
        return (self.claim_us + self.record_us) / self.deliveries


@dataclass
class Route:
    """A way to run one batch: the built functions, a variant's, or the bare mark."""

    name: str
    claim_text: str | None = None  # the claim statement calling the variant's function
    record_text: str | None = None
    costs: dict[tuple[int, int], Cost] = field(default_factory=dict)


def edits(file: str) -> list[tuple[str, str]]:
    """A variant file's edits of the built template: blocks of `-- replace:`, the text as
    migration 0037 wrote it, `-- with:`, what it becomes, `-- end`."""
    found = re.findall(r"^-- replace:\n(.*?)^-- with:\n(.*?)^-- end$", Path(file).read_text(),
                       flags=re.M | re.S)  # fmt: skip
    if not found:
        raise SystemExit(f"{file}: no `-- replace:` ... `-- with:` ... `-- end` block")
    return found


def load_variants(conn: Any, files: list[str], day: str) -> list[Route]:
    """Each variant: the built maker's source with the file's edits, under its own name; its
    claim and record made for `day`'s partition; the statements deliver runs, calling those."""
    return load_edited(conn, [(Path(file).stem, edits(file)) for file in files], day)


def load_edited(
    conn: Any, variants: list[tuple[str, list[tuple[str, str]]]], day: str
) -> list[Route]:
    """`load_variants` for (name, edits) pairs: edits from one file or from several."""
    from hookline.repositories.hot_cursors import CLAIM, RECORD
    from hookline.sqlfiles import query

    built = conn.execute(
        "SELECT pg_get_functiondef('hookline_make_hot_function'::regproc)"
    ).fetchone()[0]
    routes = []
    for n, (name, changes) in enumerate(variants, 1):
        maker, source = f"bench_make_{n}", built
        for old, new in changes:
            if source.count(old) != 1:
                raise SystemExit(f"{name}: {source.count(old)} matches for {old[:60]!r}")
            source = source.replace(old, new)
        conn.execute(source.replace("hookline_make_hot_function", maker, 1))
        for kind in ("claim", "record"):
            conn.execute(
                f"SELECT {maker}(%s, %s, %s, '')", (kind, f"bench_{kind}_{n}", f"deliveries_d{day}")
            )
        routes.append(
            Route(
                name,
                query("claim_deliveries_to_send").replace(f"{CLAIM}(", f"bench_claim_{n}(", 1),
                query("record_deliveries_delivered").replace(f"{RECORD}(", f"bench_record_{n}(", 1),
            )
        )
    return routes


def hookline_batch(conn: Any, route: Route, day: str, batch: list[tuple[str, int]]) -> Cost:
    """Claim and record one batch through `route` as deliver does; each claim must take its
    slot and each record stand (else the figures would be of a different path)."""
    from hookline.repositories import hot_cursors
    from hookline.repositories.deliveries import AttemptRecord
    from hookline.repositories.delivery_batches import claim_batch_to_send, record_batch_delivered

    # the statement texts day_execute runs for `day`: the built functions' or the variant's
    hot_cursors._DAY_TEXTS.clear()
    if route.claim_text and route.record_text:
        hot_cursors._DAY_TEXTS[("claim_deliveries_to_send", day)] = route.claim_text
        hot_cursors._DAY_TEXTS[("record_deliveries_delivered", day)] = route.record_text
    start = backend_us(conn)
    claims = claim_batch_to_send(conn, batch, LEASE, datetime.now(UTC))
    claimed = backend_us(conn)
    slotted = sum(1 for c in claims.values() if c.wait_seconds == 0)
    if slotted != len(batch):
        raise SystemExit(f"{route.name}: {slotted} of {len(batch)} claimed with a slot")
    now = datetime.now(UTC)
    attempt = AttemptRecord(now, 5, 200, "ok", None, None)
    stood = record_batch_delivered(conn, [(c.job, attempt) for c in claims.values()])
    recorded = backend_us(conn)
    if len(stood) != len(batch):
        raise SystemExit(f"{route.name}: {len(stood)} of {len(batch)} records stood")
    return Cost(claimed - start, recorded - claimed, 1, len(batch))


def bare_batch(conn: Any, ids: list[int]) -> Cost:
    start = backend_us(conn)
    conn.execute(BARE_MARK, (ids,))
    return Cost(0.0, backend_us(conn) - start, 1, len(ids))


def floor_batch(claimer: Any, marker: Any, ids: list[int]) -> Cost:
    """The floor's claim on `claimer`, then the bare mark on `marker`; every row claimed."""
    start = backend_us(claimer)
    claimed = claimer.execute(FLOOR_CLAIM, (ids,)).fetchall()
    claim_us = backend_us(claimer) - start
    if len(claimed) != len(ids):
        raise SystemExit(f"floor: {len(claimed)} of {len(ids)} claimed")
    start = backend_us(marker)
    marker.execute(BARE_MARK, (ids,))
    return Cost(claim_us, backend_us(marker) - start, 1, len(ids))


def run_cell(
    url: str, source_id: str, width: int, size: int, events: int, routes: list[Route]
) -> None:
    """Each route's batches of `size` messages of `events` events fanned out to `width`
    endpoints, taking turns; their costs after the warm-up rounds land in `route.costs`."""
    import psycopg
    from psycopg.rows import dict_row

    from hookline.queues import DeliveryMessage
    from tests.support.signers import stripe_event

    os.environ["BENCH_SOURCE_ID"], os.environ["BENCH_ENDPOINTS"] = source_id, str(width)
    caught: queue.Queue[list[str]] = queue.Queue()
    receive = receiver_step("receiver", caught, queue.Queue())
    bare = psycopg.connect(url, autocommit=True, prepare_threshold=None)
    claimer = psycopg.connect(url, autocommit=True, prepare_threshold=None)
    claimer.execute("SET synchronous_commit = off")
    hot = psycopg.connect(url, autocommit=True, prepare_threshold=None, row_factory=dict_row)
    day = datetime.now(UTC).strftime("%Y%m%d")
    runs: list[tuple[Route, list[Callable[[], Cost]]]] = []
    for route in routes:
        if route.name in (BARE, FLOOR):
            ids: list[int] = []
            for n in range(events):
                event_id = f"evt_{route.name}{width}x{size}n{n}"
                body = stripe_event(event_id, size=PAYLOAD_BYTES)
                ids += [row[0] for row in bare.execute(BARE_INSERT, (event_id, body, width))]
            chunks = [ids[i : i + size] for i in range(0, len(ids), size)]
            if route.name == BARE:
                runs.append((route, [lambda c=c: bare_batch(bare, c) for c in chunks]))
            else:
                runs.append((route, [lambda c=c: floor_batch(claimer, bare, c) for c in chunks]))
            continue
        for _ in range(events):
            receive()
        messages: list[tuple[str, int]] = []
        while not caught.empty():
            messages += [DeliveryMessage.parse(body) for body in caught.get()]
        if len(messages) != events * width:
            raise SystemExit(f"{route.name}: {len(messages)} deliveries made for {events} events")
        batches = [messages[i : i + size] for i in range(0, len(messages), size)]
        runs.append((route, [lambda b=b, r=route: hookline_batch(hot, r, day, b) for b in batches]))
    for round_ in range(min(len(steps) for _, steps in runs)):
        # the routes in a new order each round: a route that runs right after another
        # backend's calls finds its caches cold, and no route may always be that one
        for route, steps in random.Random(round_).sample(runs, len(runs)):
            cost = steps[round_]()
            if round_ >= WARM_ROUNDS:
                total = route.costs.setdefault((width, size), Cost())
                total.claim_us += cost.claim_us
                total.record_us += cost.record_us
                total.calls += 1
                total.deliveries += cost.deliveries
    bare.close()
    claimer.close()
    hot.close()


def report(routes: list[Route], widths: list[int], sizes: list[int]) -> None:
    bare = next(p for p in routes if p.name == BARE)
    rows = []
    for width in widths:
        for size in sizes:
            base = bare.costs[(width, size)].per_delivery()
            for route in routes:
                c = route.costs[(width, size)]
                claim = "-" if route is bare else f"{c.claim_us / c.calls:.0f}"
                each = c.per_delivery()
                rows.append((width, size, route.name, claim, f"{c.record_us / c.calls:.0f}",
                             f"{each:.0f}", f"{each / base:.2f}"))  # fmt: skip
    print_table(("endpoints", "batch", "route", "claim us/call", "record us/call",
                 "us/delivery", "x bare"), rows)  # fmt: skip
    if len(sizes) < 2:
        return
    low, high = min(sizes), max(sizes)
    print(f"\nper call and per delivery, from the batches of {low} and {high}:")
    rows = []
    for width in widths:
        for route in routes:
            a, b = route.costs[(width, low)], route.costs[(width, high)]
            each = (b.per_call() - a.per_call()) / (high - low)
            rows.append((width, route.name, f"{a.per_call() - low * each:.0f}", f"{each:.0f}"))
    print_table(("endpoints", "route", "fixed us/batch", "us per delivery"), rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=1000, help="events per route and cell")
    parser.add_argument("--widths", default="1,10", help="endpoints per event")
    parser.add_argument("--batches", default="1,10", help="messages per SQS batch")
    parser.add_argument("--variant", action="append", default=[], help="a maker's SQL file")
    parser.add_argument(
        "--shape", default="", help="what-if SQL files run after the migrations, comma-separated"
    )
    args = parser.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    sizes = [int(s) for s in args.batches.split(",")]
    quiet_environment()
    os.environ.update(HOOKLINE_DATABASE_PROXIED="true", HOOKLINE_FANOUT_AT_RECEIPT="true")
    with bench_database("deliver_calls") as (url, where):
        os.environ["DATABASE_URL"] = url
        import psycopg

        sources = prepare(url, "http://127.0.0.1:9", widths)
        with psycopg.connect(url, autocommit=True) as conn:
            for shape in [f for f in args.shape.split(",") if f]:
                conn.execute(Path(shape).read_bytes())  # a local file: the bench's own what-if
            day = datetime.now(UTC).strftime("%Y%m%d")
            routes = [
                Route(BARE),
                Route(FLOOR),
                Route(BUILT),
                *load_variants(conn, args.variant, day),
            ]
        for width in widths:
            for size in sizes:
                print(f"{width} endpoints, batches of {size} ...", file=sys.stderr, flush=True)
                run_cell(url, sources[width], width, size, args.events, routes)
        print(f"postgres: {where}; {machine_facts()}")
        if args.shape:
            print(f"what-if shape: {args.shape}")
        report(routes, widths, sizes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
