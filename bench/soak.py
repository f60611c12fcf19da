"""Soak: does the database level off? Drives the pipeline's own statements through N simulated
days — publish (the real ingest), fan-out (the real statement), delivery outcomes and attempts,
then a retention run at the end of each day with the clock moved (`as_of`) and the archive in a
moto S3 — and prints the size of each table per simulated day.

    PYTHONPATH=layers/core:. python bench/soak.py --days 8 --events 2000
    PYTHONPATH=layers/core:. python bench/soak.py --days 8 --autovacuum default  # or tuned

Each simulated day is cut into `--slices`: publish a slice, fan it out and claim it (the real
`fan_out_and_claim`), then each delivery as the deliverer does it — claimed to send (an
endpoint slot taken), and delivered (slot freed), or for 10 % a 503 first: the attempt
recorded, the slot freed, the delivery queued again and delivered in the next slice. So every
delivery row is updated two or four times, outbox rows once, in-flight rows (the slots,
decision 0085) inserted and deleted — the churn autovacuum has to keep up with.
`--autovacuum` picks the storage parameters of each day's deliveries and outbox partitions
(`default`: none, as deployed; `tuned`: a 2 % vacuum scale factor, measured and not taken,
decision 0052); on a server it started itself the soak sets
`autovacuum_naptime` to `--naptime` seconds so autovacuum passes as often per simulated day,
relative to the updates, as it does per real day (see docs/performance.md).

Events get ids of their simulated day (the ids carry the time the partitions are cut by), so
day d's rows land in day d's partitions, and retention (1 day by default) drops them two
days later. The figures are sizes, not speeds: they are the same on a busy machine.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bench_database, machine_facts, print_table, quiet_environment

quiet_environment()

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402

import hookline  # noqa: E402
from hookline import ids  # noqa: E402
from hookline.archive import S3Archive  # noqa: E402
from hookline.config import HooklineConfig  # noqa: E402
from hookline.db import Database  # noqa: E402
from hookline.management import endpoint_service, tenant_service  # noqa: E402
from hookline.management.access import Caller  # noqa: E402
from hookline.repositories import deliveries as delivery_repo  # noqa: E402
from hookline.repositories import ledger  # noqa: E402
from hookline.repositories import retention as repo_retention  # noqa: E402
from hookline.repositories.delivery_batches import FailedRecord, record_batch_failed  # noqa: E402
from hookline.repositories.retention import table_sizes  # noqa: E402
from hookline.retention import RetentionPolicy, apply_retention  # noqa: E402
from hookline.settings import Settings  # noqa: E402

TABLES = ("events", "outbox", "deliveries", "attempts", "event_keys")
MB = 1024 * 1024
# The storage parameters a soak arm gives each day's partitions (decision 0052).
AUTOVACUUM = {
    "default": {},
    "tuned": {
        "deliveries": "autovacuum_vacuum_scale_factor = 0.02",
        "outbox": "autovacuum_vacuum_scale_factor = 0.02",
    },
}
CHURNED = ("deliveries", "outbox")  # the day partitions watched, and the in-flight rows
IN_FLIGHT = "deliveries_in_flight"
LEASE = timedelta(seconds=60)


def simulated_ids(clock: list[datetime]) -> None:
    """Ledger ids at the simulated time: the partition a row lands in follows the clock."""
    ledger.new_id = lambda prefix: (  # type: ignore[assignment]
        f"{prefix}_{ids.ulid(int(clock[0].timestamp() * 1000), os.urandom(10))}"
    )


def set_partition_options(conn: Any, day: datetime, arm: str) -> None:
    """The arm's storage parameters on the day's partitions (RESET for `default`, so a run
    on a database that has some keeps to the arm)."""
    for table in CHURNED:
        name = f"{table}_d{day:%Y%m%d}"
        options = AUTOVACUUM[arm].get(table)
        conn.execute(
            f"ALTER TABLE {name} SET ({options})" if options else
            f"ALTER TABLE {name} RESET (autovacuum_vacuum_scale_factor)"
        )  # fmt: skip


def deliver_slice(db: Database, retry_share: float, again: list[Any]) -> list[Any]:
    """Fan out and claim what was published, then deliver each (and the retries of the
    previous slice) as the deliverer does; returns this slice's retries."""
    import random

    with db.connection() as conn:
        claimed = []
        while True:
            made = delivery_repo.fan_out_and_claim(
                conn, limit=500, deadline=timedelta(hours=72), lease=LEASE, due_limit=0
            ).to_send
            if not made:
                break
            claimed += [(e.id, e.seq) for e in made]
        retries = []
        for delivery_id, seq in claimed + again:
            claim = delivery_repo.claim_to_send(conn, delivery_id, seq, LEASE, datetime.now(UTC))
            if claim is None:
                continue
            attempt = delivery_repo.AttemptRecord(datetime.now(UTC), 20, 200, None, None)
            if (delivery_id, seq) in again or random.random() >= retry_share:
                delivery_repo.record_delivered(conn, claim.job, attempt)
                continue
            failed = delivery_repo.AttemptRecord(datetime.now(UTC), 20, 503, None, "http_503")
            retry = delivery_repo.Finish(
                "queued", True, 503, "http_503", datetime.now(UTC), datetime.now(UTC) + LEASE, True
            )
            recorded = record_batch_failed(conn, [FailedRecord(claim.job, failed, retry)])
            seq2 = recorded.stood.get(delivery_id)
            if seq2 is not None:
                retries.append((delivery_id, seq2))
    return retries


