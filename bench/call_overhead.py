"""What a call of deliver's claim costs before it does anything: the built claim called with no
ids and with one id it does not find, beside `SELECT 1`, a `SELECT` of the claim's six typed
parameters, and the steps of `bench/variants/overhead`, applied in turn, each on the ones
before: the claim without its main statement, then without its lock statement, then without
its bounds (its shell: a table function that returns nothing). The differences say where a
call's fixed cost goes; `bench/deliver_calls.py` measures the claim and record with rows.
Beside them, a fan-out run's statements with nothing to do, as a scheduled run makes them
(their scans read every day partition) and as a nudged one (the last day's).
`--variant FILE` adds a probe of the claim's template applied alone (as
`bench/deliver_calls.py`'s).

Each route has its own connection (autocommitted, no prepared statements, as behind RDS
Proxy); the routes take turns call by call, in a new order each round, and the first `--warm`
rounds are not counted. Time is the backend's own, from `/proc/<pid>/schedstat`.
`--past-days N` first makes the day partitions of the N days before today (99 in all with
the default retention's 90), which the claim's lookup of events through their parent plans.

    .venv/bin/python bench/call_overhead.py [--calls 2000] [--warm 200] [--past-days 90]
        [--variant bench/variants/FILE.sql ...]

Postgres is a durable local server (default fsync), or `DATABASE_URL` (a fresh database; the
CPU columns need the server on this machine). A benchmark: prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import random
import statistics
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
from deliver_calls import edits, load_edited

BUILT = "built claim"
# A fan-out run's statements with nothing to do, as a scheduled run makes them (the outbox and
# due scans read every day's partial index, decision 0072: they show what the days kept cost)
# and as a run nudged after an accept (the last day's, decision 0101): the round, and for a
# tenant with content filters or orderings fan_out_batch and claim_due_deliveries too. Each
# has its parameters (None: none), a nudged one the bound the fan-out passes.
FANOUT = {
    "empty fan-out round": "fan_out_and_claim",
    "fan_out_batch, nothing to do": "fan_out_batch",
    "claim_due, nothing due": "claim_due_deliveries",
}


def fanout_routes() -> dict[str, tuple[str, dict[str, Any] | None]]:
    from hookline.fanout import NUDGED_RUN_LOOKS_BACK
    from hookline.ids import ulid_time
    from hookline.sqlfiles import query

    since = ulid_time(datetime.now(UTC) - NUDGED_RUN_LOOKS_BACK)
    shared = {"limit": 500, "deadline": timedelta(days=3), "lease": timedelta(minutes=15)}
    routes: dict[str, tuple[str, dict[str, Any] | None]] = {}
    for run, bound in (("scheduled", None), ("nudged", since)):
        params = {**shared, "due_limit": 500, "since": bound}
        for name, sql in FANOUT.items():
            routes[f"{name}, {run}"] = (query(sql), params)
    return routes


PARAMETERS = (
    "%s::text[], %s::integer[], %s::interval, %s::timestamptz, %s::double precision, %s::boolean"
)
STEPS = sorted(str(p) for p in (Path(__file__).parent / "variants" / "overhead").glob("*.sql"))


def routes(conn: Any, probes: list[str], day: str) -> dict[str, str | None]:
    """Each claim route's statement (None: `SELECT 1`, without parameters): the steps from the
    last (the shell) back to the built claim, then each probe alone."""
    statements: dict[str, str | None] = {
        "SELECT 1": None,
        "SELECT of the six parameters": f"SELECT {PARAMETERS}",
    }
    taken: list[tuple[str, str]] = []
    steps = []
    for step in STEPS:
        taken = taken + edits(step)
        steps.append((Path(step).stem, taken))
    variants = steps[::-1] + [(Path(probe).stem, edits(probe)) for probe in probes]
    for n, route in enumerate(load_edited(conn, variants, day), 1):
        statements[route.name] = f"SELECT * FROM bench_claim_{n}({PARAMETERS})"
        if n == len(steps):
            statements[BUILT] = f"SELECT * FROM hookline_claim_batch_d{day}({PARAMETERS})"
    return statements


def measure(
    url: str,
    statements: dict[str, str | None],
    fixed: dict[str, tuple[str, dict[str, Any] | None]],
    calls: int,
    warm: int,
) -> list[list[str]]:
    """Per route: backend µs per call with no ids and with one id not found (the claim routes)
    or with its own parameters (`fixed`), taking turns."""
    import psycopg

    from hookline.ids import new_id

    unknown = new_id("dlv")  # today's: the day function's bounds hold it, no row has it
    cases = [(name, ids) for name in statements for ids in ([], [unknown])]
    cases += [(name, []) for name in fixed]
    conns = {case: psycopg.connect(url, autocommit=True, prepare_threshold=None)
             for case in map(repr, cases)}  # fmt: skip
    spent: dict[str, list[float]] = {repr(case): [] for case in cases}
    for n in range(warm + calls):
        for name, ids in random.Random(n).sample(cases, len(cases)):
            key = repr((name, ids))
            conn = conns[key]
            statement, params = fixed.get(name) or (
                statements[name],
                (ids, [1] * len(ids), timedelta(seconds=45), datetime.now(UTC), 45.0, False),
            )
            before = backend_us(conn)
            if statement is None:
                conn.execute("SELECT 1").fetchall()
            else:
                conn.execute(statement, params).fetchall()
            if n >= warm:
                spent[key].append(backend_us(conn) - before)
    for conn in conns.values():
        conn.close()
    built = statistics.mean(spent[repr((BUILT, []))])
    rows = []
    for name in [*statements, *fixed]:
        none = statistics.mean(spent[repr((name, []))])
        with_one = spent.get(repr((name, [unknown])))
        one = f"{statistics.mean(with_one):.0f}" if with_one else "-"
        rows.append([name, f"{none:.0f}", one, f"{none - built:+.0f}"])
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warm", type=int, default=200)
    parser.add_argument("--past-days", type=int, default=0)
    parser.add_argument("--variant", action="append", default=[], help="a probe, alone")
    args = parser.parse_args(argv)
    quiet_environment()
    with bench_database("overhead") as (url, where):
        import psycopg

        if args.past_days:
            make_past_partitions(url, args.past_days)
        day = datetime.now(UTC).strftime("%Y%m%d")
        with psycopg.connect(url, autocommit=True) as conn:
            statements = routes(conn, args.variant, day)
        rows = measure(url, statements, fanout_routes(), args.calls, args.warm)
    print(f"\npostgres: {where}; {machine_facts()}; {args.calls} calls a route "
          f"after {args.warm}; --past-days {args.past_days}\n")  # fmt: skip
    print_table(["route", "no ids µs", "one id not found µs", "no ids vs built claim"], rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
