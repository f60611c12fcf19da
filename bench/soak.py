"""Soak: does the database level off? Drives the pipeline's own statements through N simulated
days — publish (the real ingest), fan-out (the real statement), delivery outcomes and attempts,
then a retention run at the end of each day with the clock moved (`as_of`) and the archive in a
moto S3 — and prints the size of each table per simulated day.

    PYTHONPATH=layers/core:. python bench/soak.py --days 8 --events 2000

Events get ids of their simulated day (the ids carry the time the partitions are cut by), so
day d's rows land in day d's partitions, and retention (1 day by default) drops them two
days later. The figures are sizes, not speeds: they are the same on a busy machine.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import bench_database, machine_facts, print_table, quiet_environment

quiet_environment()

import boto3  # noqa: E402
from moto.server import ThreadedMotoServer  # noqa: E402
from ulid import ULID  # noqa: E402

import hookline  # noqa: E402
from hookline.archive import S3Archive  # noqa: E402
from hookline.config import HooklineConfig  # noqa: E402
from hookline.db import Database  # noqa: E402
from hookline.management import endpoint_service, tenant_service  # noqa: E402
from hookline.management.access import Caller  # noqa: E402
from hookline.repositories import deliveries as delivery_repo  # noqa: E402
from hookline.repositories import ledger  # noqa: E402
from hookline.repositories.retention import table_sizes  # noqa: E402
from hookline.retention import RetentionPolicy, apply_retention  # noqa: E402
from hookline.settings import Settings  # noqa: E402

TABLES = ("events", "outbox", "deliveries", "attempts", "event_keys")
MB = 1024 * 1024


def simulated_ids(clock: list[datetime]) -> None:
    """Ledger ids at the simulated time: the partition a row lands in follows the clock."""
    ledger.new_id = lambda prefix: f"{prefix}_{ULID.from_timestamp(clock[0].timestamp())}"  # type: ignore[assignment]


def main() -> None:
    """Run the soak and print one row per simulated day."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--days", type=int, default=8, help="simulated days")
    parser.add_argument("--events", type=int, default=2000, help="events per simulated day")
    parser.add_argument("--endpoints", type=int, default=3, help="endpoints of the tenant")
    parser.add_argument("--retention-days", type=int, default=1, help="ledger retention")
    parser.add_argument("--dedupe-days", type=int, default=2, help="dedupe key retention")
    parser.add_argument("--size", type=int, default=1024, help="payload size in bytes (about)")
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
    try:
        with bench_database("soak") as (url, where):
            db = Database(url, max_size=4, timeout=10)
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
                  f"retention {args.retention_days} d, dedupe {args.dedupe_days} d; {where}; "
                  f"{machine_facts()}", file=sys.stderr)  # fmt: skip
            filler = "x" * args.size
            began = time.monotonic()
            for day in range(args.days):
                for n in range(args.events):
                    clock[0] = start + timedelta(days=day, seconds=n * 86_000 / args.events)
                    with db.connection() as conn, conn.transaction():
                        hookline.publish(
                            conn, tenant_id=tenant, type="order.created",
                            payload={"n": n, "day": day, "pad": filler},
                            idempotency_key=f"d{day}-{n}",
                        )  # fmt: skip
                with db.connection() as conn:
                    while delivery_repo.fan_out_batch(
                        conn, limit=2000, deadline=timedelta(hours=72)
                    )[0]:
                        pass
                    # The day's outcomes: most delivered at once, some after a retry.
                    conn.execute(
                        "INSERT INTO attempts (delivery_id, duration_ms, status_code)"
                        " SELECT id, 20, CASE WHEN random() < 0.1 THEN 503 ELSE 200 END"
                        " FROM deliveries WHERE state = 'pending'"
                    )
                    conn.execute(
                        "UPDATE deliveries SET state = 'delivered', attempt_count = 1,"
                        " last_status = 200, finished_at = now(), updated_at = now()"
                        " WHERE state = 'pending'"
                    )
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


if __name__ == "__main__":
    main()
