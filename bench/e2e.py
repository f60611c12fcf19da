"""End to end on the dev stack: signed webhooks in over HTTP, deliveries out to subscribers.

A real `hookline dev` (started here, on a fresh database; or `--attach` to the one running
from `--state-dir`) receives Standard Webhooks-signed POSTs at a steady open-loop rate, spread
over tenants of every tenant group and over `--endpoints` endpoints (each event matches exactly
one endpoint, so one event is one delivery). Subscribers are a separate process answering 200
at once (bench/sink.py). After the sending window the benchmark waits for the stack to drain,
then reads from the database:

* **receive → first attempt**: `attempts.attempted_at` of the first attempt minus
  `events.received_at` — the time an event spends in the ledger, the outbox, the fan-out, the
  queue and the deliver function before its subscriber is called (server clocks, one machine);
* **throughput**: accepted events per second while sending, and deliveries finished per second
  from the first accept to the last delivery;
* **undelivered**: requests answered 200 whose event (found by its `webhook-id`, the dedupe
  key, not by the id in the answer) has no delivered delivery when the drain ends (all
  delivered, or `--drain` seconds passed), by where each stands: its delivery's state, or
  `no event stored` (**lost**: an accepted event the ledger does not hold). A stack that
  cannot keep up leaves deliveries queued; only a lost event is a broken promise. Both must
  be 0 for a passing run. Requests answered with another request's event id are counted too
  (cross-wired, must be 0).

While it runs it samples the group queues' depth once a second (moto's SendMessage slows down
as a queue grows: a stack that keeps up keeps them near empty).

    .venv/bin/python bench/e2e.py        # 200 events/s for 60 s, 3 groups, 20 endpoints
    .venv/bin/python bench/e2e.py --rate 50 --seconds 10

This is a benchmark, not a test: it prints a table and never fails on a figure (it exits 1
only if an accepted event was undelivered, lost or cross-wired).
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import hashlib
import hmac
import json
import os
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import bench_database, machine_facts, print_table, server_facts  # noqa: E402
from bench.sink import running_sink  # noqa: E402

SOURCE_SECRET = "whsec_" + base64.b64encode(b"hookline-bench-e2e-source-key-32b").decode()
PAYLOAD_PAD = "x" * 600  # ~1 KB bodies
LOST = "no event stored"  # an accepted webhook the ledger does not hold


def standard_headers(secret: str, msg_id: str, body: bytes) -> dict[str, str]:
    """Standard Webhooks headers, as a sender computes them."""
    ts = str(int(time.time()))
    key = base64.b64decode(secret.removeprefix("whsec_"))
    digest = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": ts,
        "webhook-signature": "v1," + base64.b64encode(digest).decode(),
    }


@dataclass
class Target:
    """Where one event goes: the source path of its tenant and the type its endpoint wants."""

    path: str
    event_type: str
    group: str


@dataclass
class SendLog:
    """What the sender saw."""

    accepted: dict[str, str] = field(default_factory=dict)  # webhook-id -> event id answered
    rejected: dict[int, int] = field(default_factory=dict)  # status -> count
    transport_errors: int = 0
    other_errors: dict[str, int] = field(default_factory=dict)  # exception type -> count
    samples: list[str] = field(default_factory=list)  # the first rejections, as answered
    late_starts: int = 0  # sends that started > 100 ms after their slot (the sender lagged)
    response_ms: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def set_up(url: str, config: Any, endpoints: int, sink_url: Any) -> list[Target]:
    """A tenant per group, a Standard Webhooks source each, `endpoints` endpoints round-robin
    over the tenants, each subscribed to its own event type."""
    from hookline.db import Database
    from hookline.management import endpoint_service, source_service, tenant_service
    from hookline.management.access import Caller
    from hookline.settings import get_settings

    operator = Caller("bench", "*")
    db = Database(url, max_size=2, timeout=10)
    targets = []
    try:
        tenants = []
        for group in config.group_names:
            tenant = tenant_service.create_tenant(
                db, config, operator, name=f"bench-{group}", group=group
            )
            source = source_service.create_source(
                db, operator,
                {"tenant_id": tenant["id"], "scheme": "standard", "secret": SOURCE_SECRET},
            )  # fmt: skip
            tenants.append((tenant["id"], source["path"], group))
        for n in range(endpoints):
            tenant_id, path, group = tenants[n % len(tenants)]
            event_type = f"bench.e{n}"
            endpoint_service.create_endpoint(
                db,
                get_settings(),
                operator,
                {
                    "tenant_id": tenant_id,
                    "url": sink_url(f"/e{n}"),
                    "event_types": [event_type],
                    "max_concurrency": 20,
                },
            )
            targets.append(Target(path, event_type, group))
    finally:
        db.close()
    return targets


def send(base_url: str, targets: list[Target], rate: float, seconds: float) -> SendLog:
    """POST `rate` events per second for `seconds` (open loop: the schedule does not wait for
    answers), round-robin over the targets."""
    import httpx

    log = SendLog()
    local = threading.local()
    total = int(rate * seconds)

    def one(n: int, due: float) -> None:
        if time.monotonic() - due > 0.1:
            with log.lock:
                log.late_starts += 1
        client = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(timeout=30)
        target = targets[n % len(targets)]
        body = json.dumps({"type": target.event_type, "n": n, "pad": PAYLOAD_PAD}).encode()
        msg_id = f"msg_bench_{n}_{os.getpid()}"
        began = time.monotonic()
        try:
            answer = client.post(
                base_url + target.path,
                content=body,
                headers=standard_headers(SOURCE_SECRET, msg_id, body),
            )
            event_id = answer.json()["id"] if answer.status_code == 200 else None
        except httpx.TransportError:
            with log.lock:
                log.transport_errors += 1
            return
        except Exception as err:  # counted, never silently dropped
            with log.lock:
                name = type(err).__name__
                log.other_errors[name] = log.other_errors.get(name, 0) + 1
            return
        took = (time.monotonic() - began) * 1000
        with log.lock:
            log.response_ms.append(took)
            if event_id is not None:
                log.accepted[msg_id] = event_id
            else:
                log.rejected[answer.status_code] = log.rejected.get(answer.status_code, 0) + 1
                if len(log.samples) < 3:
                    log.samples.append(f"{answer.status_code} {answer.text[:200]} (request {n})")

    start = time.monotonic()
    with ThreadPoolExecutor(max_workers=64, thread_name_prefix="sender") as pool:
        for n in range(total):
            due = start + n / rate
            pause = due - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            pool.submit(one, n, due)
    return log


def child_pid(parent: int, marker: str) -> int:
    """The pid of `parent`'s child whose command line contains `marker` (0 if none)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and marker in cmdline:
            return int(entry.name)
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads) so far; 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine spent not idle so far (all CPUs)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    return (sum(values[:8]) - idle) / os.sysconf("SC_CLK_TCK")


