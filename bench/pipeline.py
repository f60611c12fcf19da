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
durable statement. Raw psycopg, no signatures, no claims, no logs. With `--floor`, a third
pipeline, the **floor**: the bare relay that checks each request's Stripe signature before it
stores it, and whose deliverer claims each batch before it sends (one statement marking the
rows as being sent and reading their payloads, committed without waiting for the disk, as
Hookline's claims are; decision 0086's floor, `bench/deliver_calls.py`'s floor route). It is
the least a relay pays that stores only what it verified and claims in Postgres before it
sends, with nothing checked in the claim (no cap, rate, lease or attempt log): the report
gives Hookline's ratios to it as well.

Each event is fanned out to N endpoints (`--endpoints 1,10`: one tenant with N endpoints per
value). Both pipelines run as deployed behind RDS Proxy by default: no server-side prepared
statements (Hookline with `HOOKLINE_DATABASE_PROXIED=true`, the bare relay with psycopg's
`prepare_threshold=None`); `--prepared` lets both prepare, as a direct connection does. The
workers log as deployed (Powertools at INFO, EMF metrics on) into a byte counter: the log
bytes a stage writes per delivered event are what CloudWatch would ingest.

Each phase runs `--seconds` of intake (receivers in a closed loop) and then drains: events/s
is every delivered event over intake + drain. The drain ends when the deliverers have handled
as many messages as the intake made deliveries (a shared counter, so the wait puts no load on
the server) and Postgres counts them delivered. A receiver makes its requests before the
intake starts (the payload, the Stripe signature and API Gateway's event for Hookline's;
the payload for the bare relay's): what the sender does is neither pipeline's cost. Per
delivered event it reports the Postgres server's CPU (from /proc: the stage's backends by
application_name, plus the server's own processes: WAL writer, checkpointer...), WAL bytes
(`pg_current_wal_lsn`), commits (`pg_stat_database.xact_commit`), round trips per stage
(psycopg `Connection.wait` calls: one per statement, BEGIN or COMMIT) and Python CPU per
stage (the workers' own).

    .venv/bin/python bench/pipeline.py [--seconds 5] [--processes 1,2,4] [--endpoints 1,10]
        [--floor] [--prepared] [--no-receipt] [--statements [all]] [--wal-mix] [--json]
        [--past-days 90]
        [--steady 2000000] [--server wal_compression=off]
        [--shape bench/shapes/stage2.sql[,...]] [--uncounted-claim] [--rate 500] [--perf]

`--statements` preloads pg_stat_statements (with planning time) and prints each phase's
costliest statements per delivered event (`--statements all`: the statements run inside
functions too, whose times are also in their caller's; a statement's executor start-up and
shut-down are in no one's but the top-level call's); `--perf` records each phase with Linux's
`perf` and prints each stage's backend CPU by C function (bench/backend_perf.py: commit,
parsing, planning, executor start-up, CHECK constraints, triggers' WHEN...); `--wal-mix` reads
each phase's WAL back with `pg_waldump` (bench/walmix.py) and prints its bytes per delivered
event by table and index, and by record kind (local server only); `--shape` runs what-if SQL
files after the migrations (bench/shapes: a row shape a migration might bring, measured before
it is built); `--uncounted-claim` is a probe: Hookline's deliver makes its claims on a
connection of their own that no stage counts (its backend's CPU, its round trips), so deliver's
figures are those of a deliver that sends without a claim statement (decision 0107); `--rate R`
offers every pipeline R events a second on a fixed schedule (an open loop, as a deployment's
senders do: what an event costs at a given load, where the closed loop measures each pipeline
at the rate its own receiver sets, and a slower receiver leaves deliver smaller batches);
`--json` prints one line instead of the tables: a list of rows `{"pipeline", "processes",
"endpoints", "events_per_s", "server_cpu_us", "wal_bytes", "commits", "python_cpu_us",
"log_bytes", "stages", "messages_per_batch"}`, per delivered event (`stages`: each stage's
server and Python CPU and round trips, `{"receiver": {"server_cpu_us", "python_cpu_us",
"round_trips"}, ...}`; `messages_per_batch`: the mean of deliver's batches). A fresh database
has nine day partitions of each hot table (today, the week ahead, the default); `--past-days
90` first makes the 90 earlier days' partitions that the default retention
(`ledger_retention_days`) keeps, as a deployment has them after three months. The bare relay's
tables are not partitioned either way. `--steady N` begins each phase as a running deployment's
minutes after a checkpoint (bench/steady.py): N dedupe keys per tenant (and N events per width
in the bare relay's table) already there, random provider ids, and a `CHECKPOINT` before the
intake, so full-page images are paid as they are in production.

Postgres is a durable local server (default fsync), or `DATABASE_URL` (then the server CPU
columns are empty unless it runs on this machine). A benchmark: prints, never fails.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import backend_perf
from common import (
    bench_database,
    machine_facts,
    make_past_partitions,
    quiet_environment,
    server_facts,
)
from pgcost import cpu_by_role, server_cpu_by_pid, wal_and_commits
from pipeline_report import Phase, report, report_backend_functions, report_wal_mix
from pipeline_workers import STRIPE_SECRET, worker
from sink import running_sink
from steady import fill_keys
from walmix import SERVER_SETTINGS as WAL_MIX_SETTINGS
from walmix import wal_position

# Requests a receiver makes before it starts, per second of intake: more than one makes here
REQUESTS_AHEAD_PER_SECOND = 4000
# The bare relay's deliveries leave half of each page free, as Hookline's do (decision 0109):
# its mark is then a HOT update even when its deliverer works through a backlog, which on full
# pages cost it a new heap tuple and key entry per mark (~550 B of WAL per event with ten
# endpoints in the closed loop): more than the least a relay must write.
BARE_DDL = """
CREATE TABLE bare_events (id text PRIMARY KEY, tenant_id text NOT NULL, type text NOT NULL,
  payload bytea NOT NULL, received_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE bare_deliveries (id bigserial PRIMARY KEY,
  event_id text NOT NULL REFERENCES bare_events (id), endpoint integer NOT NULL,
  state text NOT NULL DEFAULT 'pending', updated_at timestamptz NOT NULL DEFAULT now())
  WITH (fillfactor = 50);
"""


def delivered_count(conn: Any, pipeline: str) -> int:
    """Deliveries delivered so far."""
    table = "deliveries" if pipeline == "hookline" else "bare_deliveries"
    row = conn.execute(f"SELECT count(*) FROM {table} WHERE state = 'delivered'").fetchone()
    return int(row[0])


def accepted_count(conn: Any, pipeline: str) -> int:
    """Events accepted so far."""
    table = "events" if pipeline == "hookline" else "bare_events"
    return int(conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def late(started: float, seconds: float) -> bool:
    """Whether a phase of `seconds` of intake has drained for too long to go on waiting."""
    return time.monotonic() - started > seconds * 20 + 60


def run_phase(
    url: str,
    pipeline: str,
    processes: int,
    endpoints: int,
    seconds: float,
    statements: str | None,
    checkpoint: bool = False,
    perf_file: Path | None = None,
) -> Phase:
    """Start the workers, warm them, measure `seconds` of intake and the drain."""
    import psycopg

    kinds = ("receiver", "fanout", "deliver") if pipeline == "hookline" else (
        f"{pipeline}_receiver", f"{pipeline}_deliver")  # fmt: skip
    ctx = mp.get_context("spawn")
    q, nudges = ctx.Queue(), ctx.Queue()
    go, stop_intake, stop_rest = ctx.Event(), ctx.Event(), ctx.Event()
    release = ctx.Event()
    ready, out = ctx.Queue(), ctx.Queue()
    handled_messages = ctx.Value("q", 0)
    procs = []
    for kind in kinds:
        stop = stop_intake if kind.endswith("receiver") else stop_rest
        for _ in range(processes):
            p = ctx.Process(
                target=worker,
                args=(kind, url, q, nudges, go, stop, release, ready, out, handled_messages),
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
        cpu0 = server_cpu_by_pid(url, conn.info.backend_pid)
        wal0, commits0 = wal_and_commits(conn)
        lsn0 = wal_position(conn)
        start_handled = handled_messages.value
        recording = backend_perf.start(perf_file) if perf_file else None
        started = time.monotonic()
        go.set()
        time.sleep(seconds)
        stop_intake.set()
        time.sleep(0.2)
        accepted = accepted_count(conn, pipeline) - start_accepted
        # The drain: the deliverers' own count first, then Postgres's word for it. Counting
        # delivered rows every 0.1 s read the whole table each time (~8 ms of a server core a
        # poll with ten endpoints), a load on the machine being measured.
        wanted = accepted * endpoints
        while handled_messages.value - start_handled < wanted and not late(started, seconds):
            time.sleep(0.005)
        while delivered_count(conn, pipeline) - start_delivered < wanted:
            if late(started, seconds):
                print(f"  {pipeline}: drain gave up", file=sys.stderr)
                break
            time.sleep(0.05)
        phase.seconds = time.monotonic() - started
        phase.events = (delivered_count(conn, pipeline) - start_delivered) // endpoints
        cpu1 = server_cpu_by_pid(url, conn.info.backend_pid)
        if recording is not None:
            backend_perf.stop(recording)
        stop_rest.set()
        for _ in procs:
            kind, cpu, trips, done, calls, log_bytes = out.get(timeout=60)
            stage = stage_of(kind)
            if stage == "deliver":
                phase.deliver_batches = (
                    phase.deliver_batches[0] + done,
                    phase.deliver_batches[1] + calls,
                )
            phase.python_cpu[stage] = phase.python_cpu.get(stage, 0.0) + cpu
            phase.trips[stage] = phase.trips.get(stage, 0) + trips
            phase.log_bytes[stage] = phase.log_bytes.get(stage, 0) + log_bytes
        if statements:
            phase.statements = top_statements(conn, 12 if statements == "top" else 24)
        release.set()
        for p in procs:
            p.join(timeout=30)
        time.sleep(1.0)  # the exited backends' statistics flushed
        wal1, commits1 = wal_and_commits(conn)
        phase.wal_range = (lsn0, wal_position(conn))
    phase.wal_bytes, phase.commits = wal1 - wal0, commits1 - commits0
    if cpu0 is not None and cpu1 is not None:
        for role, seconds in cpu_by_role(cpu0, cpu1).items():
            stage = stage_of(role)
            phase.server_cpu[stage] = phase.server_cpu.get(stage, 0.0) + seconds
    if perf_file is not None and cpu1 is not None:
        stages = {pid: stage_of(role) for pid, (role, _) in cpu1.items()}
        phase.backend_functions = backend_perf.by_stage(perf_file, stages, phase.events)
        perf_file.unlink()
    return phase


def stage_of(kind: str) -> str:
    """The stage a worker kind (or a backend's application_name) belongs to."""
    return kind.removeprefix("bare_").removeprefix("floor_")


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


def prepare(url: str, sink_url: str, widths: list[int], cap: int = 1000) -> dict[int, str]:
    """Per fan-out width N: a tenant, its Stripe source and N endpoints on the sink, each with
    `cap` as its max_concurrency; the bare tables. Returns {N: source id}."""
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
                    {"tenant_id": tenant["id"], "url": f"{sink_url}/{n}", "max_concurrency": cap},
                )  # fmt: skip
            sources[width] = str(source["id"])
    finally:
        setup.close()
    return sources


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
    parser.add_argument(
        "--statements", nargs="?", const="top", choices=["top", "all"],
        help="pg_stat_statements tables; `all`: the statements inside functions too",
    )  # fmt: skip
    parser.add_argument(
        "--wal-mix", action="store_true",
        help="each phase's WAL by table, index and record kind (pg_waldump; local server)",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="one line of JSON rows")
    parser.add_argument(
        "--perf", action="store_true",
        help="each stage's backend CPU by C function (Linux perf; bench/backend_perf.py)",
    )  # fmt: skip
    parser.add_argument(
        "--floor", action="store_true",
        help="a third pipeline: the bare relay that verifies before it stores and claims "
        "each batch before it sends",
    )  # fmt: skip
    parser.add_argument(
        "--shape", default="", help="what-if SQL files run after the migrations, comma-separated"
    )  # fmt: skip
    parser.add_argument(
        "--uncounted-claim", action="store_true",
        help="a probe: Hookline's deliver claims on a connection the bench does not count, "
        "the price of a deliver without a claim statement (decision 0107)",
    )  # fmt: skip
    parser.add_argument(
        "--cap", type=int, default=1000,
        help="the endpoints' max_concurrency: 1000 is above the in-flight ceiling, so first "
        "messages go without a claim (decision 0108); 100 is below it, so each batch is "
        "claimed, and no batch fills it",
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
        "--rate", type=float, default=0, metavar="EVENTS_PER_S",
        help="an open loop: each pipeline's receivers offered this many events a second "
        "between them (0: a closed loop, each as fast as it goes)",
    )  # fmt: skip
    parser.add_argument(
        "--server", default="", metavar="NAME=VALUE,...",
        help="Postgres settings for the local server, e.g. wal_compression=off",
    )  # fmt: skip
    args = parser.parse_args(argv)
    if args.rate < 0:
        parser.error(f"--rate must be 0 (a closed loop) or more events a second, not {args.rate:g}")
    import psycopg

    quiet_environment()
    os.environ["HOOKLINE_DATABASE_PROXIED"] = "false" if args.prepared else "true"
    os.environ["HOOKLINE_FANOUT_AT_RECEIPT"] = "false" if args.no_receipt else "true"
    counts = [int(n) for n in args.processes.split(",")]
    widths = [int(n) for n in args.endpoints.split(",")]
    settings = (
        {"shared_preload_libraries": "pg_stat_statements",
         "pg_stat_statements.track_planning": "on",
         "pg_stat_statements.track": args.statements} if args.statements else {}
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
        sources = prepare(url, sink_url, widths, args.cap)
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
        os.environ["BENCH_UNCOUNTED_CLAIM"] = "1" if args.uncounted_claim else ""
        os.environ["BENCH_AHEAD"] = str(int(args.seconds * REQUESTS_AHEAD_PER_SECOND) + 100)
        print(f"Postgres: {where}; {server_facts(url)}", file=say)
        print(f"machine: {machine_facts()}", file=say)
        print(f"prepared statements: {'on' if args.prepared else 'off (as behind RDS Proxy)'}",
              file=say)  # fmt: skip
        print(f"day partitions: {9 + args.past_days} per hot table", file=say)
        print(f"endpoints' cap: {args.cap}", file=say)
        if args.steady:
            print(f"steady state: {args.steady:,} dedupe keys per tenant, random provider ids,"
                  " a checkpoint at each phase's start", file=say)  # fmt: skip
        if shapes:
            print(f"what-if shape: {', '.join(map(str, shapes))}", file=say)
        if args.uncounted_claim:
            print("a probe: deliver's claims run uncounted (decision 0107)", file=say)
        if args.rate:
            print(f"offered: {args.rate:g} events/s to every pipeline (an open loop)", file=say)
        phases = []
        for n in counts:
            os.environ["BENCH_RATE"] = str(args.rate / n)
            for width in widths:
                os.environ["BENCH_SOURCE_ID"] = sources[width]
                os.environ["BENCH_ENDPOINTS"] = str(width)
                for pipeline in ("hookline", "bare", "floor")[: 3 if args.floor else 2]:
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
                            Path(tempfile.gettempdir()) / f"hookline-perf-{os.getpid()}.data"
                            if args.perf
                            else None,
                        )
                    )
        print(f"machine after: {machine_facts()}\n", file=say)
        if args.json:
            print(json.dumps([ph.row() for ph in phases]))
        else:
            report(phases)
        if args.wal_mix:
            report_wal_mix(url, phases)
        if args.perf:
            report_backend_functions(phases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
