"""Load on the receiver: wrk against the dev stack's front while deliveries flow.

A real `hookline dev` (started here on a fresh database) gets a tenant per
tenant group, a Standard Webhooks source each and `--endpoints` endpoints on a loopback sink
(bench/sink.py, its own process), set up as bench/e2e.py does: every event matches exactly
one endpoint, so one accepted event is one delivery. For each connection count in
`--connections`:

1. Requests are built before the clock starts: `--budget` x `--seconds` complete HTTP/1.1
   POSTs to the sources (~1 KB JSON bodies, round-robin over the endpoints' event types),
   each with its own `webhook-id` and a valid Standard Webhooks signature (timestamp = the
   build time; the sources' tolerance is 300 s and a run uses at most 2 x `--seconds` of it).
   The receiver stores nothing it cannot verify, so every request must be genuinely signed.
2. **baseline**: wrk sends the same requests to a trivial loopback server answering 200 (the
   same server class as the front; bench/wrk/ok_server.py): the ceiling of wrk plus Python
   HTTP serving on this machine.
3. **receiver**: wrk sends them to the front (`POST /in/{source_id}`) for `--seconds`, with
   `-t2` threads and a 10 s timeout, through bench/wrk/signed.lua, which counts every status
   and keeps the event id of every 200. If wrk runs past the end of the requests it starts
   over; the repeats are counted and the receiver answers them as duplicates (no new event).
4. The stack drains: the bench waits until every accepted event has a delivered delivery
   (or `--drain` seconds), then reads the database:
   * **lost**: an event id answered 200 that is not in the ledger. Must be 0.
   * **undelivered**: an accepted event in the ledger whose delivery is not delivered when the
     drain ends (its state is printed: the reconciler re-sends a queued delivery whose
     message went missing once its 15-minute lease expires, so a short drain can end first).
   * **stored unanswered**: events of the run in the ledger whose 200 wrk never saw (a
     timeout or a broken connection after the commit): not lost, but not counted as accepted.
   * **delivered in window**: deliveries of the run finished while wrk was still sending,
     per second: deliveries flow during the load, they are not all left for later.
   * **lag**: `deliveries.finished_at - events.received_at` (receive → delivered).

The stack runs with default settings except two: a delivery whose queue message went
missing is re-sent by the reconciler after a 120 s queued lease (default 900 s), checked
every 30 s (default 300 s), so that such a repair happens within the drain; the number of
deliveries it re-sent is printed (**re-sent by reconcile**, from its `ReconcileLostMessages`
metric in the stack's log).

Before each connection count it waits (up to `--quiet-wait` s) until the machine is quiet,
i.e. the 1-minute load average is under 1, and prints the load it started at.

    .venv/bin/python bench/load.py                       # 4, 16, 64 connections, 30 s each
    .venv/bin/python bench/load.py --connections 16 --seconds 10

Needs wrk (`apt-get install -y wrk`). This is a benchmark, not a test: it prints tables and
never fails on a figure (it exits 1 only if an accepted event was lost or undelivered).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import bench_database, machine_facts, print_table, server_facts  # noqa: E402
from bench.e2e import (  # noqa: E402
    PAYLOAD_PAD,
    SOURCE_SECRET,
    CpuMeter,
    Target,
    child_pid,
    pct,
    set_up,
    standard_headers,
)
from bench.sink import running_sink, server_process  # noqa: E402

WRK_DIR = Path(__file__).resolve().parent / "wrk"
WRK_THREADS = 2
WRK_TIMEOUT = "10s"
TOLERANCE_SECONDS = 300  # the sources' default timestamp tolerance
# A delivery whose queue message went missing is re-sent by the reconciler once its queued
# lease expires (default 900 s, reconcile every 300 s): shortened so that it happens within
# the drain and shows in the figures instead of outlasting them.
QUEUED_LEASE_SECONDS = 120
RECONCILE_EVERY_SECONDS = 30


@dataclass
class WrkResult:
    """What wrk and signed.lua reported for one run."""

    target: str
    connections: int
    summary: dict[str, Any]
    accepted: list[str]  # event ids answered 200 (repeats included)
    duplicates: int  # 200s that said "duplicate": true

    @property
    def seconds(self) -> float:
        return float(self.summary["duration_us"]) / 1e6

    @property
    def rate(self) -> float:
        return int(self.summary["requests"]) / self.seconds

    @property
    def non_2xx(self) -> int:
        return sum(n for s, n in self.summary["statuses"].items() if not 200 <= int(s) < 300)

    @property
    def socket_errors(self) -> int:
        return sum(int(self.summary[k]) for k in ("connect", "read", "write", "timeout"))

    def ms(self, key: str) -> str:
        return f"{int(self.summary[key]) / 1000:.1f}"


@dataclass
class Pipeline:
    """What the database says about one receiver run after the drain."""

    accepted: int  # distinct event ids answered 200
    lost: int
    undelivered: int
    undelivered_states: list[str]  # one line per undelivered delivery, for the record
    stored_unanswered: int
    delivered_in_window: int
    drained_after: float
    lag_ms: list[float]
    resent: int = 0  # re-sent by the reconciler during the run and the drain (whole stack)


def signed_request(host: str, targets: list[Target], n: int, run: str) -> bytes:
    """The `n`-th request of a run: a complete HTTP/1.1 POST to a source (round-robin over
    the targets), webhook-id `msg_load_{run}_{n}`, signed now."""
    target = targets[n % len(targets)]
    body = json.dumps({"type": target.event_type, "n": n, "pad": PAYLOAD_PAD}).encode()
    headers = standard_headers(SOURCE_SECRET, f"msg_load_{run}_{n}", body)
    head = f"POST {target.path} HTTP/1.1\r\nHost: {host}\r\n" + "".join(
        f"{k}: {v}\r\n" for k, v in headers.items()
    )
    return head.encode() + f"Content-Length: {len(body)}\r\n\r\n".encode() + body


def build_requests(
    directory: Path, host: str, targets: list[Target], count: int, run: str, threads: int
) -> None:
    """`count` signed requests, dealt over one file per wrk thread (signed.lua's format: a
    length line, then the raw request)."""
    dealt: list[list[bytes]] = [[] for _ in range(threads)]
    for n in range(count):
        raw = signed_request(host, targets, n, run)
        dealt[n % threads].append(f"{len(raw)}\n".encode() + raw)
    for index, chunks in enumerate(dealt):
        (directory / f"requests-{index + 1}.bin").write_bytes(b"".join(chunks))


def wrk_threads(connections: int) -> int:
    """wrk wants at least one connection per thread."""
    return min(WRK_THREADS, connections)


def run_wrk(target: str, url: str, directory: Path, connections: int, seconds: float) -> WrkResult:
    """wrk with signed.lua for `seconds` at `connections` connections."""
    command = [
        "wrk", f"-t{wrk_threads(connections)}", f"-c{connections}", f"-d{seconds:g}s",
        f"--timeout={WRK_TIMEOUT}", "-s", str(WRK_DIR / "signed.lua"), url, "--", str(directory),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in done.stdout.splitlines() if line.startswith('{"requests"')]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"wrk failed ({done.returncode}): {done.stdout}\n{done.stderr}")
    accepted, duplicates = [], 0
    for line in (directory / "accepted.txt").read_text().splitlines():
        event_id, duplicate = line.split()
        accepted.append(event_id)
        duplicates += duplicate == "1"
    return WrkResult(target, connections, json.loads(lines[-1]), accepted, duplicates)


def drain(url: str, run: str, answered: Iterable[str], ended: float, timeout: float) -> Pipeline:
    """Wait until every accepted event (`answered`: the event ids answered 200) is delivered
    (or `timeout`), then count."""
    import psycopg

    accepted = sorted(set(answered))
    like = f"msg_load_{run}_%"
    start = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        missing = set(accepted)
        while missing and time.monotonic() - start < timeout:
            rows = conn.execute(
                "SELECT d.event_id FROM deliveries d"
                " WHERE d.state = 'delivered' AND d.event_id = ANY(%s)",
                (list(missing),),
            ).fetchall()
            missing -= {r[0] for r in rows}
            if missing:
                time.sleep(0.5)
        drained_after = time.monotonic() - start
        in_ledger = {
            r[0]
            for r in conn.execute(
                "SELECT id FROM events WHERE id = ANY(%s)", (accepted,)
            ).fetchall()
        }
        of_run = conn.execute(
            "SELECT count(*) FROM events WHERE dedupe_key LIKE %s", (like,)
        ).fetchone()
        in_window = conn.execute(
            "SELECT count(*) FROM deliveries d JOIN events e ON e.id = d.event_id"
            " WHERE e.dedupe_key LIKE %s AND d.state = 'delivered'"
            " AND d.finished_at <= to_timestamp(%s)",
            (like, ended),
        ).fetchone()
        lag = conn.execute(
            "SELECT extract(epoch FROM d.finished_at - e.received_at) * 1000"
            " FROM deliveries d JOIN events e ON e.id = d.event_id"
            " WHERE e.dedupe_key LIKE %s AND d.state = 'delivered'",
            (like,),
        ).fetchall()
        undelivered_states = [
            " ".join(str(v) for v in row)
            for row in conn.execute(
                "SELECT id, state, tenant_group, enqueue_seq, attempt_count, updated_at,"
                " lease_expires_at FROM deliveries WHERE event_id = ANY(%s)"
                " AND state <> 'delivered'",
                (sorted(missing),),
            ).fetchall()
        ]
    not_stored = set(accepted) - in_ledger
    return Pipeline(
        accepted=len(accepted),
        lost=len(not_stored),
        undelivered=len(missing - not_stored),
        undelivered_states=undelivered_states,
        stored_unanswered=int(of_run[0] if of_run else 0) - len(in_ledger),
        delivered_in_window=int(in_window[0] if in_window else 0),
        drained_after=drained_after,
        lag_ms=[float(r[0]) for r in lag],
    )


def wait_until_quiet(limit: float) -> tuple[float, float]:
    """Wait (at most `limit` s) for a 1-minute load average under 1; (load now, seconds
    waited)."""
    began = time.monotonic()
    while os.getloadavg()[0] >= 1.0 and time.monotonic() - began < limit:
        time.sleep(5)
    return os.getloadavg()[0], time.monotonic() - began


def children_cpu() -> float:
    """User + system CPU seconds of the children waited for so far (wrk runs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def warm(host: str, state: Any, targets: list[Target], timeout: float) -> None:
    """5 s of wrk at 4 connections, not reported, drained: the first seconds of a fresh
    stack (pools filling, first imports and compilations) are slower than what follows."""
    with tempfile.TemporaryDirectory(prefix="hookline-load-") as tmp:
        build_requests(Path(tmp), host, targets, 4000, f"warm_{os.getpid()}", 2)
        print("warming up: 5 s at 4 connections ...", file=sys.stderr, flush=True)
        result = run_wrk("warm-up", state.url, Path(tmp), 4, 5)
        drain(state.database_url, f"warm_{os.getpid()}", result.accepted, time.time(), timeout)


@contextmanager
def dev_stack(stack_log: str | None) -> Iterator[tuple[Any, str]]:
    """A `hookline dev` on a fresh database with the shortened lease; (state, where Postgres
    comes from)."""
    from hookline_dev.local.devstate import BackgroundDevStack

    with bench_database("load") as (url, where), tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "hookline.json"
        config.write_text(json.dumps({"delivery_queued_lease_seconds": QUEUED_LEASE_SECONDS}))
        os.environ["HOOKLINE_CONFIG"] = str(config)  # this process reads the same config
        env = {**os.environ, "DATABASE_URL": url}
        env.pop("AWS_ENDPOINT_URL", None)
        stack = BackgroundDevStack(
            Path(tmp) / ".hookline",
            args=["--status-every", "5", "--reconcile-every", str(RECONCILE_EVERY_SECONDS)],
            env=env,
            log_path=Path(stack_log) if stack_log else None,
        )
        print("starting hookline dev ...", file=sys.stderr, flush=True)
        state = stack.start()
        try:
            yield state, where
        finally:
            stack.stop()


def reconcile_resent(log_file: str | None) -> int:
    """Deliveries the reconciler has re-sent so far because their message went missing (its
    `ReconcileLostMessages` metric, summed over the stack's log)."""
    if not log_file or not Path(log_file).exists():
        return 0
    total = 0.0
    with open(log_file, encoding="utf-8", errors="replace") as lines:
        for line in lines:
            if '"ReconcileLostMessages"' in line:
                with contextlib.suppress(ValueError, KeyError, TypeError):
                    total += sum(json.loads(line)["ReconcileLostMessages"])
    return int(total)


@contextmanager
def ok_server() -> Iterator[str]:
    """The baseline server's URL, for the duration of the block."""
    with server_process(WRK_DIR / "ok_server.py") as (_, port):
        yield f"http://127.0.0.1:{port}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", default="4,16,64", help="wrk connection counts")
    parser.add_argument("--seconds", type=float, default=30, help="per run (30)")
    parser.add_argument("--endpoints", type=int, default=4, help="endpoints on the sink (4)")
    parser.add_argument(
        "--budget", type=int, default=1500, help="signed requests built per second of run"
    )
    parser.add_argument("--drain", type=float, default=600, help="max seconds to drain (600)")
    parser.add_argument("--quiet-wait", type=float, default=180, help="max wait for load < 1")
    parser.add_argument("--no-baseline", action="store_true", help="skip the baseline rows")
    parser.add_argument("--stack-log", help="keep the started stack's output in this file")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        sys.exit("bench/load.py needs wrk: apt-get install -y wrk (Debian/Ubuntu)")
    if 2 * args.seconds + 30 > TOLERANCE_SECONDS:
        sys.exit(
            f"--seconds must leave the signatures fresh: at most {TOLERANCE_SECONDS // 2 - 15}"
        )
    counts = [int(c) for c in args.connections.split(",")]
    # A plain `kill` stops the stack and removes the database too (finally blocks run).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    runs: list[tuple[WrkResult | None, WrkResult, Pipeline, float, float]] = []
    cpus: list[tuple[int, CpuMeter]] = []
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
            }
            warm(host, state, targets, args.drain)
            for index, connections in enumerate(counts):
                run = f"r{index}_c{connections}_{os.getpid()}"
                load, waited = wait_until_quiet(args.quiet_wait)
                with tempfile.TemporaryDirectory(prefix="hookline-load-") as tmp:
                    directory = Path(tmp)
                    total = int(args.budget * args.seconds)
                    print(
                        f"{connections} connections: building {total} signed requests "
                        f"(load {load:.2f} after waiting {waited:.0f} s) ...",
                        file=sys.stderr,
                        flush=True,
                    )
                    build_requests(directory, host, targets, total, run, wrk_threads(connections))
                    baseline = None
                    if not args.no_baseline:
                        baseline = run_wrk("baseline", ok_url, directory, connections,
                                           args.seconds)  # fmt: skip
                    resent_before = reconcile_resent(state.log_file)
                    with CpuMeter(pids) as cpu:
                        wrk_cpu = children_cpu()
                        result = run_wrk(
                            "receiver", state.url, directory, connections, args.seconds
                        )
                        wrk_cpu = children_cpu() - wrk_cpu
                    ended = time.time()
                print(
                    f"  receiver {result.rate:.0f} req/s; draining ...", file=sys.stderr, flush=True
                )
                pipeline = drain(state.database_url, run, result.accepted, ended, args.drain)
                pipeline.resent = reconcile_resent(state.log_file) - resent_before
                runs.append((baseline, result, pipeline, load, waited))
                cpu.used["wrk"] = wrk_cpu
                cpus.append((connections, cpu))
            subscriber_requests = sink.requests()
        facts = server_facts(state.database_url)

    print()
    print(f"receiver under wrk load — {machine_facts()}")
    print(f"Postgres: {where} ({facts}); AWS: {state.emulator}; hookline dev at {state.url}")
    print(
        f"wrk -t{WRK_THREADS} --timeout {WRK_TIMEOUT}, {args.seconds:g} s per run; Standard "
        f"Webhooks-signed ~1 KB POSTs, each a distinct webhook-id; {len(config.group_names)} "
        f"groups, {args.endpoints} endpoints on a loopback sink"
    )
    print()
    rows = []
    for baseline, result, _, load, _ in runs:
        for r in (baseline, result):
            if r is None:
                continue
            rows.append(
                [f"{r.target} c={r.connections}", f"{r.rate:.0f}", r.ms("p50_us"),
                 r.ms("p90_us"), r.ms("p99_us"), r.ms("max_us"), r.non_2xx, r.socket_errors,
                 r.summary["wrapped"], f"{load:.2f}"]
            )  # fmt: skip
    print_table(
        ["wrk run", "req/s", "p50 ms", "p90 ms", "p99 ms", "max ms", "non-2xx",
         "socket err", "repeats", "load"],
        rows,
    )  # fmt: skip
    print()
    rows = []
    for _, result, p, _, _ in runs:
        rows.append(
            [f"receiver c={result.connections}", p.accepted, result.duplicates,
             p.stored_unanswered, p.lost, p.undelivered, p.resent,
             f"{p.delivered_in_window / result.seconds:.0f}",
             f"{p.drained_after:.0f}", f"{pct(p.lag_ms, 50) / 1000:.1f}",
             f"{pct(p.lag_ms, 99) / 1000:.1f}", f"{max(p.lag_ms, default=0) / 1000:.1f}"]
        )  # fmt: skip
    print_table(
        ["after the drain", "accepted", "duplicate", "stored unanswered", "lost",
         "undelivered", "re-sent by reconcile",
         "delivered/s in window", "drain s", "lag p50 s", "lag p99 s", "lag max s"],
        rows,
    )  # fmt: skip
    print()
    names = ["hookline dev", "moto server", "subscribers", "wrk"]
    rows = []
    for connections, cpu in cpus:
        named = sum(cpu.used.get(n, 0.0) for n in names)
        others = cpu.used["whole machine"] - named
        rows.append(
            [f"receiver c={connections}"]
            + [f"{100 * cpu.used.get(n, 0.0) / cpu.seconds:.0f}%" for n in names]
            + [f"{100 * others / cpu.seconds:.0f}%",
               f"{100 * cpu.used['whole machine'] / cpu.seconds:.0f}%"]
        )  # fmt: skip
    print_table(["CPU while wrk sends (of one CPU)", *names, "others (Postgres, ...)",
                 "whole machine"], rows)  # fmt: skip
    print()
    print(f"subscriber saw  {subscriber_requests} requests in all")
    clean = [
        r for _, r, p, _, _ in runs
        if r.non_2xx == 0 and r.socket_errors == 0 and p.lost == 0 and p.undelivered == 0
    ]  # fmt: skip
    if clean:
        best = max(clean, key=lambda r: r.rate)
        print(
            f"highest rate held with 0 errors, 0 lost, all delivered: {best.rate:.0f} req/s "
            f"at {best.connections} connections"
        )
    else:
        print("no run was free of errors, losses and undelivered events")
    for _, result, _, _, _ in runs:
        other = {s: n for s, n in result.summary["statuses"].items() if s != "200"}
        if other:
            print(f"statuses at c={result.connections}: {other}")
    if args.json:
        print(json.dumps([
            {"connections": r.connections, "rate": r.rate, "summary": r.summary,
             "baseline_rate": b.rate if b else None, "accepted": p.accepted, "lost": p.lost,
             "undelivered": p.undelivered, "resent": p.resent,
             "stored_unanswered": p.stored_unanswered,
             "delivered_in_window": p.delivered_in_window, "drained_after": p.drained_after,
             "lag_p50_ms": pct(p.lag_ms, 50), "lag_p99_ms": pct(p.lag_ms, 99)}
            for b, r, p, _, _ in runs
        ]))  # fmt: skip
    for _, result, p, _, _ in runs:
        for line in p.undelivered_states:
            print(f"undelivered at c={result.connections}: {line}")
    return 1 if any(p.lost or p.undelivered for _, _, p, _, _ in runs) else 0


if __name__ == "__main__":
    raise SystemExit(main())
