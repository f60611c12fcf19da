"""What a failed attempt costs the database, beside a delivered one, in the same run.

`bench/pipeline.py` delivers every event at its first attempt. A deployment also retries: a
delivery to an endpoint that is down fails, is recorded, and is tried again later, and until
the endpoint comes back every one of its retries fails too. Here the deliver handler, as
deployed (no server-side prepared statements; its retries' SQS sends to a stand-in that costs
nothing), takes batches of ten messages of one event's ten deliveries, to ten endpoints:

* **delivered**: all on a loopback sink answering 200 (the batch's claim and record);
* **failed**: all on a port that refuses connections (the batch's claim, then its failures
  recorded with their next state, `hookline.delivery_failures`, and a retry sent for each);
* **one failed**: nine answering 200, one refusing (an endpoint of ten down).

The routes take turns batch by batch, after warm-up batches. Per attempt: the server CPU of
every backend of the database (`/proc/<pid>/schedstat`) and the WAL written.

    .venv/bin/python bench/failed_attempts.py [--batches 100]

Postgres is a durable local server started in a temp dir (or `DATABASE_URL`). A benchmark:
prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

from common import bench_database, machine_facts, print_table, quiet_environment
from sink import running_sink

ENDPOINTS = 10
WARM = 5
DEADLINE, LEASE = timedelta(hours=72), timedelta(minutes=5)  # fan-out's, as the tests use
REFUSED = "http://127.0.0.1:9"  # the discard port: nothing listens, the connection is refused


def backends_ns(conn: Any) -> int:
    """CPU nanoseconds so far of every other backend of this database."""
    total = 0
    for (pid,) in conn.execute(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
        " AND pid <> pg_backend_pid() AND backend_type = 'client backend'"
    ).fetchall():
        try:
            total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        except OSError:
            continue
    return total


def wal(conn: Any) -> int:
    return int(conn.execute("SELECT pg_current_wal_insert_lsn() - '0/0'::pg_lsn").fetchone()[0])


def messages(url: str, sink_url: str, events: int) -> dict[str, list[list[str]]]:
    """Per route, its queue messages in batches of one event's ENDPOINTS deliveries."""
    import hookline
    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import endpoint_service, tenant_service
    from hookline.management.access import Caller
    from hookline.queues import DeliveryMessage
    from hookline.repositories import deliveries as repo
    from hookline.settings import get_settings

    db = Database(url, max_size=1)
    operator, batches = Caller("bench", "*"), {}
    routes = {
        "delivered": [sink_url] * ENDPOINTS,
        "failed": [REFUSED] * ENDPOINTS,
        "one failed": [sink_url] * (ENDPOINTS - 1) + [REFUSED],
    }
    for route, bases in routes.items():
        tenant = tenant_service.create_tenant(db, HooklineConfig(), operator, name=route,
                                              group=None)  # fmt: skip
        for n, base in enumerate(bases):
            endpoint_service.create_endpoint(
                db, get_settings(), operator,
                {"tenant_id": tenant["id"], "url": f"{base}/{n}", "max_concurrency": 1000},
            )  # fmt: skip
        with db.connection() as conn, conn.transaction():
            for n in range(events):
                hookline.publish(conn, tenant_id=tenant["id"], type="order.paid", payload={"n": n})
        with db.connection() as conn:
            while repo.fan_out_and_claim(
                conn, limit=500, deadline=DEADLINE, lease=LEASE, due_limit=0
            ).to_send:
                pass
            rows = conn.execute(
                "SELECT id, event_id, enqueue_seq, endpoint_id, tenant_group FROM deliveries"
                " WHERE tenant_id = %s ORDER BY event_id, endpoint_id",
                (tenant["id"],),
            ).fetchall()
        bodies = [
            DeliveryMessage(r["id"], r["enqueue_seq"], r["endpoint_id"], r["tenant_group"]).body()
            for r in rows
        ]
        batches[route] = [bodies[i : i + ENDPOINTS] for i in range(0, len(bodies), ENDPOINTS)]
    db.close()
    return batches


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=100, help="batches timed per route")
    args = parser.parse_args(argv)
    quiet_environment()
    os.environ.update(
        HOOKLINE_DATABASE_PROXIED="true", HOOKLINE_ALLOW_PRIVATE_TARGETS="1",
        HOOKLINE_ALLOW_HTTP_TARGETS="1", POWERTOOLS_LOG_LEVEL="ERROR",
    )  # fmt: skip
    with (
        tempfile.TemporaryDirectory(prefix="hookline-bench-key-") as keys,
        bench_database("failed_attempts") as (url, where),
        running_sink() as sink,
    ):
        os.environ["HOOKLINE_LOCAL_KEY_FILE"] = str(Path(keys) / "master.key")
        os.environ["DATABASE_URL"] = url
        import psycopg
        from pipeline_workers import QueueStandIn, sqs_record

        import hookline.runtime as runtime
        from functions.deliver.handler import lambda_handler
        from hookline.queues import DeliveryQueues
        from hookline.settings import get_settings
        from hookline_dev.local.apigw import LocalContext

        print("making deliveries ...", file=sys.stderr, flush=True)
        batches = messages(url, sink.url(""), args.batches + WARM)
        retries: list[str] = []

        class Retries:
            def put(self, bodies: list[str]) -> None:
                retries.extend(bodies)

        stand_in = DeliveryQueues(QueueStandIn(Retries()), get_settings().config, url_prefix="x/")
        runtime.delivery_queues = lambda _settings: stand_in  # type: ignore[assignment]
        reader = psycopg.connect(url, autocommit=True)
        cpu: dict[str, list[float]] = {route: [] for route in batches}
        wal_bytes: dict[str, list[float]] = {route: [] for route in batches}
        outcomes: dict[str, int] = {}
        for n in range(args.batches + WARM):
            for route in random.Random(n).sample(list(cpu), len(cpu)):
                bodies = batches[route][n]
                records = [sqs_record(body, i) for i, body in enumerate(bodies)]
                ns, lsn = backends_ns(reader), wal(reader)
                lambda_handler({"Records": records}, LocalContext(function_name="deliver"))
                if n >= WARM:
                    cpu[route].append((backends_ns(reader) - ns) / 1000 / len(bodies))
                    wal_bytes[route].append((wal(reader) - lsn) / len(bodies))
        for row in reader.execute(
            "SELECT t.name, d.state, count(*) FROM deliveries d JOIN tenants t"
            " ON t.id = d.tenant_id GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall():
            outcomes[f"{row[0]}: {row[1]}"] = row[2]
        reader.close()
        print(f"postgres: {where}; {machine_facts()}")
        print(f"deliveries by state after the run: {outcomes}; retries sent: {len(retries)}")
        base = statistics.median(cpu["delivered"])
        rows = [
            [route, f"{statistics.median(cpu[route]):,.0f}",
             f"{statistics.quantiles(cpu[route], n=10)[-1]:,.0f}",
             f"{statistics.median(wal_bytes[route]):,.0f}",
             f"{statistics.median(cpu[route]) / base:.2f}"]
            for route in cpu
        ]  # fmt: skip
        print(f"per attempt, batches of {ENDPOINTS}, {args.batches} batches per route")
        print_table(
            ["attempt", "server CPU µs (median)", "p90", "WAL B", "x delivered's CPU"], rows
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