def churn(conn: Any, day: datetime) -> dict[str, dict[str, int]]:
    """Size and tuple counts of the day's churned partitions and the in-flight rows."""
    names = [f"{t}_d{day:%Y%m%d}" for t in CHURNED] + [IN_FLIGHT]
    found = conn.execute(
        "SELECT relname, pg_total_relation_size(relid) AS bytes, n_live_tup AS live,"
        " n_dead_tup AS dead, autovacuum_count AS vacuums, n_tup_upd AS upd,"
        " n_tup_hot_upd AS hot FROM pg_stat_user_tables WHERE relname = ANY(%s)",
        (names,),
    ).fetchall()
    return {r["relname"].split("_d")[0] if "_d2" in r["relname"] else r["relname"]: dict(r)
            for r in found}  # fmt: skip


def hot_share(stats: dict[str, int]) -> str:
    """The share of a table's updates that were HOT (`-` without updates)."""
    return f"{100 * stats['hot'] / stats['upd']:.0f}" if stats["upd"] else "-"


def main() -> None:
    """Run the soak and print one row per simulated day."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=8, help="simulated days")
    parser.add_argument("--events", type=int, default=2000, help="events per simulated day")
    parser.add_argument("--endpoints", type=int, default=3, help="endpoints of the tenant")
    parser.add_argument("--retention-days", type=int, default=1, help="ledger retention")
    parser.add_argument("--dedupe-days", type=int, default=2, help="dedupe key retention")
    parser.add_argument("--size", type=int, default=1024, help="payload size in bytes (about)")
    parser.add_argument("--slices", type=int, default=12, help="publish/deliver rounds a day")
    parser.add_argument("--retry-share", type=float, default=0.1, help="deliveries that 503 once")
    parser.add_argument(
        "--autovacuum",
        choices=sorted(AUTOVACUUM),
        default="default",
        help="storage parameters of the day partitions of deliveries and outbox",
    )
    parser.add_argument(
        "--naptime",
        type=int,
        default=1,
        help="autovacuum_naptime (s) of a server the soak starts itself",
    )
    args = parser.parse_args()

    moto = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    moto.start()
    host, port = moto.get_host_and_port()
    s3 = boto3.client("s3", endpoint_url=f"http://{host}:{port}", region_name="us-east-1")
    s3.create_bucket(Bucket="soak-archive")
    archive = S3Archive(s3, "soak-archive")
    policy = RetentionPolicy(ledger_days=args.retention_days, dedupe_days=args.dedupe_days)
    start = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    clock = [start]
    simulated_ids(clock)
    rows: list[list[object]] = []
    churn_rows: list[list[object]] = []
    try:
        with bench_database("soak") as (url, where):
            db = Database(url, max_size=4, timeout=10)
            if where != "DATABASE_URL":  # never a shared server's settings
                with db.connection() as conn:
                    conn.execute(f"ALTER SYSTEM SET autovacuum_naptime = '{args.naptime}s'")
                    conn.execute("SELECT pg_reload_conf()")
            settings = Settings(
                database_url=url, allow_private_targets=True, allow_http_targets=True
            )
            operator = Caller("bench", "*")
            tenant = tenant_service.create_tenant(
                db, HooklineConfig(), operator, name="soak", group="standard"
            )["id"]
            for i in range(args.endpoints):
                body = {"tenant_id": tenant, "url": f"http://127.0.0.1:9/{i}"}
                endpoint_service.create_endpoint(db, settings, operator, body)
            print(f"soak: {args.days} days x {args.events} events, {args.endpoints} endpoints, "
                  f"retention {args.retention_days} d, dedupe {args.dedupe_days} d; "
                  f"{args.slices} slices a day, autovacuum {args.autovacuum}; {where}; "
                  f"{machine_facts()}", file=sys.stderr)  # fmt: skip
            filler = "x" * args.size
            began = time.monotonic()
            for day in range(args.days):
                day_start = start + timedelta(days=day)
                with db.connection() as conn:
                    repo_retention.create_day_partitions(conn, day_start.date())
                    set_partition_options(conn, day_start, args.autovacuum)
                again: list[Any] = []
                peak_dead = dict.fromkeys([*CHURNED, IN_FLIGHT], 0)
                per_slice = max(1, args.events // args.slices)
                for n in range(args.events):
                    clock[0] = day_start + timedelta(seconds=n * 86_000 / args.events)
                    with db.connection() as conn, conn.transaction():
                        hookline.publish(
                            conn, tenant_id=tenant, type="order.created",
                            payload={"n": n, "day": day, "pad": filler},
                            idempotency_key=f"d{day}-{n}",
                        )  # fmt: skip
                    if (n + 1) % per_slice == 0 or n + 1 == args.events:
                        again = deliver_slice(db, args.retry_share, again)
                        with db.connection() as conn:
                            for name, stats in churn(conn, day_start).items():
                                peak_dead[name] = max(peak_dead[name], stats["dead"])
                while again:
                    again = deliver_slice(db, 0.0, again)
                time.sleep(2 * args.naptime)  # the day's last autovacuum chance
                with db.connection() as conn:
                    day_churn = churn(conn, day_start)
                churn_rows.append([day + 1, *(
                    cell for name in (*CHURNED, IN_FLIGHT) for cell in (
                        f"{day_churn[name]['bytes'] / MB:.2f}", peak_dead[name],
                        day_churn[name]["dead"], day_churn[name]["vacuums"],
                        hot_share(day_churn[name]),
                    ))])  # fmt: skip
                as_of = start + timedelta(days=day + 1, hours=1)
                report = apply_retention(db, archive, policy, as_of=as_of)
                with db.connection() as conn:
                    sizes = table_sizes(conn)
                    counts = conn.execute(
                        "SELECT (SELECT count(*) FROM events) AS events,"
                        " (SELECT count(*) FROM deliveries) AS deliveries,"
                        " (SELECT count(*) FROM event_keys) AS keys,"
                        " pg_database_size(current_database()) AS db"
                    ).fetchone()
                assert counts is not None
                rows.append([
                    day + 1, counts["events"], counts["deliveries"], counts["keys"],
                    *(f"{sizes.get(t, 0) / MB:.1f}" for t in TABLES),
                    f"{counts['db'] / MB:.1f}", ",".join(report.days_dropped) or "-",
                    report.archived_objects,
                ])  # fmt: skip
                print(f"day {day + 1} done", file=sys.stderr, flush=True)
            db.close()
            print(f"({time.monotonic() - began:.0f} s)", file=sys.stderr)
    finally:
        moto.stop()
    print_table(
        ["day", "events", "deliveries", "keys", *(f"{t} MB" for t in TABLES), "db MB",
         "days dropped", "archived"],
        rows,
    )  # fmt: skip
    print()
    print(
        "The day's churned tables at the end of the day (MB, peak and final dead tuples,"
        " autovacuum runs, the share of updates that were HOT):"
    )
    print_table(
        ["day", *(f"{t} {c}" for t in ("deliveries", "outbox", "in flight")
                  for c in ("MB", "peak dead", "dead", "vacuums", "HOT %"))],
        churn_rows,
    )  # fmt: skip


if __name__ == "__main__":
    main()
