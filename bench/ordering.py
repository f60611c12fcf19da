"""Ordered delivery (decision 0069): throughput for one key and across 100 keys, and the
database work an ordered delivery adds over an unordered one.

Each phase publishes `--events` events for one endpoint (payload `{"k": <key>, ...}`, keys
taken in turn), then drains them through the real handlers in this process: the fan-out
handler (every second, as a schedule would; the deliverer hands each key's next delivery on
itself) and `--workers` deliver loops, each taking SQS-shaped batches of up to 10 from an
in-memory stand-in for the queue (`bench/pipeline.py`'s, so SQS costs nothing) into the
deliver handler, against a loopback sink (`bench/sink.py`). Phases, in this order:

* **unordered** — 100 keys, the endpoint has no ordering (no endpoint of the deployment is
  ordered yet, so the deliverer asks nothing more);
* **ordered, 100 keys** — `{"key": "$.payload.k"}`;
* **ordered, 1 key** — every event has the same key: one delivery at a time.

Per delivery, over the drain (fan-out included): deliveries/s, the Postgres server's CPU (all
its processes, from /proc, as `bench/pgcost.py` meters issue 21), WAL bytes and commits.

    .venv/bin/python bench/ordering.py [--events 2000] [--workers 4]

Postgres is a durable local server (default fsync), or `DATABASE_URL`. A benchmark: prints,
never fails.
"""

from __future__ import annotations

import argparse
import os
import queue
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from common import bench_database, machine_facts, print_table, quiet_environment, server_facts
from pgcost import cpu_by_role, server_cpu_by_pid, wal_and_commits
from sink import running_sink


@dataclass
class Phase:
    """One drain's figures."""

    name: str
    deliveries: int
    seconds: float
    server_cpu_s: float
    wal_bytes: int
    commits: int

    def per(self, value: float) -> float:
        """Per delivery."""
        return value / self.deliveries if self.deliveries else 0.0


def make_endpoint(url: str, sink_url: str, name: str, ordering: dict[str, Any] | None) -> str:
    """A tenant of its own with one endpoint on the sink; its id."""
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
            setup, HooklineConfig(), operator, name=name, group=None
        )
        body = {"tenant_id": tenant["id"], "url": sink_url, "max_concurrency": 1000}
        if ordering is not None:
            body["ordering"] = ordering
        created = endpoint_service.create_endpoint(setup, settings, operator, body)
        return str(created["tenant_id"])
    finally:
        setup.close()


def publish(url: str, tenant_id: str, events: int, keys: int) -> None:
    """`events` events of the tenant, keys taken in turn (not measured)."""
    import hookline
    from hookline.db import Database

    db = Database(url, max_size=1)
    try:
        with db.connection() as conn, conn.transaction():
            for n in range(events):
                payload = {"k": f"key-{n % keys}", "n": n, "pad": "x" * 400}
                hookline.publish(conn, tenant_id=tenant_id, type="order.updated", payload=payload)
    finally:
        db.close()


def drain(url: str, sink: Any, name: str, events: int, workers: int) -> Phase:
    """Fan out and deliver until the sink has every event; the server's work meanwhile."""
    import psycopg
    from pipeline_workers import QueueStandIn, sqs_record, take_batch

    import functions.deliver.handler as deliver
    import functions.fanout.handler as fanout
    import hookline.runtime as runtime
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext

    q: queue.Queue[list[str]] = queue.Queue()
    stand_in = DeliveryQueues(QueueStandIn(q), get_settings().config, url_prefix="x/")
    fanout.delivery_queues = lambda _settings: stand_in  # type: ignore[attr-defined]
    runtime.delivery_queues = lambda _settings: stand_in  # type: ignore[assignment]
    # A phase's own queue: the deliverer (kept per process, decision 0075) is built again with
    # it, and whether an endpoint is ordered is asked afresh (the answer is kept 30 s)
    deliver._built.clear()
    runtime.released_heads.cache_clear()
    stop = threading.Event()
    numbers = iter(range(10**9))

    def fan_out() -> None:
        while not stop.is_set():
            fanout.lambda_handler({}, LocalContext(function_name="fanout"))
            stop.wait(1.0)

    def deliver_loop() -> None:
        while True:
            bodies = take_batch(q, stop)
            if bodies is None:
                return
            records = [sqs_record(body, next(numbers)) for body in bodies]
            deliver.lambda_handler({"Records": records}, LocalContext(function_name="deliver"))

    before = sink.requests()
    with psycopg.connect(url, autocommit=True) as admin:
        cpu0 = server_cpu_by_pid(url, admin.info.backend_pid) or {}
        wal0, commits0 = wal_and_commits(admin)
        started = time.perf_counter()
        threads = [threading.Thread(target=fan_out)]
        threads += [threading.Thread(target=deliver_loop) for _ in range(workers)]
        for thread in threads:
            thread.start()
        while sink.requests() - before < events:
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        cpu1 = server_cpu_by_pid(url, admin.info.backend_pid) or {}
        wal1, commits1 = wal_and_commits(admin)
        stop.set()
        for thread in threads:
            thread.join()
    cpu = sum(cpu_by_role(cpu0, cpu1).values())
    return Phase(name, events, seconds, cpu, wal1 - wal0, commits1 - commits0)


def main(argv: list[str] | None = None) -> int:
    """Run the three phases; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--workers", type=int, default=4, help="deliver loops")
    args = parser.parse_args(argv)
    quiet_environment()
    os.environ["HOOKLINE_DATABASE_PROXIED"] = "true"
    with bench_database("ordering") as (url, where), running_sink() as sink:
        from psycopg.conninfo import make_conninfo

        os.environ.update(
            {"DATABASE_URL": make_conninfo(url, application_name="bench"),
             "HOOKLINE_DB_POOL_SIZE": str(4 * args.workers + 4),
             "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1", "HOOKLINE_ALLOW_HTTP_TARGETS": "1"}
        )  # fmt: skip
        print(f"Postgres: {where}; {server_facts(url)}")
        print(f"machine: {machine_facts()}")
        phases = []
        runs = (("unordered, 100 keys", None, 100), ("ordered, 100 keys", {"key": "$.payload.k"},
                100), ("ordered, 1 key", {"key": "$.payload.k"}, 1))  # fmt: skip
        for name, ordering, keys in runs:
            print(f"  {name} ...", file=sys.stderr, flush=True)
            tenant_id = make_endpoint(url, sink.url("/hook"), name, ordering)
            publish(url, tenant_id, args.events, keys)
            phases.append(drain(url, sink, name, args.events, args.workers))
        print(f"machine after: {machine_facts()}\n")
        base = phases[0]
        rows = []
        for ph in phases:
            cpu = ph.per(ph.server_cpu_s) * 1e6
            wal = ph.per(ph.wal_bytes)
            rows.append([
                ph.name, ph.deliveries, f"{ph.deliveries / ph.seconds:.0f}",
                f"{cpu:.0f}", f"{cpu - base.per(base.server_cpu_s) * 1e6:+.0f}",
                f"{wal:.0f}", f"{wal - base.per(base.wal_bytes):+.0f}",
                f"{ph.per(ph.commits):.2f}",
            ])  # fmt: skip
        print_table(
            ["phase", "deliveries", "deliveries/s", "server CPU µs/dlv", "vs unordered",
             "WAL B/dlv", "vs unordered", "commits/dlv"],
            rows,
        )  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
