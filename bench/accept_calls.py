"""The receiver's statement, call by call: the Postgres backend CPU of `hookline_accept_event`
(an event, its dedupe key and, fanned out at receipt, its deliveries) beside the bare relay's
insert of an event and its deliveries, in the same run.

`bench/pipeline.py` measures the receiver stage inside the whole pipeline, where the other
stages' backends share the two cores and their caches; this bench calls the statement alone,
so that a change of the receiver's function is measured before it is built. Each route has
its own connection and calls its statement once per event (autocommitted, no prepared
statements, as behind RDS Proxy); the routes take turns call by call, in a new order each
round, and the first `--warm` rounds are not counted. Time is the backend's own, from
`/proc/<pid>/schedstat`. The **built** route runs the receiver's own query
(`accept_event`, the day's function as migrated); the **bare** route the pipeline bench's
bare insert.

`--variant FILE` (repeatable) measures another text of the function beside the built one:
FILE holds blocks of `-- replace:` (text of the built `hookline_accept_event`, as
`pg_get_functiondef` gives it), `-- with:` and `-- end`, as `bench/deliver_calls.py`'s
variants do; the edited function is loaded under its own name. After every call, any
in-flight row a route made for its deliveries is deleted on another connection, outside the
measured time, as deliver's record would delete it (a variant that claims at receipt would
otherwise count its own claims against the endpoint's cap).

    .venv/bin/python bench/accept_calls.py [--calls 3000] [--warm 300] [--widths 1,10]
        [--variant bench/variants/accept/FILE.sql ...] [--past-days 90]

Postgres is a durable local server (default fsync), or `DATABASE_URL` (a fresh database; the
CPU columns need the server on this machine). A benchmark: prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
from dataclasses import dataclass, field
from datetime import timedelta
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
from deliver_calls import edits
from pipeline import prepare
from pipeline_workers import BARE_INSERT, PAYLOAD_BYTES

BARE, BUILT = "bare", "built"
FUNCTION = "hookline_accept_event"


def load_variants(conn: Any, files: list[str]) -> dict[str, str]:
    """Each variant's name and the statement calling it: the built function's source with the
    file's edits, under its own name."""
    from hookline.sqlfiles import query

    built = conn.execute(f"SELECT pg_get_functiondef('{FUNCTION}'::regproc)").fetchone()[0]
    statements = {}
    for n, file in enumerate(files, 1):
        source = built
        for old, new in edits(file):
            if source.count(old) != 1:
                raise SystemExit(f"{file}: {source.count(old)} matches for {old[:60]!r}")
            source = source.replace(old, new)
        conn.execute(source.replace(f"{FUNCTION}(", f"bench_accept_{n}(", 1))
        statements[Path(file).stem] = query("accept_event").replace(
            f"{FUNCTION}(", f"bench_accept_{n}(", 1
        )
    return statements


@dataclass
class Calls:
    """One route's counted calls at one width."""

    us: list[float] = field(default_factory=list)  # backend µs of each call
    claims: int = 0  # in-flight rows its calls made (deleted after each)


def run_width(
    url: str, source_id: str, width: int, calls: tuple[int, int], statements: dict[str, str]
) -> dict[str, Calls]:
    """Each route's calls, (warm-up, counted) events to `width` endpoints, taking turns."""
    import psycopg
    from psycopg.types.json import Jsonb

    from hookline.ids import new_id
    from tests.support.signers import stripe_event

    admin = psycopg.connect(url, autocommit=True)
    (tenant_id,) = admin.execute(
        "SELECT tenant_id FROM sources WHERE id = %s", (source_id,)
    ).fetchone() or (None,)
    conns = {
        name: psycopg.connect(url, autocommit=True, prepare_threshold=None) for name in statements
    }
    spent = {name: Calls() for name in statements}
    warm, counted = calls
    for n in range(warm + counted):
        for name in random.Random(n).sample(list(statements), len(statements)):
            conn, event_id = conns[name], new_id("evt")
            params: Any
            body = stripe_event(event_id, size=PAYLOAD_BYTES)
            if name == BARE:
                statement, params = BARE_INSERT, (event_id, body, width)
            else:
                statement, params = statements[name], {
                    "id": event_id, "tenant_id": tenant_id, "source_id": source_id,
                    "origin": source_id, "type": "charge.succeeded", "dedupe_key": event_id,
                    "payload": body, "content_type": "application/json",
                    "headers": Jsonb({"content-type": "application/json"}), "traceparent": None,
                    "deadline": timedelta(days=3), "lease": timedelta(seconds=60),
                }  # fmt: skip
            before = backend_us(conn)
            rows = conn.execute(statement, params).fetchall()
            after = backend_us(conn)
            made = [row[2] for row in rows if name != BARE and row[2] is not None]
            if len(rows) < width:
                raise SystemExit(f"{name}: {len(rows)} rows for an event to {width} endpoints")
            claims = 0
            if made:  # what deliver's record would delete: not this route's cost
                claims = admin.execute(
                    "DELETE FROM deliveries_in_flight WHERE id = ANY(%s)", (made,)
                ).rowcount
            if n >= warm:
                spent[name].us.append(after - before)
                spent[name].claims += claims
    for conn in (admin, *conns.values()):
        conn.close()
    return spent


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=3000, help="counted calls per route and width")
    parser.add_argument("--warm", type=int, default=300, help="uncounted calls first")
    parser.add_argument("--widths", default="1,10", help="endpoints per event")
    parser.add_argument("--variant", action="append", default=[], help="an edit file")
    parser.add_argument(
        "--past-days", type=int, default=0,
        help="make this many earlier days' partitions first, as retention keeps them",
    )  # fmt: skip
    args = parser.parse_args(argv)
    widths = [int(w) for w in args.widths.split(",")]
    quiet_environment()
    with bench_database("accept_calls") as (url, where):
        import psycopg

        from hookline.sqlfiles import query

        sources = prepare(url, "http://127.0.0.1:9", widths)
        if args.past_days:
            make_past_partitions(url, args.past_days)
        with psycopg.connect(url, autocommit=True) as conn:
            statements = {
                BARE: BARE_INSERT,
                BUILT: query("accept_event"),
                **load_variants(conn, args.variant),
            }
        rows = []
        for width in widths:
            print(f"{width} endpoints ...", file=sys.stderr, flush=True)
            spent = run_width(url, sources[width], width, (args.warm, args.calls), statements)
            base = statistics.median(spent[BARE].us)
            for name, made in spent.items():
                median, mean = statistics.median(made.us), statistics.fmean(made.us)
                claims = made.claims / len(made.us)
                rows.append((width, name, f"{median:.0f}", f"{mean:.0f}", f"{median / base:.2f}",
                             f"{claims:.1f}"))  # fmt: skip
        print(f"postgres: {where}; {machine_facts()}; {args.calls} calls per route and width; "
              f"--past-days {args.past_days}")  # fmt: skip
        print_table(("endpoints", "route", "median us/call", "mean us/call", "x bare",
                     "claims/call"), rows)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