class CpuMeter:
    """CPU seconds used by named processes and by the machine between start and stop."""

    def __init__(self, pids: dict[str, int]) -> None:
        self.pids = {name: pid for name, pid in pids.items() if pid}
        self.used: dict[str, float] = {}

    def __enter__(self) -> CpuMeter:
        self._start = {n: cpu_seconds(p) for n, p in self.pids.items()}
        self._machine = machine_busy_seconds()
        self._began = time.monotonic()
        return self

    def __exit__(self, *exc: object) -> None:
        self.used = {n: cpu_seconds(p) - self._start[n] for n, p in self.pids.items()}
        self.used["whole machine"] = machine_busy_seconds() - self._machine
        self.seconds = time.monotonic() - self._began


class DepthSampler:
    """Samples the group queues' depth (visible + in flight + delayed) once a second."""

    def __init__(self, state: Any) -> None:
        import boto3

        self.sqs = boto3.client(
            "sqs",
            endpoint_url=state.aws_endpoint_url,
            region_name=state.aws_region,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )
        self.queues = {g: q["url"] for g, q in state.queues.items()}
        self.max_depth: dict[str, int] = dict.fromkeys(self.queues, 0)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> DepthSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        names = [
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ]
        while not self._stop.wait(1.0):
            for group, url in self.queues.items():
                with contextlib.suppress(Exception):
                    attributes = self.sqs.get_queue_attributes(QueueUrl=url, AttributeNames=names)
                    depth = sum(int(attributes["Attributes"].get(n, 0)) for n in names)
                    self.max_depth[group] = max(self.max_depth[group], depth)


