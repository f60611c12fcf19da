"""What retention's archive of one day costs the function that runs it: time and memory, as the
day grows (decisions 0039-0041, 0116-0118).

Retention archives a day in slices of ~50,000 events, each in its own transaction
(`hookline.retention`): it streams each slice's lines as Postgres makes them, encodes each
tenant's into a gzip object as they come (held a part at a time), then counts the slices
again and drops the day. Reconcile begins a day in its first run of each hour and goes on
with it in every run after (`scheduled_retention`), each with `worker_memory_mb` (256) of
memory and what is left of `reconcile_timeout_seconds` (120); a day's slices may take several
runs. This bench says what a day costs, and so what rate retention keeps up with.

`--kept K` adds a second tenant with K events in the day and a year's retention, so the day
is not whole: the first tenant's share is archived and deleted a slice at a time, row by
row, and the day stays (decision 0118, amended).

For each `--events` N: a day of N events (1 KB payloads, one tenant) in today's partitions,
each with `--endpoints` delivered deliveries, each holding its first attempt on its row as the
record writes it (decision 0109), one in twenty replayed once (its second attempt a row of
`attempts`).
Then, each in a fresh interpreter:

* **hookline**: `apply_retention` as reconcile calls it (a 1-day retention, two days later),
  with an archive store that keeps only the sizes it is given (no S3: the upload's time and
  its copy of the body are not counted);
* **streaming** (the baseline, in the same run): the least an archiver of the same objects
  pays: the same selection, streamed the same way, its lines into one gzip stream, nothing
  kept or counted, no drop. Read-only: it runs first.

The table gives each one's wall seconds, its peak resident memory over the interpreter's
before the run (VmHWM, reset at the start), and the gzip bytes; below it, the seconds per
1,000 events (the slope of the largest two N) and the largest day reconcile's 120 s fit.

    .venv/bin/python bench/retention_archive.py [--events 5000,20000] [--endpoints 1] [--kept K]

Postgres is `DATABASE_URL` if set, else a durable local server in a temp dir (bench/common.py).
A benchmark: it prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import zlib
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from common import bench_database, insert_events, machine_facts, print_table, server_facts

from hookline.archive import PART_BYTES

PAYLOAD = b'{"order": "ord_0000", "items": [' + b'"item", ' * 110 + b'"item"]}'  # ~1 KB
DELIVERED = """
INSERT INTO deliveries (id, event_id, endpoint_id, tenant_id, tenant_group, state,
                        attempt_count, deadline_at, created_at, updated_at, finished_at,
                        last_status, enqueue_seq, first_attempt_id, first_attempted_at,
                        first_duration_ms, first_status, first_excerpt, first_headers)
SELECT hookline_delivery_id(e.id, 'ep_bench_' || k), e.id, 'ep_bench_' || k, e.tenant_id,
       'standard', 'delivered', 1, now() + interval '1 day', e.received_at, now(), now(), 200, 1,
       nextval(pg_get_serial_sequence('attempts', 'id')), now(), 12, 200, 'ok',
       '{"content-type": "text/plain"}'
