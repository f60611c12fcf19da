"""Delivery throughput: the deliver handler in-process against a bare httpx loop, with the
same concurrency, to the same local subscriber, in the same run.

Given one tenant with 5 endpoints on a fast loopback sink (`bench/sink.py`, its own
process, so neither side is measured through it) and real delivery rows made by the real
fan-out statement and `claim_due` (state 'queued', with their enqueue generation), each
concurrency level measures:

* **handler** — `functions.deliver.handler.lambda_handler` called by `--handlers` threads
  (1, 2, 4), each invoking batches of 10 SQS records (the real record shape, bodies from
  `hookline.queues.DeliveryMessage`): the batch claimed in one statement (slots, secrets),
  each message signed with every active secret and POSTed through the SSRF-guarded
  transport, the delivered attempts recorded in one statement. A batch's messages go on the
  handler's pool of 10 threads, or in turn on the calling thread once the container has seen
  its endpoints answer fast (decision 0093: with the loopback sink, nearly every batch). The
  pool is one per process, so every level has at most 10 in flight, and in turn one per
  handler thread.
* **bare httpx** — 10 x handlers threads POSTing the same payloads with an httpx.Client
  (keep-alive pool as large as the concurrency) to the same sink: no database, no signing,
  no Powertools.

Every delivery must come back `delivered` (an endpoint's `max_concurrency` is high enough
never to defer); a moto server stands by for any retry or deferral (there should be none).
Paths take turns in `--rounds` slices per level, after a warm-up each. Besides the rate,
the table shows this process's CPU time per delivery (every thread, the sink excluded),
which a busy machine disturbs far less. Logs and metrics are silenced
(POWERTOOLS_LOG_LEVEL=WARNING, POWERTOOLS_METRICS_DISABLED=true, stdout discarded while
measuring). The database pool is `--pool-size` (default 10, one per deliver thread).

    .venv/bin/python bench/deliver.py [--seconds 6] [--handlers 1,2,4] [--rounds 2]
                                      [--deliveries 40000] [--pool-size 10] [--batch 10]
                                      [--profile N]

`--profile N` prints a cProfile of N handler invocations instead (a batch's attempts run one
after another in the invoking thread, which is the one cProfile sees).

The before/after comparison of decision 0025 (fewer statements per delivery) was run once
with this bench's `--ab` mode and a frozen copy of the old deliverer; its result is in
docs/performance.md, and both are in git history (before issue 13).

Postgres is `DATABASE_URL` if set (a fresh database is created on it and dropped at the
end), else a durable local server started in a temp dir and stopped at the end. This is a
benchmark, not a test: it prints a table and never fails on a figure.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import os
import sys
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from common import (
    bench_database,
    machine_facts,
    print_table,
    quiet_environment,
    server_facts,
)
from deliver_setup import (
    ENDPOINTS,
    PAYLOAD,
    configure,
    create_endpoints,
    create_queues,
    delivery_states,
    moto_server,
    queued_deliveries,
    sqs_events,
)
from sink import running_sink

if TYPE_CHECKING:
    pass

TARGET_RATIO = 0.8
BATCH = 10  # SQS records per invocation, as the event source hands them (--batch)
# The deliver handler's thread pool (functions/deliver/handler.py): one per process, shared
# by every invocation, so handler threads beyond one keep it busy but never widen it.
DELIVER_THREADS = 10
WARMUP_SECONDS = 1.0
# What the deliverer adds to a request, so both sides put about the same bytes on the wire.
BARE_HEADERS = {
    "content-type": "application/json",
    "user-agent": "Hookline-Webhooks/1.0",
    "webhook-id": "dlv_0000000000000000000000000000",
    "webhook-timestamp": "1700000000",
    "webhook-signature": "v1," + "A" * 44,
}


@dataclass(frozen=True)
class Row:
    """What one path measured at one concurrency level."""

    path: str
    handlers: int
    concurrency: int
    completed: int
    elapsed: float  # wall seconds
    cpu: float  # CPU seconds of this process (every thread), the sink excluded

    @property
    def rate(self) -> float:
        """Deliveries (POSTs) per second of wall time."""
        return self.completed / self.elapsed if self.elapsed > 0 else 0.0

    @property
    def cpu_ms(self) -> float:
        """Milliseconds of this process's CPU per delivery."""
        return self.cpu * 1000 / self.completed if self.completed else 0.0

    def __add__(self, other: Row) -> Row:
        return Row(self.path, self.handlers, self.concurrency, self.completed + other.completed,
                   self.elapsed + other.elapsed, self.cpu + other.cpu)  # fmt: skip


