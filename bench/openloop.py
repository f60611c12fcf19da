"""Open-loop load on the receiver: a ladder of fixed offered rates, where do errors begin?

bench/load.py drives the dev stack's front with wrk, which is closed-loop: each connection
waits for its answer before sending again, so a slow server slows the load tool and the
rate where errors begin is never reached. Here requests leave on a fixed schedule — request
`n` of a step is due at `start + n / rate` — whether or not earlier answers came back
(decision 0024: why a generator of our own). Latency is measured from each request's
**scheduled** time, not from when it was written, so a stall of the server shows in full
(coordinated-omission free). A request goes out on an idle keep-alive connection, or on a new
one when all are busy (counted: "conns"), so the generator never waits on the server; if the
generator itself starts a request late (its event loop busy), that delay is its **lag**, and a
step whose p99 lag exceeds LAG_BOUND_MS is marked: its figures are partly the generator's.

Set-up as bench/load.py (imported, not copied): a `hookline dev` on a fresh database with the
shortened queued lease, a tenant per group with a Standard Webhooks source each, `--endpoints`
endpoints on the loopback sink (one accepted event is one delivery), and requests built before
each step's clock starts, every one genuinely signed with its own `webhook-id`. Then:

1. warm-up: 5 s at 50 req/s, not reported, drained; then wait (up to `--quiet-wait` s) for a
   1-minute load average under 1.
2. for each rate in `--rates`: a **baseline** step against the trivial loopback server
   (bench/wrk/ok_server.py, the front's server class) with the same generator — the ceiling of
   generator plus Python HTTP serving — then the **receiver** step against `POST
   /in/{source_id}`, each for `--seconds`. Deliveries flow all along: there is no drain
   between steps (the backlog of one step is delivered during the next), unless
   `--drain-between`: then each step's events are drained, and the machine left to quiet
   down, before the next step, so that each rate starts from an empty backlog. The load
   average is printed at the start of each step. The ladder stops after a receiver step with
   more than 1 % errors (`--keep-going` to climb on).
3. after the ladder (or each step), the drain and bench/load.py's accounting per step:
   **lost** (answered 200, not in the ledger; must be 0), **undelivered**, **stored
   unanswered**.

A step is **held** when every request was answered 2xx, the 2xx rate kept up with the offer
(>= 95 %), and the p99 latency from schedule is under `--p99-bound` (1 s). It **queues** when
answers are all 2xx but late or fewer than offered, and has **errors** when any request got
a non-2xx, timed out (`--timeout`, 10 s from its send) or hit a socket error.

    .venv/bin/python bench/openloop.py                           # 100..600 req/s, 20 s each
    .venv/bin/python bench/openloop.py --rates 300,400 --seconds 10

A benchmark, not a test: it prints tables and never fails on a figure (it exits 1 only if an
accepted event was lost or undelivered).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import json
import os
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import machine_facts, print_table, server_facts  # noqa: E402
from bench.e2e import CpuMeter, Target, child_pid, pct, set_up  # noqa: E402
from bench.load import (  # noqa: E402
    TOLERANCE_SECONDS,
    Pipeline,
    dev_stack,
    drain,
    ok_server,
    reconcile_resent,
    signed_request,
    wait_until_quiet,
)
from bench.sink import running_sink  # noqa: E402

LAG_BOUND_MS = 5.0  # a step whose p99 generator lag exceeds this is the generator's figure
KEEP_UP = 0.95  # a held step's 2xx rate is at least this share of the offered rate
WARM_RATE, WARM_SECONDS = 50, 5
MAX_HEAD = 64 * 1024
GENERATOR_NICENESS = -10


def due_offsets(rate: float, count: int) -> list[float]:
    """When each of `count` requests is due, in seconds from the step's start, at `rate`/s:
    evenly spaced, independent of any answer."""
    return [n / rate for n in range(count)]


def parse_head(head: bytes) -> tuple[int, int, bool]:
    """(status, Content-Length, keep-alive) of an HTTP/1.1 response head (status line and
    headers, up to and including the blank line)."""
    lines = head.split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    status = int(parts[1])
    length, keep = 0, parts[0] == b"HTTP/1.1"
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"content-length":
            length = int(value.strip())
        elif name == b"connection":
            keep = value.strip().lower() == b"keep-alive"
    return status, length, keep


@dataclass
class Step:
    """What the generator saw in one step."""

    target: str
    rate: float
    seconds: float
    load: float = 0.0  # 1-minute load average when the step began
    sent: int = 0
    statuses: collections.Counter[int] = field(default_factory=collections.Counter)
    timeouts: int = 0
    socket_errors: dict[str, int] = field(default_factory=dict)  # exception type -> count
    latency_ms: list[float] = field(default_factory=list)  # from schedule: answers, timeouts
    lag_ms: list[float] = field(default_factory=list)  # start of each request - its due time
    connections: int = 0  # connections opened
    peak_in_flight: int = 0
    accepted: list[str] = field(default_factory=list)  # event ids answered 200
    duplicates: int = 0
    elapsed: float = 0.0  # from the first due time to the last answer (or give-up)
    generator_cpu: float = 0.0  # CPU seconds of this process during the step
    run: str = ""
    ended: float = 0.0  # wall clock when the step ended (for load.drain's window)

    @property
    def ok(self) -> int:
        """Answers 2xx."""
        return sum(n for s, n in self.statuses.items() if 200 <= s < 300)

    @property
    def non_2xx(self) -> int:
        """Answers other than 2xx."""
        return sum(n for s, n in self.statuses.items() if not 200 <= s < 300)

    @property
    def errors(self) -> int:
        """Requests not answered 2xx: other statuses, timeouts and socket errors."""
        return self.non_2xx + self.timeouts + sum(self.socket_errors.values())

    @property
    def achieved(self) -> float:
        """2xx answers per second, over the time from the first due time to the last answer."""
        return self.ok / self.elapsed if self.elapsed else 0.0

    @property
    def lagging(self) -> bool:
        """The generator started requests late: the step's figures are partly its own."""
        return pct(self.lag_ms, 99) > LAG_BOUND_MS