def wait_for_drain(url: str, accepted: dict[str, str], timeout: float) -> tuple[Counter[str], int]:
    """Wait until the event of every accepted webhook-id is delivered (or `timeout`); where
    those that are not stand (their delivery's state, `no delivery`, or `no event stored`),
    and how many answers named another request's event."""
    import psycopg

    deadline = time.monotonic() + timeout
    missing = set(accepted)
    with psycopg.connect(url, autocommit=True) as conn:
        while missing:  # looked at once at least, however short the drain
            rows = conn.execute(
                "SELECT e.dedupe_key FROM events e JOIN deliveries d ON d.event_id = e.id"
                " WHERE d.state = 'delivered' AND e.dedupe_key = ANY(%s)",
                (list(missing),),
            ).fetchall()
            missing -= {r[0] for r in rows}
            if not missing or time.monotonic() >= deadline:
                break
            time.sleep(0.5)
        stored: dict[str, str] = dict(
            conn.execute(
                "SELECT dedupe_key, id FROM events WHERE dedupe_key = ANY(%s)", (list(accepted),)
            ).fetchall()
        )
        states: dict[str, str | None] = dict(
            conn.execute(
                "SELECT e.dedupe_key, min(d.state) FROM events e"
                " LEFT JOIN deliveries d ON d.event_id = e.id"
                " WHERE e.dedupe_key = ANY(%s) GROUP BY e.dedupe_key",
                (list(missing),),
            ).fetchall()
        )
    crossed = sum(1 for msg_id, event_id in accepted.items() if stored.get(msg_id) != event_id)
    where = Counter(
        (states[key] or "no delivery") if key in states else LOST
        for key in missing
        if states.get(key) != "delivered"  # delivered since the last look
    )
    return where, crossed


def latencies(url: str, accepted: set[str]) -> tuple[dict[str, list[float]], float, float]:
    """Receive → first attempt (ms) per group, and the first accept and last finish times."""
    import psycopg

    query = """
        SELECT d.tenant_group,
               extract(epoch FROM min(a.attempted_at) - e.received_at) * 1000 AS ms,
               extract(epoch FROM e.received_at) AS received, extract(epoch FROM d.finished_at)
                   AS finished
        FROM deliveries d
        JOIN events e ON e.id = d.event_id
        JOIN attempt_log a ON a.delivery_id = d.id
        WHERE d.event_id = ANY(%s)
        GROUP BY d.id, d.tenant_group, e.received_at, d.finished_at
    """
    by_group: dict[str, list[float]] = {}
    first, last = float("inf"), 0.0
    with psycopg.connect(url, autocommit=True) as conn:
        for group, ms, received, finished in conn.execute(query, (list(accepted),)):
            by_group.setdefault(group, []).append(float(ms))
            first = min(first, float(received))
            if finished is not None:
                last = max(last, float(finished))
    return by_group, first, last


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (nearest rank)."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


