"""The whole pipeline, shaped like Lambda: what one durable Postgres pays per delivered event,
against the bare minimum an at-least-once relay must pay, in the same run.

Each stage runs in its own worker processes, each handling one request or one batch at a
time as a Lambda container does:

* **receiver** — `functions.receiver.handler.lambda_handler` called with API Gateway REST
  events carrying Stripe-signed ~1 KB payloads: verify, store the event, its outbox row and,
  as deployed (fan-out at receipt, decision 0076), its deliveries, and send those to the
  queue; with `--no-receipt`, store and nudge the fan-out instead;
* **fanout** — `functions.fanout.handler.lambda_handler` once per nudge, as on AWS, where a
  nudge is an asynchronous invoke: fan out, claim the due deliveries, send them to the queue
  (with fan-out at receipt nothing nudges it here: it idles);
* **deliver** — `functions.deliver.handler.lambda_handler` with SQS-shaped batches of up to
  10 records: claim, sign, POST to a loopback sink (`bench/sink.py`), record, finish.

The queue is a stand-in that costs the database nothing (a `multiprocessing` queue behind the
`send_message_batch` the receiver and the fan-out call). The **bare** pipeline does the least
an at-least-once relay can: a receiver process inserts the event and its N deliveries in one
durable statement and hands the delivery ids to the queue, each with the payload (the
cheapest way for a deliverer to have it: the database pays nothing for it); a deliver
process POSTs each payload of a batch with httpx and marks the batch delivered in one
durable statement. Raw psycopg, no signatures, no claims, no logs.

Each event is fanned out to N endpoints (`--endpoints 1,10`: one tenant with N endpoints per
value). Both pipelines run as deployed behind RDS Proxy by default: no server-side prepared
statements (Hookline with `HOOKLINE_DATABASE_PROXIED=true`, the bare relay with psycopg's
`prepare_threshold=None`); `--prepared` lets both prepare, as a direct connection does. The
workers log as deployed (Powertools at INFO, EMF metrics on) into a byte counter: the log
bytes a stage writes per delivered event are what CloudWatch would ingest.

Each phase runs `--seconds` of intake (receivers in a closed loop) and then drains: events/s
is every delivered event over intake + drain. A receiver makes its requests before the
intake starts (the payload, the Stripe signature and API Gateway's event for Hookline's;
the payload for the bare relay's): what the sender does is neither pipeline's cost. Per
delivered event it reports the Postgres server's CPU (from /proc: the stage's backends by
application_name, plus the server's own processes: WAL writer, checkpointer...), WAL bytes
(`pg_current_wal_lsn`), commits (`pg_stat_database.xact_commit`), round trips per stage
(psycopg `Connection.wait` calls: one per statement, BEGIN or COMMIT) and Python CPU per
stage (the workers' own).

    .venv/bin/python bench/pipeline.py [--seconds 5] [--processes 1,2,4] [--endpoints 1,10]
        [--prepared] [--no-receipt] [--statements] [--wal-mix] [--json] [--past-days 90]
        [--steady 2000000] [--server wal_compression=off]
        [--shape bench/shapes/hot_record.sql[,...]]

`--statements` preloads pg_stat_statements (with planning time) and prints each phase's
costliest statements per delivered event; `--wal-mix` reads each phase's WAL back with
`pg_waldump` (bench/walmix.py) and prints its bytes per delivered event by table and index,
and by record kind (local server only); `--shape` runs what-if SQL files after the migrations
(bench/shapes: a row shape a migration might bring, measured before it is built); `--json`
prints one line instead of the tables: a list of rows `{"pipeline", "processes",
"endpoints", "events_per_s", "server_cpu_us", "wal_bytes", "commits", "python_cpu_us",
"log_bytes", "stages"}`, per delivered event (`stages`: each stage's server and Python CPU,
`{"receiver": {"server_cpu_us", "python_cpu_us"}, ...}`). A fresh
database has nine day partitions of each hot table (today, the week ahead, the default);
`--past-days 90` first makes the 90 earlier days' partitions that the default retention
(`ledger_retention_days`) keeps, as a deployment has them after three months. The bare
relay's tables are not partitioned either way. `--steady N` begins each phase as a running
deployment's minutes after a checkpoint (bench/steady.py): N dedupe keys per tenant (and
N events per width in the bare relay's table) already there, random provider ids, and a
`CHECKPOINT` before the intake, so full-page images are paid as they are in production.

Postgres is a durable local server (default fsync), or `DATABASE_URL` (then the server CPU
columns are empty unless it runs on this machine). A benchmark: prints, never fails.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from common import (
    bench_database,
    machine_facts,
    make_past_partitions,
    print_table,
    quiet_environment,
    server_facts,
)
from pgcost import count_round_trips, server_cpu_by_role, wal_and_commits
from sink import running_sink
from steady import fill_keys
from walmix import SERVER_SETTINGS as WAL_MIX_SETTINGS
from walmix import mix_kinds, mix_rows, wal_mix, wal_position

STRIPE_SECRET = "whsec_bench_pipeline_0123456789abcdef"
PAYLOAD_BYTES = 1000
BATCH = 10
# Requests a receiver makes before it starts, per second of intake: more than one makes here
REQUESTS_AHEAD_PER_SECOND = 4000
T = TypeVar("T")
# Issue 24: (meter, ratio to the bare relay, whether the ratio is a floor)
RATIO_TARGETS = (("server_cpu_us", 2.0, False), ("wal_bytes", 2.0, False),
                 ("python_cpu_us", 2.0, False), ("events_per_s", 0.6, True))  # fmt: skip
LOG_BYTES_TARGET = 1000
BARE_DDL = """
CREATE TABLE bare_events (id text PRIMARY KEY, tenant_id text NOT NULL, type text NOT NULL,
  payload bytea NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bare_deliveries (id bigserial PRIMARY KEY,
  event_id text NOT NULL REFERENCES bare_events (id), endpoint integer NOT NULL,
  state text NOT NULL DEFAULT 'pending', updated_at timestamptz NOT NULL DEFAULT now());
"""
BARE_INSERT = (
    "WITH e AS (INSERT INTO bare_events (id, tenant_id, type, payload) "
    "VALUES (%s, 'bench', 'charge.succeeded', %s) RETURNING id) "
    "INSERT INTO bare_deliveries (event_id, endpoint) "
    "SELECT e.id, n FROM e, generate_series(1, %s) AS n RETURNING id"
)
BARE_MARK = "UPDATE bare_deliveries SET state = 'delivered', updated_at = now() WHERE id = ANY(%s)"


# --- in the worker processes ----------------------------------------------------------


class CountingSink:
    """Stands in for stdout (where Lambda's log lines go): counts the bytes written."""

    def __init__(self) -> None:
        self.bytes = 0

    def write(self, text: str) -> int:
        self.bytes += len(text.encode())
        return len(text)

    def flush(self) -> None:
        """Nothing buffered."""

    def isatty(self) -> bool:
        """Not a terminal."""
        return False


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


def prepared(make: Callable[[], T], ahead: int) -> Callable[[], T]:
    """`make`'s results, the first `ahead` of them made now and the rest when asked (said
    once on stderr: past `ahead`, the sender's work is counted again)."""
    ready = collections.deque(make() for _ in range(ahead))
    warned = False

    def next_one() -> T:
        nonlocal warned
        if ready:
            return ready.popleft()
        if ahead and not warned:
            warned = True
            print(f"  (pid {os.getpid()}: the {ahead} requests made ahead ran out)",
                  file=sys.stderr)  # fmt: skip
        return make()

    return next_one


def worker(
    kind: str, url: str, q: Any, nudges: Any, go: Any, stop: Any, release: Any, ready: Any,
    out: Any,
) -> None:  # fmt: skip
    """One Lambda-shaped container: warm up, wait for `go`, work until `stop`, report."""
    from psycopg.conninfo import make_conninfo

    quiet_environment()
    os.environ.update(
        {"DATABASE_URL": make_conninfo(url, application_name=kind), "HOOKLINE_DB_POOL_SIZE": "2",
         "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1", "HOOKLINE_ALLOW_HTTP_TARGETS": "1",
         # as deployed (infra/components/functions.py): INFO, EMF metrics on
         "POWERTOOLS_LOG_LEVEL": "INFO", "POWERTOOLS_METRICS_DISABLED": "false"}
    )  # fmt: skip
    logs = CountingSink()
    sys.stdout = logs  # type: ignore[assignment] - before the handler's logger is created
    step = build_step(kind, q, nudges, stop)
    trips = count_round_trips()
    if not kind.endswith("deliver"):
        step()  # warm: import, connect, first statements (deliver warms in build_step)
    ready.put(kind)
    go.wait()
    trips[0], cpu, done, calls, logs.bytes = 0, time.process_time(), 0, 0, 0
    while not stop.is_set():
        handled = step()
        done, calls = done + handled, calls + (handled > 0)
    out.put((kind, time.process_time() - cpu, trips[0], done, calls, logs.bytes))
    release.wait()  # keep the connections (and their backends' CPU figures) until read


def build_step(kind: str, q: Any, nudges: Any, stop: Any) -> Callable[[], int]:
    """What one invocation of this kind of worker does; returns the items it handled."""
    if kind in ("receiver", "bare_receiver"):
        return receiver_step(kind, q, nudges, int(os.environ["BENCH_AHEAD"]))
    if kind == "fanout":
        return fanout_step(q, nudges)
    return deliver_step(kind, q, stop)


def receiver_step(kind: str, q: Any, nudges: Any, ahead: int = 0) -> Callable[[], int]:
    """One signed request through the receiver handler, or one bare insert. The first
    `ahead` requests (bodies for the bare relay) are made before the first call: what the
    sender does (the payload, its signature, API Gateway's event) is not the receiver's cost,
    in its CPU or in its time."""
    import itertools
    import uuid

    from steady import random_event_id

    from tests.support.signers import stripe_event, stripe_headers

    prefix = uuid.uuid4().hex[:12]
    numbers = itertools.count()
    steady = os.environ.get("BENCH_STEADY") == "1"
    url = os.environ["DATABASE_URL"]
    if kind == "bare_receiver":
        import psycopg

        conn = psycopg.connect(url, autocommit=True, prepare_threshold=bare_prepare_threshold())
        endpoints = int(os.environ["BENCH_ENDPOINTS"])

        def made() -> tuple[str, bytes]:
            event_id = random_event_id() if steady else f"evt_{prefix}{next(numbers)}"
            return event_id, stripe_event(event_id, size=PAYLOAD_BYTES)

        sent = prepared(made, ahead)

        def bare() -> int:
            event_id, body = sent()
            rows = conn.execute(BARE_INSERT, (event_id, body, endpoints)).fetchall()
            # the payload rides on the message: the least a relay needs to deliver it
            q.put([(row[0], body) for row in rows])
            return 1

        return bare
    import functions.receiver.handler as receiver
    from hookline.nudge import set_local_nudger
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext, build_rest_event

    source_id = os.environ["BENCH_SOURCE_ID"]
    # As deployed, the receiver sends an event's deliveries itself (decision 0076): to the
    # same queue stand-in the fan-out sends to.
    stand_in = DeliveryQueues(QueueStandIn(q), get_settings().config, url_prefix="x/")
    receiver.receipt_queues = lambda _settings: stand_in  # type: ignore[assignment]
    lambda_handler = receiver.lambda_handler
    # The receiver's nudge after each accepted event, as its asynchronous Lambda invoke: one
    # fan-out invocation per nudge (Lambda queues those it cannot run at once).
    set_local_nudger(lambda: nudges.put(1))

    def made() -> dict[str, Any]:
        event_id = random_event_id() if steady else f"evt_{prefix}{next(numbers)}"
        body = stripe_event(event_id, size=PAYLOAD_BYTES)
        headers = {"Content-Type": "application/json", **stripe_headers(STRIPE_SECRET, body)}
        return build_rest_event("POST", f"/in/{source_id}", headers, body)

    sent = prepared(made, ahead)

    def receive() -> int:
        answer = lambda_handler(sent(), LocalContext(function_name="receiver"))
        return 1 if answer["statusCode"] == 200 else 0

    return receive


def fanout_step(q: Any, nudges: Any) -> Callable[[], int]:
    """One fan-out invocation per nudge, sending to the queue stand-in."""
    import functions.fanout.handler as fanout
    from hookline.queues import DeliveryQueues
    from hookline.settings import get_settings
    from hookline_dev.local.apigw import LocalContext

    settings = get_settings()
    stand_in = DeliveryQueues(QueueStandIn(q), settings.config, url_prefix="x/")
    fanout.delivery_queues = lambda _settings: stand_in

    fanout.lambda_handler({}, LocalContext(function_name="fanout"))  # warm

    def invoke() -> int:
        try:
            nudges.get(timeout=0.2)
        except queue.Empty:
            return 0
        report = fanout.lambda_handler({}, LocalContext(function_name="fanout"))
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

        conn = psycopg.connect(
            os.environ["DATABASE_URL"], autocommit=True, prepare_threshold=bare_prepare_threshold()
        )
        http = httpx.Client(timeout=10)
        conn.execute("SELECT 1")

        def bare() -> int:
            batch = take_batch(q, stop)
            if not batch:
                return 0
            for _, body in batch:
                http.post(sink_url, content=body, headers={"content-type": "application/json"})
            conn.execute(BARE_MARK, ([delivery_id for delivery_id, _ in batch],))
            return len(batch)

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


def bare_prepare_threshold() -> int | None:
    """psycopg's default (prepare from the 5th run) only with --prepared, as Hookline."""
    return None if os.environ.get("HOOKLINE_DATABASE_PROXIED") == "true" else 5


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
    """What one pipeline at one process count and one fan-out width measured."""

    pipeline: str
    processes: int
    endpoints: int = 1
    events: int = 0
    seconds: float = 0.0
    server_cpu: dict[str, float] = field(default_factory=dict)  # by stage, + "server"
    python_cpu: dict[str, float] = field(default_factory=dict)
    trips: dict[str, int] = field(default_factory=dict)
    log_bytes: dict[str, int] = field(default_factory=dict)
    deliver_batches: tuple[int, int] = (0, 0)  # messages handled, batches that held any
    wal_bytes: int = 0
    commits: int = 0
    statements: list[dict[str, Any]] = field(default_factory=list)  # pg_stat_statements
    wal_range: tuple[str, str] = ("", "")  # where the phase's WAL starts and ends

    def per_event(self, value: float) -> float:
        """`value` per delivered event."""
        return value / self.events if self.events else float("nan")

    def row(self) -> dict[str, Any]:
        """The --json row: per delivered event."""
        return {
            "pipeline": self.pipeline, "processes": self.processes, "endpoints": self.endpoints,
            "events_per_s": round(self.events / self.seconds, 1) if self.seconds else None,
            "server_cpu_us": round(self.per_event(sum(self.server_cpu.values())) * 1e6)
            if self.server_cpu else None,
            "wal_bytes": round(self.per_event(self.wal_bytes)),
            "commits": round(self.per_event(self.commits), 2),
            "python_cpu_us": round(self.per_event(sum(self.python_cpu.values())) * 1e6),
            "log_bytes": round(self.per_event(sum(self.log_bytes.values()))),
            # beside the meters: each stage's share, for telling a change's stage apart
            "stages": {s: self.stage_cpu(s) for s in sorted({*self.python_cpu, *self.server_cpu})},
        }  # fmt: skip

    def stage_cpu(self, stage: str) -> dict[str, int]:
        """One stage's server and Python CPU, µs per delivered event."""
        return {
            "server_cpu_us": round(self.per_event(self.server_cpu.get(stage, 0.0)) * 1e6),
            "python_cpu_us": round(self.per_event(self.python_cpu.get(stage, 0.0)) * 1e6),
        }


def delivered_count(conn: Any, pipeline: str) -> int:
    """Deliveries delivered so far."""
    table = "bare_deliveries" if pipeline == "bare" else "deliveries"
    row = conn.execute(f"SELECT count(*) FROM {table} WHERE state = 'delivered'").fetchone()
    return int(row[0])


def accepted_count(conn: Any, pipeline: str) -> int:
    """Events accepted so far."""
    table = "bare_events" if pipeline == "bare" else "events"
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def run_phase(
    url: str,
    pipeline: str,
    processes: int,
    endpoints: int,
    seconds: float,
    statements: bool,
    checkpoint: bool = False,
) -> Phase:
    """Start the workers, warm them, measure `seconds` of intake and the drain."""
    import psycopg

    kinds = ("receiver", "fanout", "deliver") if pipeline == "hookline" else (
        "bare_receiver", "bare_deliver")  # fmt: skip
    ctx = mp.get_context("spawn")
    q, nudges = ctx.Queue(), ctx.Queue()
    go, stop_intake, stop_rest = ctx.Event(), ctx.Event(), ctx.Event()
    release = ctx.Event()
    ready, out = ctx.Queue(), ctx.Queue()
    procs = []
    for kind in kinds:
        stop = stop_intake if kind.endswith("receiver") else stop_rest
        for _ in range(processes):
            p = ctx.Process(
                target=worker,
                args=(kind, url, q, nudges, go, stop, release, ready, out),
                daemon=True,
            )
            p.start()
            procs.append(p)
    for _ in procs:
        ready.get(timeout=120)
    phase = Phase(pipeline, processes, endpoints)
    with psycopg.connect(url, autocommit=True) as conn:
        time.sleep(1.5)  # the warm-up's statistics flushed, its messages handled
        start_delivered = delivered_count(conn, pipeline)
        start_accepted = accepted_count(conn, pipeline)
        if statements:
            conn.execute("SELECT pg_stat_statements_reset()")
        if checkpoint:
            conn.execute("CHECKPOINT")  # the phase begins as the minutes after one do
        cpu0 = server_cpu_by_role(url, conn.info.backend_pid)
        wal0, commits0 = wal_and_commits(conn)
        lsn0 = wal_position(conn)
        started = time.monotonic()
        go.set()
        time.sleep(seconds)
        stop_intake.set()
        time.sleep(0.2)
        accepted = accepted_count(conn, pipeline) - start_accepted
        while delivered_count(conn, pipeline) - start_delivered < accepted * endpoints:
            if time.monotonic() - started > seconds * 20 + 60:
                print(f"  {pipeline}: drain gave up", file=sys.stderr)
                break
            time.sleep(0.1)
        phase.seconds = time.monotonic() - started
        phase.events = (delivered_count(conn, pipeline) - start_delivered) // endpoints
        cpu1 = server_cpu_by_role(url, conn.info.backend_pid)
        stop_rest.set()
        for _ in procs:
            kind, cpu, trips, done, calls, log_bytes = out.get(timeout=60)
            stage = kind.removeprefix("bare_")
            if stage == "deliver":
                phase.deliver_batches = (
                    phase.deliver_batches[0] + done,
                    phase.deliver_batches[1] + calls,
                )
            phase.python_cpu[stage] = phase.python_cpu.get(stage, 0.0) + cpu
            phase.trips[stage] = phase.trips.get(stage, 0) + trips
            phase.log_bytes[stage] = phase.log_bytes.get(stage, 0) + log_bytes
        if statements:
            phase.statements = top_statements(conn)
        release.set()
        for p in procs:
            p.join(timeout=30)
        time.sleep(1.0)  # the exited backends' statistics flushed
        wal1, commits1 = wal_and_commits(conn)
        phase.wal_range = (lsn0, wal_position(conn))
    phase.wal_bytes, phase.commits = wal1 - wal0, commits1 - commits0
    if cpu0 is not None and cpu1 is not None:
        for role in cpu1:
            stage = role.removeprefix("bare_")
            phase.server_cpu[stage] = (
                phase.server_cpu.get(stage, 0.0) + cpu1[role] - cpu0.get(role, 0.0)
            )
    return phase


def top_statements(conn: Any, limit: int = 12) -> list[dict[str, Any]]:
    """The phase's costliest statements by planning + execution time (pg_stat_statements)."""
    rows = conn.execute(
        "SELECT calls, total_plan_time, total_exec_time, rows, shared_blks_hit, "
        "shared_blks_read, wal_bytes, regexp_replace(query, '\\s+', ' ', 'g') AS query "
        "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
        "WHERE datname = current_database()) AND query NOT LIKE '%%pg_stat_statements%%' "
        "ORDER BY total_plan_time + total_exec_time DESC LIMIT %s",
        (limit,),
    ).fetchall()
    keys = ("calls", "plan_ms", "exec_ms", "rows", "hit", "read", "wal", "query")
    return [dict(zip(keys, row, strict=True)) for row in rows]


def prepare(url: str, sink_url: str, widths: list[int]) -> dict[int, str]:
    """Per fan-out width N: a tenant, its Stripe source and N endpoints on the sink; the
    bare tables. Returns {N: source id}."""
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
    sources = {}
    try:
        operator = Caller("bench", "*")
        for width in widths:
            tenant = tenant_service.create_tenant(
                setup, HooklineConfig(), operator, name=f"bench-{width}", group=None
            )
            source = source_service.create_source(
                setup,
                operator,
                {"tenant_id": tenant["id"], "scheme": "stripe", "secret": STRIPE_SECRET},
            )
            for n in range(width):
                endpoint_service.create_endpoint(
                    setup, settings, operator,
                    {"tenant_id": tenant["id"], "url": f"{sink_url}/{n}", "max_concurrency": 1000},
                )  # fmt: skip
            sources[width] = str(source["id"])
    finally:
        setup.close()
    return sources


def report(phases: list[Phase]) -> None:
    """The tables: throughput and cost per delivered event, then per stage."""
    rows = []
    for ph in phases:
        server = sum(ph.server_cpu.values())
        rows.append([
            ph.pipeline, ph.processes, ph.endpoints, ph.events, f"{ph.events / ph.seconds:.0f}",
            f"{ph.per_event(server) * 1e6:.0f}" if ph.server_cpu else "-",
            f"{ph.per_event(ph.wal_bytes):.0f}", f"{ph.per_event(ph.commits):.2f}",
            f"{ph.per_event(sum(ph.trips.values())):.1f}",
            f"{ph.per_event(sum(ph.python_cpu.values())) * 1e6:.0f}",
            f"{ph.per_event(sum(ph.log_bytes.values())):.0f}",
        ])  # fmt: skip
    print_table(["pipeline", "procs/stage", "endpoints", "delivered", "events/s",
                 "server CPU µs/ev", "WAL B/ev", "commits/ev", "round trips/ev",
                 "Python CPU µs/ev", "log B/ev"], rows)  # fmt: skip
    print(
        "\nper stage, per delivered event (server CPU µs / round trips / Python CPU µs / log B);"
        " messages/batch: the mean of the deliver stage's batches:"
    )
    stage_rows = []
    for ph in phases:
        stages = sorted(set(ph.python_cpu) | set(ph.server_cpu))
        cells = [
            f"{s}: {ph.per_event(ph.server_cpu.get(s, 0.0)) * 1e6:.0f} / "
            f"{ph.per_event(ph.trips.get(s, 0)):.1f} / "
            f"{ph.per_event(ph.python_cpu.get(s, 0.0)) * 1e6:.0f} / "
            f"{ph.per_event(ph.log_bytes.get(s, 0)):.0f}"
            for s in stages
        ]
        messages, batches = ph.deliver_batches
        stage_rows.append(
            [
                ph.pipeline,
                ph.processes,
                ph.endpoints,
                f"{messages / batches:.1f}" if batches else "-",
                "; ".join(cells),
            ]
        )
    print_table(["pipeline", "procs/stage", "endpoints", "messages/batch", "stages"], stage_rows)
    print()
    for ours in (ph for ph in phases if ph.pipeline == "hookline"):
        bare = [ph for ph in phases if ph.pipeline == "bare" and
                (ph.processes, ph.endpoints) == (ours.processes, ours.endpoints)]  # fmt: skip
        if not bare:
            continue
        a, b = ours.row(), bare[0].row()
        cells = []
        for key, target, lower in RATIO_TARGETS:
            if a[key] is None or not b[key]:
                continue
            ratio = a[key] / b[key]
            met = ratio >= target if lower else ratio <= target
            cells.append(f"{key} {ratio:.2f}x ({'>=' if lower else '<='} {target:g}x: "
                         f"{'met' if met else 'MISSED'})")  # fmt: skip
        met = a["log_bytes"] <= LOG_BYTES_TARGET
        cells.append(f"log_bytes {a['log_bytes']} (<= {LOG_BYTES_TARGET}: "
                     f"{'met' if met else 'MISSED'})")  # fmt: skip
        print(f"{ours.processes} procs/stage, {ours.endpoints} endpoints: " + "; ".join(cells))
    for ph in phases:
        if not ph.statements:
            continue
        print(f"\n{ph.pipeline}, {ph.processes} procs/stage, {ph.endpoints} endpoints: "
              "costliest statements (pg_stat_statements), per delivered event")  # fmt: skip
        print_table(
            ["statement", "calls/ev", "plan µs/ev", "exec µs/ev", "plan µs/call",
             "exec µs/call", "blks hit/ev", "WAL B/ev"],
            [[st["query"][:70], f"{ph.per_event(st['calls']):.2f}",
              f"{ph.per_event(st['plan_ms']) * 1e3:.0f}",
              f"{ph.per_event(st['exec_ms']) * 1e3:.0f}",
              f"{st['plan_ms'] * 1e3 / st['calls']:.0f}",
              f"{st['exec_ms'] * 1e3 / st['calls']:.0f}",
              f"{ph.per_event(st['hit']):.0f}", f"{ph.per_event(int(st['wal'])):.0f}"]
             for st in ph.statements if st["calls"]],
        )  # fmt: skip


def report_wal_mix(url: str, phases: list[Phase]) -> None:
    """Each phase's WAL per delivered event, by table and index, then by record kind."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for ph in phases:
            print(f"\n{ph.pipeline}, {ph.processes} procs/stage, {ph.endpoints} endpoints: "
                  "WAL by relation (pg_waldump), per delivered event")  # fmt: skip
            mix = wal_mix(conn, *ph.wal_range)
            print_table(["relation", "WAL B/ev", "share"], mix_rows(mix, ph.events))
            if ph.events:
                print(mix_kinds(mix, ph.events))


def main(argv: list[str] | None = None) -> int:
    """Run every pipeline at every process count and width, taking turns; print the tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--endpoints", default="1", help="fan-out widths, e.g. 1,10")
    parser.add_argument(
        "--prepared", action="store_true",
        help="server-side prepared statements (a direct connection, not RDS Proxy)",
    )  # fmt: skip
    parser.add_argument(
        "--no-receipt", action="store_true",
        help="every event through a fan-out run (HOOKLINE_FANOUT_AT_RECEIPT off, decision 0076)",
    )  # fmt: skip
    parser.add_argument("--statements", action="store_true", help="pg_stat_statements tables")
    parser.add_argument(
        "--wal-mix", action="store_true",
        help="each phase's WAL by table, index and record kind (pg_waldump; local server)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one line of JSON rows")
    parser.add_argument(
        "--shape", default="", help="what-if SQL files run after the migrations, comma-separated"
    )  # fmt: skip
    parser.add_argument(
        "--past-days", type=int, default=0,
        help="make this many earlier days' partitions first, as retention keeps them",
    )  # fmt: skip
    parser.add_argument(
        "--steady", type=int, default=0, metavar="N",
        help="N dedupe keys per tenant first, random provider ids, a checkpoint at each "
        "phase's start (bench/steady.py)",
    )  # fmt: skip
    parser.add_argument(
        "--server", default="", metavar="NAME=VALUE,...",
        help="Postgres settings for the local server, e.g. wal_compression=off",
    )  # fmt: skip
    args = parser.parse_args(argv)
    import psycopg

    quiet_environment()
    os.environ["HOOKLINE_DATABASE_PROXIED"] = "false" if args.prepared else "true"
    os.environ["HOOKLINE_FANOUT_AT_RECEIPT"] = "false" if args.no_receipt else "true"
    counts = [int(n) for n in args.processes.split(",")]
    widths = [int(n) for n in args.endpoints.split(",")]
    settings = (
        {"shared_preload_libraries": "pg_stat_statements",
         "pg_stat_statements.track_planning": "on"} if args.statements else {}
    )  # fmt: skip
    if args.wal_mix:
        settings.update(WAL_MIX_SETTINGS)
    settings.update(dict(item.split("=", 1) for item in args.server.split(",") if item))
    say = sys.stderr if args.json else sys.stdout
    with bench_database("pipeline", settings) as (url, where), running_sink() as sink:
        if args.statements:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        sink_url = sink.url("/hook")
        sources = prepare(url, sink_url, widths)
        if args.past_days:
            make_past_partitions(url, args.past_days)
        if args.steady:
            print(f"filling {args.steady:,} dedupe keys per tenant ...", file=sys.stderr)
            fill_keys(url, sources, args.steady * len(widths), args.steady)
            os.environ["BENCH_STEADY"] = "1"
        shapes = [Path(f) for f in args.shape.split(",") if f]
        for shape in shapes:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(shape.read_bytes())  # a local file: the bench's own what-if
        os.environ["BENCH_SINK_URL"] = sink_url
        os.environ["BENCH_AHEAD"] = str(int(args.seconds * REQUESTS_AHEAD_PER_SECOND) + 100)
        print(f"Postgres: {where}; {server_facts(url)}", file=say)
        print(f"machine: {machine_facts()}", file=say)
        print(f"prepared statements: {'on' if args.prepared else 'off (as behind RDS Proxy)'}",
              file=say)  # fmt: skip
        print(f"day partitions: {9 + args.past_days} per hot table", file=say)
        if args.steady:
            print(f"steady state: {args.steady:,} dedupe keys per tenant, random provider ids,"
                  " a checkpoint at each phase's start", file=say)  # fmt: skip
        if shapes:
            print(f"what-if shape: {', '.join(map(str, shapes))}", file=say)
        phases = []
        for n in counts:
            for width in widths:
                os.environ["BENCH_SOURCE_ID"] = sources[width]
                os.environ["BENCH_ENDPOINTS"] = str(width)
                for pipeline in ("hookline", "bare"):
                    print(f"  {pipeline} x{n}, {width} endpoints ...", file=sys.stderr, flush=True)
                    phases.append(
                        run_phase(
                            url,
                            pipeline,
                            n,
                            width,
                            args.seconds,
                            args.statements,
                            bool(args.steady),
                        )
                    )
        print(f"machine after: {machine_facts()}\n", file=say)
        if args.json:
            print(json.dumps([ph.row() for ph in phases]))
        else:
            report(phases)
        if args.wal_mix:
            report_wal_mix(url, phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
