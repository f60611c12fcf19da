"""The whole pipeline, shaped like Lambda: what one durable Postgres pays per delivered event,
against the bare minimum an at-least-once relay must pay, in the same run.

Each stage runs in its own worker processes, each handling one request or one batch at a
time as a Lambda container does:

* **receiver** — `functions.receiver.handler.lambda_handler` called with API Gateway REST
  events carrying Stripe-signed ~1 KB payloads (verify, store the event and its outbox row);
* **fanout** — `functions.fanout.handler.lambda_handler` in a loop (as the schedule and the
  nudges run it): fan out, claim the due deliveries, send them to the queue;
* **deliver** — `functions.deliver.handler.lambda_handler` with SQS-shaped batches of up to
  10 records: claim, sign, POST to a loopback sink (`bench/sink.py`), record, finish.

The queue is a stand-in that costs the database nothing (a `multiprocessing` queue behind the
`send_message_batch` the fan-out calls). The **bare** pipeline does the least an at-least-once
relay can: a receiver process inserts the event and its delivery in one durable statement
and hands the delivery id to the queue; a deliver process POSTs a batch with httpx and marks
the batch delivered in one durable statement. Raw psycopg, no signatures, no claims.

Each phase runs `--seconds` of intake (receivers in a closed loop) and then drains: events/s
is every delivered event over intake + drain. Per delivered event it reports the Postgres
server's CPU (from /proc: the stage's backends by application_name, plus the server's own
processes: WAL writer, checkpointer...), WAL bytes (`pg_current_wal_lsn`), commits
(`pg_stat_database.xact_commit`), round trips per stage (psycopg `Connection.wait` calls:
one per statement, BEGIN or COMMIT) and Python CPU per stage (the workers' own).

    .venv/bin/python bench/pipeline.py [--seconds 5] [--processes 1,2,4]

Postgres is a durable local server (default fsync), or `DATABASE_URL` (then the server CPU
columns are empty unless it runs on this machine). A benchmark: prints, never fails.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from common import bench_database, machine_facts, print_table, quiet_environment, server_facts
from pgcost import count_round_trips, server_cpu_by_role, wal_and_commits
from sink import running_sink

STRIPE_SECRET = "whsec_bench_pipeline_0123456789abcdef"
PAYLOAD_BYTES = 1000
BATCH = 10
TARGET_RATIO = 2.0
BARE_DDL = """
CREATE TABLE bare_events (id text PRIMARY KEY, tenant_id text NOT NULL, type text NOT NULL,
  payload bytea NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bare_deliveries (id bigserial PRIMARY KEY,
  event_id text NOT NULL REFERENCES bare_events (id), state text NOT NULL DEFAULT 'pending',
  updated_at timestamptz NOT NULL DEFAULT now());
"""
BARE_INSERT = (
    "WITH e AS (INSERT INTO bare_events (id, tenant_id, type, payload) "
    "VALUES (%s, 'bench', 'charge.succeeded', %s) RETURNING id) "
    "INSERT INTO bare_deliveries (event_id) SELECT id FROM e RETURNING id"
)
BARE_MARK = "UPDATE bare_deliveries SET state = 'delivered', updated_at = now() WHERE id = ANY(%s)"


# --- in the worker processes ----------------------------------------------------------


class QueueStandIn:
    """`send_message_batch` onto a multiprocessing queue: SQS without its cost."""

    def __init__(self, q: Any) -> None:
        self.q = q

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.q.put([e["MessageBody"] for e in Entries])
        return {"Successful": [{"Id": e["Id"]} for e in Entries], "Failed": []}


def take_batch(q: Any, stop: Any) -> list[Any] | None:
    """Up to BATCH messages, as Lambda's SQS poller hands them; None once stopped."""
    while True:
        try:
            items: list[Any] = list(q.get(timeout=0.05))
            break
        except queue.Empty:
            if stop.is_set():
                return None
    while len(items) < BATCH:
        try:
            items += q.get_nowait()
        except queue.Empty:
            break
    return items


def worker(
    kind: str, url: str, q: Any, go: Any, stop: Any, release: Any, ready: Any, out: Any
) -> None:
    """One Lambda-shaped container: warm up, wait for `go`, work until `stop`, report."""
    from psycopg.conninfo import make_conninfo

    quiet_environment()
    os.environ.update(
        {"DATABASE_URL": make_conninfo(url, application_name=kind), "HOOKLINE_DB_POOL_SIZE": "2",
         "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1", "HOOKLINE_ALLOW_HTTP_TARGETS": "1"}
    )  # fmt: skip
    sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - EMF and log lines, for the process's life
    step = build_step(kind, q, stop)
    trips = count_round_trips()
    if not kind.endswith("deliver"):
        step()  # warm: import, connect, first statements (deliver warms in build_step)
    ready.put(kind)
    go.wait()
    trips[0], cpu, done = 0, time.process_time(), 0
    while not stop.is_set():
        done += step()
    out.put((kind, time.process_time() - cpu, trips[0], done))
    release.wait()  # keep the connections (and their backends' CPU figures) until read


def build_step(kind: str, q: Any, stop: Any) -> Callable[[], int]:
    """What one invocation of this kind of worker does; returns the items it handled."""
    if kind in ("receiver", "bare_receiver"):
        return receiver_step(kind, q)
    if kind == "fanout":
        return fanout_step(q)
    return deliver_step(kind, q, stop)


def receiver_step(kind: str, q: Any) -> Callable[[], int]:
    """One signed request through the receiver handler, or one bare insert."""
    import itertools
    import uuid

    from tests.support.signers import stripe_event, stripe_headers

    prefix = uuid.uuid4().hex[:12]
    numbers = itertools.count()
    url = os.environ["DATABASE_URL"]
    if kind == "bare_receiver":
        import psycopg

        conn = psycopg.connect(url, autocommit=True)

        def bare() -> int:
            event_id = f"evt_{prefix}{next(numbers)}"
            body = stripe_event(event_id, size=PAYLOAD_BYTES)
            row = conn.execute(BARE_INSERT, (event_id, body)).fetchone()
            q.put([row[0]] if row else [])
            return 1

        return bare
    from functions.receiver.handler import lambda_handler
    from hookline_dev.local.apigw import LocalContext, build_rest_event

    source_id = os.environ["BENCH_SOURCE_ID"]

    def receive() -> int:
        event_id = f"evt_{prefix}{next(numbers)}"
        body = stripe_event(event_id, size=PAYLOAD_BYTES)
        headers = {"Content-Type": "application/json", **stripe_headers(STRIPE_SECRET, body)}
        event = build_rest_event("POST", f"/in/{source_id}", headers, body)
        answer = lambda_handler(event, LocalContext(function_name="receiver"))
        return 1 if answer["statusCode"] == 200 else 0

    return receive


def fanout_step(q: Any) -> Callable[[], int]:
    """One fan-out invocation, sending to the queue stand-in; idles briefly when empty."""
    import functions.fanout.handler as fanout
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext

    settings = get_settings()
    stand_in = DeliveryQueues(QueueStandIn(q), settings.config, url_prefix="x/")
    fanout.delivery_queues = lambda _settings: stand_in

    def invoke() -> int:
        report = fanout.lambda_handler({}, LocalContext(function_name="fanout"))
        if not report["events"] and not report["enqueued"]:
            time.sleep(0.02)
        return int(report["events"])

    return invoke


def deliver_step(kind: str, q: Any, stop: Any) -> Callable[[], int]:
    """One SQS-shaped batch through the deliver handler, or a bare POST-and-mark batch."""
    import itertools

    sink_url = os.environ["BENCH_SINK_URL"]
    numbers = itertools.count()
    if kind == "bare_deliver":
        import httpx
        import psycopg

        conn = psycopg.connect(os.environ["DATABASE_URL"], autocommit=True)
        http = httpx.Client(timeout=10)
        conn.execute("SELECT 1")

        def bare() -> int:
            ids = take_batch(q, stop)
            if not ids:
                return 0
            for delivery_id in ids:
                http.post(sink_url, content=b'{"id": %d}' % delivery_id)
            conn.execute(BARE_MARK, (ids,))
            return len(ids)

        return bare
    import hookline.runtime as runtime
    from functions.deliver.handler import lambda_handler
    from hookline.db import get_database
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext

    settings = get_settings()
    stand_in = DeliveryQueues(QueueStandIn(q), settings.config, url_prefix="x/")
    runtime.delivery_queues = lambda _settings: stand_in  # type: ignore[assignment]
    runtime.get_deliverer()
    with get_database().connection() as conn:
        conn.execute("SELECT 1")

    def invoke() -> int:
        bodies = take_batch(q, stop)
        if not bodies:
            return 0
        records = [sqs_record(body, next(numbers)) for body in bodies]
        lambda_handler({"Records": records}, LocalContext(function_name="deliver"))
        return len(records)

    return invoke


def sqs_record(body: str, n: int) -> dict[str, Any]:
    """An SQS event record as Lambda's event source builds it."""
    return {
        "messageId": f"m{n}", "receiptHandle": f"r{n}", "body": body,
        "attributes": {"ApproximateReceiveCount": "1", "SentTimestamp": "0"},
        "messageAttributes": {}, "md5OfBody": "", "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:0:deliver-standard", "awsRegion": "us-east-1",
    }  # fmt: skip


# --- in the parent --------------------------------------------------------------------


@dataclass
class Phase:
    """What one pipeline at one process count measured."""

    pipeline: str
    processes: int
    events: int = 0
    seconds: float = 0.0
    server_cpu: dict[str, float] = field(default_factory=dict)  # by stage, + "server"
    python_cpu: dict[str, float] = field(default_factory=dict)
    trips: dict[str, int] = field(default_factory=dict)
    wal_bytes: int = 0
    commits: int = 0

    def per_event(self, value: float) -> float:
        """`value` per delivered event."""
        return value / self.events if self.events else float("nan")


def delivered_count(conn: Any, pipeline: str) -> int:
    """Events delivered so far (one endpoint: deliveries delivered)."""
    table = "bare_deliveries" if pipeline == "bare" else "deliveries"
    row = conn.execute(f"SELECT count(*) FROM {table} WHERE state = 'delivered'").fetchone()
    return int(row[0])


def accepted_count(conn: Any, pipeline: str) -> int:
    """Events accepted so far."""
    table = "bare_events" if pipeline == "bare" else "events"
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def run_phase(url: str, pipeline: str, processes: int, seconds: float) -> Phase:
    """Start the workers, warm them, measure `seconds` of intake and the drain."""
    import psycopg

    kinds = ("receiver", "fanout", "deliver") if pipeline == "hookline" else (
        "bare_receiver", "bare_deliver")  # fmt: skip
    ctx = mp.get_context("spawn")
    q, go, stop_intake, stop_rest = ctx.Queue(), ctx.Event(), ctx.Event(), ctx.Event()
    release = ctx.Event()
    ready, out = ctx.Queue(), ctx.Queue()
    procs = []
    for kind in kinds:
        stop = stop_intake if kind.endswith("receiver") else stop_rest
        for _ in range(processes):
            p = ctx.Process(
                target=worker, args=(kind, url, q, go, stop, release, ready, out), daemon=True
            )
            p.start()
            procs.append(p)
    for _ in procs:
        ready.get(timeout=120)
    phase = Phase(pipeline, processes)
    with psycopg.connect(url, autocommit=True) as conn:
        time.sleep(1.5)  # the warm-up's statistics flushed, its messages handled
        start_delivered = delivered_count(conn, pipeline)
        start_accepted = accepted_count(conn, pipeline)
        cpu0 = server_cpu_by_role(url, conn.info.backend_pid)
        wal0, commits0 = wal_and_commits(conn)
        started = time.monotonic()
        go.set()
        time.sleep(seconds)
        stop_intake.set()
        time.sleep(0.2)
        accepted = accepted_count(conn, pipeline) - start_accepted
        while delivered_count(conn, pipeline) - start_delivered < accepted:
            if time.monotonic() - started > seconds * 20 + 60:
                print(f"  {pipeline}: drain gave up", file=sys.stderr)
                break
            time.sleep(0.1)
        phase.seconds = time.monotonic() - started
        phase.events = delivered_count(conn, pipeline) - start_delivered
        cpu1 = server_cpu_by_role(url, conn.info.backend_pid)
        stop_rest.set()
        for _ in procs:
            kind, cpu, trips, _done = out.get(timeout=60)
            stage = kind.removeprefix("bare_")
            phase.python_cpu[stage] = phase.python_cpu.get(stage, 0.0) + cpu
            phase.trips[stage] = phase.trips.get(stage, 0) + trips
        release.set()
        for p in procs:
            p.join(timeout=30)
        time.sleep(1.0)  # the exited backends' statistics flushed
        wal1, commits1 = wal_and_commits(conn)
    phase.wal_bytes, phase.commits = wal1 - wal0, commits1 - commits0
    if cpu0 is not None and cpu1 is not None:
        for role in cpu1:
            stage = role.removeprefix("bare_")
            phase.server_cpu[stage] = (
                phase.server_cpu.get(stage, 0.0) + cpu1[role] - cpu0.get(role, 0.0)
            )
    return phase


def prepare(url: str, sink_url: str) -> str:
    """A tenant, its Stripe source and one endpoint on the sink; the bare tables."""
    import psycopg

    from hookline.config import HooklineConfig
    from hookline.db import Database
    from hookline.management import endpoint_service, source_service, tenant_service
    from hookline.management.access import Caller
    from hookline.settings import Settings

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(BARE_DDL)
    settings = Settings.from_env({"DATABASE_URL": url, "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
                                  "HOOKLINE_ALLOW_HTTP_TARGETS": "1"})  # fmt: skip
    setup = Database(url, max_size=1)
    try:
        operator = Caller("bench", "*")
        tenant = tenant_service.create_tenant(
            setup, HooklineConfig(), operator, name="bench", group=None
        )
        source = source_service.create_source(
            setup,
            operator,
            {"tenant_id": tenant["id"], "scheme": "stripe", "secret": STRIPE_SECRET},
        )
        endpoint_service.create_endpoint(
            setup, settings, operator,
            {"tenant_id": tenant["id"], "url": sink_url, "max_concurrency": 1000},
        )  # fmt: skip
    finally:
        setup.close()
    return str(source["id"])


def report(phases: list[Phase]) -> None:
    """The tables: throughput and cost per delivered event, then per stage."""
    rows = []
    for ph in phases:
        server = sum(ph.server_cpu.values())
        rows.append([
            ph.pipeline, ph.processes, ph.events, f"{ph.events / ph.seconds:.0f}",
            f"{ph.per_event(server) * 1e6:.0f}" if ph.server_cpu else "-",
            f"{ph.per_event(ph.wal_bytes):.0f}", f"{ph.per_event(ph.commits):.2f}",
            f"{ph.per_event(sum(ph.trips.values())):.1f}",
            f"{ph.per_event(sum(ph.python_cpu.values())) * 1e6:.0f}",
        ])  # fmt: skip
    print_table(["pipeline", "procs/stage", "delivered", "events/s", "server CPU µs/ev",
                 "WAL B/ev", "commits/ev", "round trips/ev", "Python CPU µs/ev"], rows)  # fmt: skip
    print("\nper stage, per delivered event (server CPU µs / round trips / Python CPU µs):")
    stage_rows = []
    for ph in phases:
        stages = sorted(set(ph.python_cpu) | set(ph.server_cpu))
        cells = [
            f"{s}: {ph.per_event(ph.server_cpu.get(s, 0.0)) * 1e6:.0f} / "
            f"{ph.per_event(ph.trips.get(s, 0)):.1f} / "
            f"{ph.per_event(ph.python_cpu.get(s, 0.0)) * 1e6:.0f}"
            for s in stages
        ]
        stage_rows.append([ph.pipeline, ph.processes, "; ".join(cells)])
    print_table(["pipeline", "procs/stage", "stages"], stage_rows)
    print()
    for n in sorted({ph.processes for ph in phases}):
        ours = [ph for ph in phases if ph.processes == n and ph.pipeline == "hookline"]
        bare = [ph for ph in phases if ph.processes == n and ph.pipeline == "bare"]
        if ours and bare and ours[0].server_cpu and bare[0].server_cpu:
            ratio = ours[0].per_event(sum(ours[0].server_cpu.values())) / bare[0].per_event(
                sum(bare[0].server_cpu.values())
            )
            verdict = "met" if ratio <= TARGET_RATIO else "MISSED"
            print(f"{n} procs/stage: server CPU per event {ratio:.2f}x the bare minimum "
                  f"(target <= {TARGET_RATIO:g}x: {verdict})")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run every pipeline at every process count, taking turns; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--processes", default="1,2,4")
    args = parser.parse_args(argv)
    quiet_environment()
    counts = [int(n) for n in args.processes.split(",")]
    with bench_database("pipeline") as (url, where), running_sink() as sink:
        sink_url = sink.url("/hook")
        os.environ["BENCH_SOURCE_ID"] = prepare(url, sink_url)
        os.environ["BENCH_SINK_URL"] = sink_url
        print(f"Postgres: {where}; {server_facts(url)}")
        print(f"machine: {machine_facts()}")
        phases = []
        for n in counts:
            for pipeline in ("hookline", "bare"):
                print(f"  {pipeline} x{n} ...", file=sys.stderr, flush=True)
                phases.append(run_phase(url, pipeline, n, args.seconds))
        print(f"machine after: {machine_facts()}\n")
        report(phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