class Batches:
    """The prepared SQS events, handed out once each across threads."""

    def __init__(self, events: list[dict[str, Any]]) -> None:
        self._events = iter(events)
        self._lock = threading.Lock()
        self.total = len(events)
        self.size = len(events[0]["Records"]) if events else 0  # records per invocation
        self.exhausted = False

    def next(self) -> dict[str, Any] | None:
        """The next event, or None when every one has been taken."""
        with self._lock:
            event = next(self._events, None)
            if event is None:
                self.exhausted = True
            return event


def run_threads(
    count: int, seconds: float, work: Callable[[float], int]
) -> tuple[int, float, float]:
    """`count` threads released together, each calling `work(deadline)` which returns what
    it completed; (total completed, wall seconds from release to the last one's end, CPU
    seconds of the process meanwhile)."""
    ready = threading.Barrier(count + 1)
    done: list[int] = []
    failures: list[BaseException] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            ready.wait()
            got = work(time.perf_counter() + seconds)
        except BaseException as err:  # reported below; never leave the others waiting
            ready.abort()
            with lock:
                failures.append(err)
            return
        with lock:
            done.append(got)

    threads = [threading.Thread(target=run, name=f"bench-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    with contextlib.suppress(threading.BrokenBarrierError):  # a failure is raised below
        ready.wait()
    start, cpu = time.perf_counter(), time.process_time()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    if failures:
        raise RuntimeError("a benchmark thread failed") from failures[0]
    return sum(done), elapsed, cpu


def handler_slice(batches: Batches, handlers: int, seconds: float) -> Row:
    """`handlers` threads invoking the deliver handler with the batches until time is up."""
    from functions.deliver.handler import lambda_handler
    from hookline_dev.local.apigw import LocalContext

    def work(deadline: float) -> int:
        delivered = 0
        while time.perf_counter() < deadline:
            event = batches.next()
            if event is None:
                break
            answer = lambda_handler(event, LocalContext(function_name="hookline-deliver-standard"))
            if answer.get("batchItemFailures"):
                raise RuntimeError(f"the handler failed records: {answer}")
            delivered += len(event["Records"])
        return delivered

    completed, elapsed, cpu = run_threads(handlers, seconds, work)
    in_flight = min(handlers * batches.size, DELIVER_THREADS)
    return Row("handler", handlers, in_flight, completed, elapsed, cpu)


def bare_slice(
    urls: Sequence[str], handlers: int, seconds: float, batch: int, path: str = "bare httpx"
) -> Row:
    """`batch` x `handlers` threads POSTing with one shared httpx client until time is up."""
    import httpx

    concurrency = handlers * batch
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    with httpx.Client(limits=limits, timeout=15.0, trust_env=False) as client:

        def work(deadline: float) -> int:
            sent = 0
            for url in itertools.cycle(urls):
                if time.perf_counter() >= deadline:
                    break
                response = client.post(url, content=PAYLOAD, headers=BARE_HEADERS)
                if response.status_code != 200:
                    raise RuntimeError(f"the sink answered {response.status_code}")
                sent += 1
            return sent

        completed, elapsed, cpu = run_threads(concurrency, seconds, work)
    return Row(path, handlers, concurrency, completed, elapsed, cpu)


# --- the run ----------------------------------------------------------------------------


def measure(
    batches: Batches, urls: Sequence[str], levels: Sequence[int], seconds: float, rounds: int
) -> list[tuple[Row, Row, Row]]:
    """Per level: a warm-up of each path, then `rounds` slices each, taking turns. The paths:
    the handler, the bare loop with as many threads as the handler's pool allows in flight,
    and the bare loop in turn (one thread per handler thread, as the handler sends a fast
    endpoint's batch: decision 0093)."""
    results = []
    for handlers in levels:
        print(f"measuring {handlers} handler thread(s) ...", file=sys.stderr, flush=True)
        paths: dict[str, Callable[[float], Row]] = {
            "handler": partial(handler_slice, batches, handlers),
            "bare": partial(bare_slice, urls, handlers, batch=batches.size),
            "in turn": partial(bare_slice, urls, handlers, batch=1, path="bare, in turn"),
        }
        for run in paths.values():
            run(WARMUP_SECONDS)
        slice_seconds = seconds / rounds
        totals: dict[str, Row] = {}
        for r in range(rounds):
            order = list(paths) if r % 2 == 0 else list(reversed(paths))
            for path in order:
                got = paths[path](slice_seconds)
                totals[path] = totals[path] + got if path in totals else got
        results.append((totals["bare"], totals["in turn"], totals["handler"]))
    return results


class InlineExecutor(Executor):
    """Runs what is submitted at once, in the caller's thread: cProfile sees one thread only,
    so the profile runs a batch's attempts one after another instead of on the pool."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        done: Future[Any] = Future()
        try:
            done.set_result(fn(*args, **kwargs))
        except BaseException as err:
            done.set_exception(err)
        return done


def profile(batches: Batches, count: int) -> None:
    """cProfile `count` handler invocations (after a warm-up) and print where the deliver
    process's own CPU goes: the top functions by their own time, then by cumulative time."""
    import cProfile
    import pstats

    import functions.deliver.handler as handler
    from hookline_dev.local.apigw import LocalContext

    handler_slice(batches, 1, WARMUP_SECONDS)
    handler._threads = InlineExecutor()  # type: ignore[assignment]
    profiler = cProfile.Profile(time.thread_time)  # CPU, not the waits for Postgres or HTTP
    done = 0
    with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
        for _ in range(count):
            event = batches.next()
            if event is None:
                break
            profiler.enable()
            handler.lambda_handler(event, LocalContext(function_name="hookline-deliver-standard"))
            profiler.disable()
            done += len(event["Records"])
    stats = pstats.Stats(profiler)
    total = sum(row[2] for row in stats.stats.values())  # type: ignore[attr-defined]
    print(f"profiled {done} deliveries: {total * 1e6 / max(done, 1):,.0f} us of thread CPU each")
    stats.sort_stats("tottime").print_stats(25)
    stats.sort_stats("cumulative").print_stats(40)
    # what the deliverer's own steps call: httpx's request, or ours around it
    stats.print_callees(r"hookline/delivery.py:\d+\((handle|send)\)")
    stats.print_callees(r"deliver/handler.py:\d+\(lambda_handler\)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Command-line options."""
    parser = argparse.ArgumentParser(
        description="Deliver handler throughput against a bare httpx loop."
    )
    parser.add_argument("--seconds", type=float, default=6.0, help="measured seconds per row")
    parser.add_argument("--handlers", default="1,2,4", help="handler thread counts")
    parser.add_argument("--rounds", type=int, default=2, help="turns the paths take per row")
    parser.add_argument(
        "--deliveries", type=int, default=40_000, help="queued deliveries prepared up front"
    )
    parser.add_argument(
        "--pool-size", type=int, default=DELIVER_THREADS,
        help="HOOKLINE_DB_POOL_SIZE: one connection per deliver thread by default",
    )  # fmt: skip
    parser.add_argument(
        "--batch", type=int, default=BATCH,
        help="SQS records per invocation (1: the fixed costs a trickle of events pays)",
    )  # fmt: skip
    parser.add_argument(
        "--profile", type=int, default=0, metavar="BATCHES",
        help="cProfile this many handler invocations (attempts inline) instead of measuring",
    )  # fmt: skip
    args = parser.parse_args(argv)
    try:
        args.handlers = [int(h) for h in str(args.handlers).split(",") if h.strip()]
    except ValueError:
        parser.error("--handlers takes comma-separated integers")
    if not args.handlers or min(args.handlers) < 1 or args.rounds < 1 or args.seconds <= 0:
        parser.error("--handlers, --rounds and --seconds must be positive")
    if not 1 <= args.batch <= DELIVER_THREADS:
        parser.error(f"--batch takes 1 to {DELIVER_THREADS} records")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """Set up, measure every level, print the table."""
    args = parse_args(argv)
    quiet_environment()
    pool_size = args.pool_size
    machine = machine_facts()
    with bench_database("deliver") as (url, where), moto_server() as moto, running_sink() as sink:
        configure(url, moto, pool_size)
        queue_arn = create_queues(moto)
        tenant_id, urls = create_endpoints(url, sink)
        print(f"preparing {args.deliveries} queued deliveries ...", file=sys.stderr, flush=True)
        claimed = queued_deliveries(url, tenant_id, args.deliveries)
        batches = Batches(sqs_events(claimed, queue_arn, args.batch))
        if args.profile:
            profile(batches, args.profile)
            return 0
        # Metrics are disabled, but Powertools still prints a full set of 100 values.
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            results = measure(batches, urls, args.handlers, args.seconds, args.rounds)
        states = delivery_states(url)
        served = sink.requests()
        facts = server_facts(url)
    report(results, args, pool_size, where, facts, machine)
    print(f"deliveries by state at the end: {states}; the sink served {served} requests")
    if batches.exhausted:
        print("the prepared deliveries ran out: raise --deliveries for a full measure")
    return 0


def report(
    results: list[tuple[Row, Row, Row]],
    args: argparse.Namespace,
    pool_size: int,
    where: str,
    facts: str,
    machine: str,
) -> None:
    """One line per path and level, with the handler's ratio to bare httpx."""
    print(
        f"deliver benchmark: {args.seconds:g} s per row in {args.rounds} slices, batches of "
        f"{args.batch}, ~{len(PAYLOAD)} B payloads, {ENDPOINTS} endpoints, pool {pool_size}; "
        f"{machine}"
    )
    print(f"postgres: {where}; {facts}")
    print()
    rows = []
    for bare, in_turn, handler in results:
        for row in (bare, in_turn, handler):
            rows.append((row.path, row.handlers, row.concurrency, f"{row.rate:,.0f}",
                         f"{row.cpu_ms:.2f}",
                         f"{row.rate / bare.rate:.2f}" if bare.rate else "-",
                         f"{row.rate / in_turn.rate:.2f}" if in_turn.rate else "-"))  # fmt: skip
    print_table(
        ("path", "handler threads", "max in flight", "deliveries/s", "CPU ms each", "x bare",
         "x in turn"),
        rows,
    )  # fmt: skip
    print()
    ratios = [(h.handlers, h.rate / b.rate if b.rate else 0.0) for b, _, h in results]
    # Judged where both sides have the same requests in flight (1 handler thread: 10 and
    # 10); at more threads the bare loop has 20-40 in flight and degrades from GIL contention,
    # so its ratio there is not like for like (docs/performance.md).
    fair = [
        r
        for (b, _, h), (_, r) in zip(results, ratios, strict=True)
        if b.concurrency == h.concurrency
    ]
    verdict = "met" if fair and all(r >= TARGET_RATIO for r in fair) else "missed"
    listed = ", ".join(f"{n} thread(s) {r:.2f}x" for n, r in ratios)
    print(
        f"target: handler >= {TARGET_RATIO}x bare httpx at equal concurrency: {listed}; "
        f"judged on equal in-flight only: {verdict}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