def verdict(step: Step, p99_bound_ms: float) -> str:
    """'held', 'queueing' or 'errors' (see the module docstring)."""
    if step.errors:
        return "errors"
    if step.achieved < KEEP_UP * step.rate or pct(step.latency_ms, 99) > p99_bound_ms:
        return "queueing"
    return "held"


def ladder_summary(steps: Sequence[Step], p99_bound_ms: float) -> dict[str, float | None]:
    """The highest offered rate held, and the first (lowest) rates that queued or had errors,
    over receiver steps in offered order (None where there is none)."""
    held = [s.rate for s in steps if verdict(s, p99_bound_ms) == "held"]
    queueing = [s.rate for s in steps if verdict(s, p99_bound_ms) == "queueing"]
    errors = [s.rate for s in steps if verdict(s, p99_bound_ms) == "errors"]
    first_bad = min(queueing + errors, default=None)
    return {
        "highest_held": max((r for r in held if first_bad is None or r < first_bad), default=None),
        "first_queueing": min(queueing, default=None),
        "first_errors": min(errors, default=None),
    }


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def offer(
    url: str, requests: Sequence[bytes], rate: float, timeout: float, step: Step
) -> None:
    """Send `requests` to `url`'s host at `rate`/s on schedule, recording into `step`."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    loop = asyncio.get_running_loop()
    idle: list[Connection] = []
    in_flight = 0

    async def one(raw: bytes, due: float) -> None:
        nonlocal in_flight
        started = loop.time()
        step.lag_ms.append((started - due) * 1000)
        in_flight += 1
        step.peak_in_flight = max(step.peak_in_flight, in_flight)
        connection = idle.pop() if idle else None
        try:
            async with asyncio.timeout(timeout):
                if connection is None:
                    connection = await asyncio.open_connection(host, port, limit=MAX_HEAD)
                    step.connections += 1
                reader, writer = connection
                writer.write(raw)
                head = await reader.readuntil(b"\r\n\r\n")
                status, length, keep = parse_head(head)
                body = await reader.readexactly(length)
        except TimeoutError:
            step.timeouts += 1
            step.latency_ms.append((loop.time() - due) * 1000)
            _close(connection)
            return
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as e:
            name = type(e).__name__
            step.socket_errors[name] = step.socket_errors.get(name, 0) + 1
            _close(connection)
            return
        finally:
            in_flight -= 1
            step.elapsed = max(step.elapsed, loop.time() - first_due)
        step.latency_ms.append((loop.time() - due) * 1000)
        step.statuses[status] += 1
        if status == 200:
            # Counted for the drain; a 200 without the receiver's JSON is still a 2xx.
            with contextlib.suppress(ValueError, KeyError, TypeError):
                answer = json.loads(body)
                step.accepted.append(str(answer["id"]))
                step.duplicates += bool(answer.get("duplicate"))
        if keep:
            idle.append(connection)
        else:
            _close(connection)

    tasks: set[asyncio.Task[None]] = set()
    first_due = loop.time() + 0.05
    for raw, offset in zip(requests, due_offsets(rate, len(requests)), strict=True):
        due = first_due + offset
        pause = due - loop.time()
        if pause > 0:
            await asyncio.sleep(pause)
        task = asyncio.create_task(one(raw, due))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        step.sent += 1
    if tasks:
        await asyncio.wait(set(tasks))
    for connection in idle:
        _close(connection)


def _close(connection: Connection | None) -> None:
    if connection is not None:
        connection[1].close()


def run_step(
    target: str, url: str, requests: Sequence[bytes], rate: float, timeout: float, run: str
) -> Step:
    """One step of the ladder against `url`, on a fresh event loop."""
    step = Step(target, rate, len(requests) / rate, load=os.getloadavg()[0], run=run)
    # No garbage collection while sending: a full pass over this process (the hookline
    # package, boto3, psycopg imported for the set-up) stalls the event loop for tens of ms,
    # which showed as generator lag. The objects made so far are frozen out of later passes.
    gc.collect()
    gc.freeze()
    gc.disable()
    cpu = time.process_time()
    try:
        asyncio.run(offer(url, requests, rate, timeout, step))
    finally:
        gc.enable()
    step.generator_cpu = time.process_time() - cpu
    step.ended = time.time()
    return step


def prioritise_generator() -> int:
    """Raise this process's scheduling priority (niceness GENERATOR_NICENESS, if allowed) and
    return its niceness: on a 2-CPU machine that the stack keeps busy, an ordinary-priority
    generator is scheduled late and starts requests tens of ms behind their time. It uses a
    few % of a CPU, so priority costs the server little and keeps the schedule the
    schedule. Called after the stack, sink and baseline server started (children inherit it)."""
    with contextlib.suppress(PermissionError):
        os.setpriority(os.PRIO_PROCESS, 0, GENERATOR_NICENESS)
    return os.getpriority(os.PRIO_PROCESS, 0)


def build(host: str, targets: list[Target], count: int, run: str) -> list[bytes]:
    """`count` signed requests of a run (bench/load.py's, one webhook-id each)."""
    return [signed_request(host, targets, n, run) for n in range(count)]


def step_row(step: Step, bound: float) -> list[object]:
    """One row of the ladder table."""
    errors = ", ".join(
        [f"{n}x{s}" for s, n in sorted(step.statuses.items()) if not 200 <= s < 300]
        + [f"{step.timeouts} timeout"] * bool(step.timeouts)
        + [f"{n} {name}" for name, n in sorted(step.socket_errors.items())]
    )
    ms = step.latency_ms
    return [
        f"{step.target} {step.rate:g}/s", f"{step.achieved:.0f}", errors or "0",
        f"{pct(ms, 50):.0f}", f"{pct(ms, 90):.0f}", f"{pct(ms, 99):.0f}",
        f"{max(ms, default=0):.0f}", f"{pct(step.lag_ms, 99):.1f}", step.connections,
        f"{100 * step.generator_cpu / step.seconds:.0f}%", f"{step.load:.2f}",
        verdict(step, bound) + (" (generator lag)" if step.lagging else ""),
    ]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rates", default="100,200,300,400,500,600", help="offered req/s")
    parser.add_argument("--seconds", type=float, default=20, help="per step (20)")
    parser.add_argument("--endpoints", type=int, default=4, help="endpoints on the sink (4)")
    parser.add_argument("--timeout", type=float, default=10, help="per request, s (10)")
    parser.add_argument("--p99-bound", type=float, default=1000, help="ms, for 'held' (1000)")
    parser.add_argument("--drain", type=float, default=900, help="max seconds to drain (900)")
    parser.add_argument("--quiet-wait", type=float, default=180, help="max wait for load < 1")
    parser.add_argument(
        "--drain-between", action="store_true",
        help="drain (and wait for quiet) after each step instead of after the ladder",
    )  # fmt: skip
    parser.add_argument("--keep-going", action="store_true", help="climb past >1%% errors")
    parser.add_argument("--no-baseline", action="store_true", help="skip the baseline steps")
    parser.add_argument("--stack-log", help="keep the started stack's output in this file")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()
    rates = [float(r) for r in args.rates.split(",")]
    if 2 * args.seconds + 2 * args.timeout + 30 > TOLERANCE_SECONDS:
        sys.exit(f"--seconds must leave the signatures fresh: at most {TOLERANCE_SECONDS // 3}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    baselines: list[Step] = []
    steps: list[Step] = []
    pipelines: list[Pipeline] = []
    cpus: list[CpuMeter] = []
    with dev_stack(args.stack_log) as (state, where):
        os.environ.update(state.env())
        from hookline.db import reset_database
        from hookline.settings import get_settings

        reset_database()
        config = get_settings().config
        host = state.url.removeprefix("http://")
        with running_sink() as sink, ok_server() as ok_url:
            targets = set_up(state.database_url, config, args.endpoints, sink.url)
            pids = {
                "hookline dev": state.pid,
                "moto server": child_pid(state.pid, "hookline_dev.local.emulator"),
                "subscribers": sink.process.pid,
                "generator": os.getpid(),
            }
            niceness = prioritise_generator()
            warm_run = f"warm_{os.getpid()}"
            print(f"warming up: {WARM_SECONDS} s at {WARM_RATE} req/s ...", file=sys.stderr)
            warm = run_step(
                "warm-up", state.url, build(host, targets, WARM_RATE * WARM_SECONDS, warm_run),
                WARM_RATE, args.timeout, warm_run,
            )  # fmt: skip
            drain(state.database_url, warm_run, warm.accepted, time.time(), args.drain)
            load, waited = wait_until_quiet(args.quiet_wait)
            print(f"load {load:.2f} after waiting {waited:.0f} s", file=sys.stderr, flush=True)
            resent_before = reconcile_resent(state.log_file)
            for index, rate in enumerate(rates):
                run = f"s{index}_r{rate:g}_{os.getpid()}"
                if args.drain_between and index:
                    load, waited = wait_until_quiet(args.quiet_wait)
                    print(f"load {load:.2f} after waiting {waited:.0f} s", file=sys.stderr)
                count = int(rate * args.seconds)
                if not args.no_baseline:
                    baseline = run_step(
                        "baseline", ok_url, build(host, targets, count, f"base_{run}"), rate,
                        args.timeout, f"base_{run}",
                    )  # fmt: skip
                    baselines.append(baseline)
                requests = build(host, targets, count, run)
                with CpuMeter(pids) as cpu:
                    step = run_step("receiver", state.url, requests, rate, args.timeout, run)
                steps.append(step)
                cpus.append(cpu)
                if args.drain_between:
                    pipelines.append(
                        drain(state.database_url, run, step.accepted, step.ended, args.drain)
                    )
                print(
                    f"  {rate:g}/s offered: {step.achieved:.0f} 2xx/s, {step.errors} errors, "
                    f"p99 {pct(step.latency_ms, 99):.0f} ms",
                    file=sys.stderr,
                    flush=True,
                )
                if step.errors > 0.01 * step.sent and not args.keep_going:
                    print("  more than 1 % errors: the ladder stops", file=sys.stderr)
                    break
            print("draining ...", file=sys.stderr, flush=True)
            drain_began = time.monotonic()
            for step in steps[len(pipelines) :]:
                pipelines.append(
                    drain(state.database_url, step.run, step.accepted, step.ended, args.drain)
                )
            drained_after = time.monotonic() - drain_began
            resent = reconcile_resent(state.log_file) - resent_before
            subscriber_requests = sink.requests()
        facts = server_facts(state.database_url)

    bound = args.p99_bound
    print()
    print(f"receiver under open-loop load — {machine_facts()}")
    print(f"Postgres: {where} ({facts}); AWS: {state.emulator}; hookline dev at {state.url}")
    print(
        f"fixed-rate asyncio generator (bench/openloop.py), {args.seconds:g} s per step, "
        f"timeout {args.timeout:g} s, niceness {niceness}; latency from each request's "
        f"scheduled time; Standard Webhooks-signed ~1 KB POSTs, each a distinct webhook-id; "
        f"{len(config.group_names)} groups, {args.endpoints} endpoints on a loopback sink; "
        + ("drained after each step" if args.drain_between else "no drain between steps")
    )
    print()
    rows = []
    for index, step in enumerate(steps):
        if index < len(baselines):
            rows.append(step_row(baselines[index], bound))
        rows.append(step_row(step, bound))
    print_table(
        ["step (offered)", "2xx/s", "errors", "p50 ms", "p90 ms", "p99 ms", "max ms",
         "lag p99 ms", "conns", "gen CPU", "load", "verdict"],
        rows,
    )  # fmt: skip
    print()
    names = ["hookline dev", "moto server", "subscribers", "generator"]
    rows = []
    for step, cpu, p in zip(steps, cpus, pipelines, strict=True):
        named = sum(cpu.used.get(n, 0.0) for n in names)
        rows.append(
            [f"receiver {step.rate:g}/s", p.accepted, step.duplicates, p.stored_unanswered,
             p.lost, p.undelivered, f"{p.delivered_in_window / step.seconds:.0f}",
             f"{p.drained_after:.0f}"]
            + [f"{100 * cpu.used.get(n, 0.0) / cpu.seconds:.0f}%" for n in names]
            + [f"{100 * (cpu.used['whole machine'] - named) / cpu.seconds:.0f}%"]
        )  # fmt: skip
    print_table(
        ["after the drain", "accepted", "duplicate", "stored unanswered", "lost",
         "undelivered", "delivered/s to step end", "drain s",
         *[f"CPU {n}" for n in names], "CPU others"],
        rows,
    )  # fmt: skip
    print()
    lag = [v for p in pipelines for v in p.lag_ms]
    print(
        f"last drain {drained_after:.0f} s; re-sent by reconcile {resent}; subscriber saw "
        f"{subscriber_requests} requests in all; receive → delivered p50 "
        f"{pct(lag, 50) / 1000:.1f} s, p99 {pct(lag, 99) / 1000:.1f} s"
    )
    summary = ladder_summary(steps, bound)
    lost = sum(p.lost for p in pipelines)
    undelivered = sum(p.undelivered for p in pipelines)
    print(f"lost {lost}, undelivered {undelivered}")
    held = summary["highest_held"]
    print(
        f"highest offered rate held (0 errors, 2xx rate >= {KEEP_UP:.0%} of offered, p99 from "
        f"schedule < {bound:g} ms): " + (f"{held:g} req/s" if held else "none")
    )
    for key, what in (("first_queueing", "queueing begins"), ("first_errors", "errors begin")):
        value = summary[key]
        print(f"{what} at: " + (f"{value:g} req/s" if value else "not reached"))
    if args.json:
        print(json.dumps(
            {"summary": summary, "lost": lost, "undelivered": undelivered, "resent": resent,
             "steps": [_as_json(s, bound) for s in baselines + steps]}
        ))  # fmt: skip
    for step, p in zip(steps, pipelines, strict=True):
        for line in p.undelivered_states:
            print(f"undelivered at {step.rate:g}/s: {line}")
    return 1 if lost or undelivered else 0


def _as_json(step: Step, bound: float) -> dict[str, Any]:
    return {
        "target": step.target, "rate": step.rate, "achieved": step.achieved, "sent": step.sent,
        "statuses": {str(k): v for k, v in step.statuses.items()}, "timeouts": step.timeouts,
        "socket_errors": step.socket_errors, "connections": step.connections,
        "peak_in_flight": step.peak_in_flight, "load": step.load,
        "p50_ms": pct(step.latency_ms, 50), "p90_ms": pct(step.latency_ms, 90),
        "p99_ms": pct(step.latency_ms, 99), "max_ms": max(step.latency_ms, default=0),
        "lag_p99_ms": pct(step.lag_ms, 99), "lag_max_ms": max(step.lag_ms, default=0),
        "generator_cpu": step.generator_cpu, "verdict": verdict(step, bound),
    }  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