@contextlib.contextmanager
def dev_stack(args: argparse.Namespace) -> Iterator[tuple[Any, str]]:
    """(state, where Postgres comes from) of the stack to measure."""
    from hookline_dev.local.devstate import BackgroundDevStack, find_running

    if args.attach:
        state = find_running(args.state_dir)
        if state is None:
            sys.exit(f"no hookline dev is running from {args.state_dir}")
        yield state, "the running dev stack's"
        return
    with bench_database("e2e") as (url, where), tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "DATABASE_URL": url}
        env.pop("AWS_ENDPOINT_URL", None)
        if args.aws_endpoint_url:
            env["AWS_ENDPOINT_URL"] = args.aws_endpoint_url
        stack = BackgroundDevStack(
            Path(tmp) / ".hookline",
            args=["--status-every", "5"],
            env=env,
            log_path=Path(args.stack_log) if args.stack_log else None,
        )
        print("starting hookline dev ...", file=sys.stderr, flush=True)
        state = stack.start()
        try:
            yield state, where
        finally:
            stack.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=200, help="events per second (200)")
    parser.add_argument("--seconds", type=float, default=60, help="sending window (60)")
    parser.add_argument("--endpoints", type=int, default=20, help="endpoints (20)")
    parser.add_argument("--drain", type=float, default=120, help="max seconds to drain (120)")
    parser.add_argument("--attach", action="store_true", help="use the running dev stack")
    parser.add_argument("--state-dir", type=Path, default=Path(".hookline"))
    parser.add_argument("--aws-endpoint-url", help="LocalStack instead of the stack's moto")
    parser.add_argument("--stack-log", help="keep the started stack's output in this file")
    parser.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = parser.parse_args()

    with dev_stack(args) as (state, where):
        os.environ.update(state.env())  # the services below read the process-wide settings
        from hookline.db import reset_database
        from hookline.settings import get_settings

        reset_database()
        config = get_settings().config
        with running_sink() as sink:
            targets = set_up(state.database_url, config, args.endpoints, sink.url)
            print(
                f"sending {args.rate:g} events/s for {args.seconds:g} s to {state.url}: "
                f"{len(config.group_names)} groups, {args.endpoints} endpoints",
                file=sys.stderr,
                flush=True,
            )
            pids = {
                "hookline dev": state.pid,
                "moto server": child_pid(state.pid, "hookline_dev.local.emulator"),
                "bench sender": os.getpid(),
                "subscribers": sink.process.pid,
            }
            with DepthSampler(state) as sampler, CpuMeter(pids) as cpu:
                began = time.monotonic()
                log = send(state.url, targets, args.rate, args.seconds)
                sent_for = time.monotonic() - began
                missing, crossed = wait_for_drain(state.database_url, log.accepted, args.drain)
                accepted = set(log.accepted.values())
                drained_after = time.monotonic() - began - sent_for
            subscriber_requests = sink.requests()
        by_group, first, last = latencies(state.database_url, accepted)
        facts = server_facts(state.database_url)

    everything = [ms for values in by_group.values() for ms in values]
    rows = []
    for label, values in [("all", everything), *sorted(by_group.items())]:
        rows.append(
            [label, len(values), f"{pct(values, 50):.0f}", f"{pct(values, 95):.0f}",
             f"{pct(values, 99):.0f}", f"{max(values, default=float('nan')):.0f}",
             sampler.max_depth.get(label, max(sampler.max_depth.values(), default=0))]
        )  # fmt: skip
    print()
    print(f"hookline dev end to end — {machine_facts()}")
    print(f"Postgres: {where} ({facts}); AWS: {state.emulator} at {state.aws_endpoint_url}")
    print(
        f"offered {args.rate:g} events/s for {args.seconds:g} s over {args.endpoints} endpoints "
        f"in {len(by_group)} groups; each event matches one endpoint"
    )
    print()
    print_table(
        [
            "receive → first attempt (ms)",
            "deliveries",
            "p50",
            "p95",
            "p99",
            "max",
            "max queue depth",
        ],
        rows,
    )
    offered = int(args.rate * args.seconds)
    delivered = len(log.accepted) - sum(missing.values())
    span = max(last - first, 1e-9)
    print()
    accepted_rate = len(accepted) / sent_for
    print(f"accepted        {len(accepted)} of {offered} ({accepted_rate:.0f}/s, {sent_for:.1f} s)")
    print(f"rejected        {sum(log.rejected.values())} {log.rejected or ''}")
    for sample in log.samples:
        print(f"                {sample}")
    print(f"send errors     {log.transport_errors} transport {log.other_errors or ''}")
    http50, http99 = pct(log.response_ms, 50), pct(log.response_ms, 99)
    print(f"HTTP answer     p50 {http50:.0f} ms, p99 {http99:.0f} ms")
    print(f"sender late     {log.late_starts} sends started > 100 ms after their slot")
    print(f"delivered       {delivered} ({delivered / span:.0f}/s, first accept to last delivery)")
    print(f"drained         {drained_after:.1f} s after sending stopped")
    print(f"subscriber saw  {subscriber_requests} requests")
    where = ", ".join(f"{state} {n}" for state, n in sorted(missing.items()))
    print(f"undelivered     {sum(missing.values())}{f' ({where})' if where else ''}")
    print(f"lost            {missing[LOST]} (accepted, no event stored)")
    print(f"cross-wired     {crossed} (answered with another request's event id)")
    print()
    named = sum(v for k, v in cpu.used.items() if k != "whole machine")
    others = cpu.used["whole machine"] - named
    cpu_rows = [
        [name, f"{used:.1f}", f"{100 * used / cpu.seconds:.0f}%",
         f"{1000 * used / max(1, delivered):.1f}"]
        for name, used in [*cpu.used.items(), ("others (Postgres, ...)", others)]
    ]  # fmt: skip
    print_table(
        ["CPU while sending and draining", "seconds", "of one CPU", "ms per event"], cpu_rows
    )
    if args.json:
        print(json.dumps({
            "rate": args.rate, "seconds": args.seconds, "endpoints": args.endpoints,
            "accepted": len(accepted), "delivered": delivered,
            "undelivered": sum(missing.values()), "lost": missing[LOST],
            "cross_wired": crossed,
            "p50_ms": pct(everything, 50), "p95_ms": pct(everything, 95),
            "p99_ms": pct(everything, 99), "max_ms": max(everything, default=None),
            "accepted_per_s": len(accepted) / sent_for, "delivered_per_s": delivered / span,
            "max_queue_depth": sampler.max_depth, "http_p99_ms": pct(log.response_ms, 99),
        }))  # fmt: skip
    return 1 if missing or crossed else 0


if __name__ == "__main__":
    raise SystemExit(main())