FROM events e CROSS JOIN generate_series(1, %(endpoints)s) AS k
WHERE NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id)
"""
# One delivery in twenty replayed once: its second attempt is a row of `attempts`.
REPLAYED = """
INSERT INTO attempts (delivery_id, attempted_at, duration_ms, status_code, response_excerpt)
SELECT id, now(), 30, 200, 'ok' FROM deliveries WHERE random() < 0.05
"""
# What is left for retention of each reconcile run (120 s, less its other steps and the
# handler's 15 s reserve): ~90 s when they are short, ~60 at high rates; a run every five
# minutes, less the hour a new day may wait for the hour's run: seconds of archive a day.
RUN_S = (60, 90)
DAILY_S = tuple(s * (24 * 12 - 12) for s in RUN_S)


class SizesOnly:
    """An archive store that keeps the sizes of what it is given, not the bytes."""

    def __init__(self) -> None:
        self.sizes: dict[str, int] = {}

    def put(self, key: str, body: bytes) -> None:
        self.sizes[key] = len(body)

    def put_parts(self, key: str, parts: Iterable[bytes]) -> None:
        self.sizes[key] = sum(len(part) for part in parts)

    def keys(self, prefix: str) -> list[str]:
        return [k for k in self.sizes if k.startswith(prefix)]

    def get(self, key: str) -> bytes:
        raise KeyError(key)

    def delete(self, keys: list[str]) -> int:
        return 0


def seed(url: str, events: int, endpoints: int, kept: int) -> None:
    """Today's partitions made again, and a day of `events` delivered events (and `kept` of
    a tenant kept a year)."""
    import psycopg

    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import tenant_service
    from hookline.management.access import Caller
    from hookline.retention import ensure_partitions, set_tenant_retention

    db = Database(url, max_size=1)
    try:
        ensure_partitions(db, as_of=datetime.now(UTC), ahead_days=1)
        tenant, keeper = (
            tenant_service.create_tenant(
                db, HooklineConfig(), Caller("bench", "*"), name=f"{name}{events}", group=None
            )
            for name in ("bench", "kept")
        )
        set_tenant_retention(db, keeper["id"], 365)
    finally:
        db.close()
    insert_events(url, tenant["id"], events, ["order.created"], PAYLOAD)
    if kept:
        insert_events(url, keeper["id"], kept, ["order.created"], PAYLOAD)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(DELIVERED, {"endpoints": endpoints})
        conn.execute(REPLAYED)
        conn.execute("VACUUM ANALYZE deliveries")
        conn.execute("VACUUM ANALYZE attempts")


def child(kind: str, url: str, kept: bool) -> dict[str, Any]:
    """One archive of the day in this interpreter: seconds, peak MB over the start, bytes."""
    from hookline.db import Database
    from hookline.repositories import retention as repo
    from hookline.retention import RetentionPolicy, apply_retention

    db = Database(url, max_size=1)
    with db.connection() as conn:
        conn.execute("SELECT 1")
    start_kb = _rss_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from here
    started = time.perf_counter()
    if kind == "hookline":
        store = SizesOnly()
        as_of = datetime.now(UTC) + timedelta(days=2)
        report = apply_retention(db, store, RetentionPolicy(ledger_days=1), as_of=as_of)
        today = datetime.now(UTC).date().isoformat()
        dropped = today in report.days_dropped
        shared = bool(report.removed["events"]) and not dropped
        if report.errors or not (shared if kept else dropped):
            raise SystemExit(f"retention did not retire the day: {report.as_dict()}")
        written = sum(store.sizes.values())
    else:
        day = datetime.now(UTC).date()
        sink = zlib.compressobj(wbits=31)  # a gzip stream
        written = 0
        with db.connection() as conn, conn.transaction():
            bounds = repo.day_bounds(conn, day)
            for row in repo.archive_selection(conn, bounds, None, with_ids=False):
                written += len(sink.compress(row["line"].encode() + b"\n"))
        written += len(sink.flush())
    seconds = time.perf_counter() - started
    peak_kb = _rss_kb("VmHWM")
    db.close()
    return {"seconds": seconds, "peak_mb": (peak_kb - start_kb) / 1024, "bytes": written}


def _rss_kb(field: str) -> int:
    """This process's resident memory (VmRSS) or its peak since the last reset (VmHWM), KB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(kind: str, url: str, kept: int) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(Path(__file__)), "--child", kind, "--url", url]
        + (["--kept", str(kept)] if kept else []),
        capture_output=True, text=True,
    )  # fmt: skip
    if out.returncode:
        raise SystemExit(f"the {kind} archive failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", default="5000,20000", help="day sizes, comma-separated")
    parser.add_argument("--endpoints", type=int, default=1, help="deliveries per event")
    parser.add_argument(
        "--kept", type=int, default=0, help="events of a tenant kept a year (the day stays)"
    )
    parser.add_argument("--child", choices=["hookline", "streaming"], help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.url, bool(args.kept))))
        return
    sizes = [int(n) for n in args.events.split(",")]
    rows, slopes = [], []
    with bench_database("retention") as (url, where):
        print(f"# {machine_facts()}; Postgres: {where}, {server_facts(url)}")
        for n in sizes:
            seed(url, n, args.endpoints, args.kept)
            floor = measure("streaming", url, args.kept)
            built = measure("hookline", url, args.kept)
            rows.append([n, args.endpoints,
                         f"{built['seconds']:.2f}", f"{built['peak_mb']:.1f}",
                         f"{floor['seconds']:.2f}", f"{floor['peak_mb']:.1f}",
                         f"{built['bytes']:,}"])  # fmt: skip
            slopes.append((n, built))
    print_table(["events", "endpoints", "hookline s", "hookline peak MB", "streaming s",
                 "streaming peak MB", "gzip bytes"], rows)  # fmt: skip
    if len(slopes) >= 2:
        (n0, a), (n1, b) = slopes[-2], slopes[-1]
        per_event = (b["seconds"] - a["seconds"]) / (n1 - n0)
        print(
            f"\nhookline: {per_event * 1000:.3f} s per 1,000 events of a day; peak memory"
            f" {b['peak_mb']:.1f} MB at {n1:,} (held: up to two parts of"
            f" {PART_BYTES // 2**20} MiB, whatever the day)"
        )
        if per_event > 0:
            low, high = (daily / per_event / 86_400 for daily in DAILY_S)
            print(
                f"retention keeps up with ~{low:,.0f}-{high:,.0f} events/s sustained with"
                f" ~{RUN_S[0]}-{RUN_S[1]} s of each 5-minute reconcile run, before the"
                " upload's time"
            )


if __name__ == "__main__":
    main()
