"""The chaos run: Hookline's components as separate `hookline dev --role` processes, faults
injected everywhere, then an audit of what came out (bench/chaos.py, tests/e2e/test_chaos.py).

The harness owns a Postgres (restartable on the same data directory and port) and a moto
server, sets up tenants of every tenant group with two endpoints each on a loopback sink whose
endpoints misbehave by profile, and starts one process per role (front, fanout, reconcile, one
deliver poller per tenant group). Provider-like sender threads post signed Standard Webhooks
through the front and retry (same webhook id, fresh signature) until answered 2xx. A chaos
thread SIGKILLs random roles and restarts them, crash-restarts Postgres once, and a thief
receives and deletes about 1 % of the delivery queue messages. Then it waits until every
delivery is finished, runs a final reconcile, and checks the invariants (`Outcome.violations`).
See docs/decisions/0018-dev-roles-and-the-chaos-run.md.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import httpx
import psycopg
from psycopg.rows import dict_row

from tests.support.environment import exported
from tests.support.signers import standard_headers, verify_standard

REPO = Path(__file__).resolve().parents[2]
GROUPS = ("standard", "priority", "bulk")
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{40,}")  # where a base64 MAC could be
SOURCE_SECRET = "whsec_" + base64.b64encode(b"hookline-chaos-run-source-key-32").decode()
TYPES = ("order.created", "order.paid")
KILLABLE = ("front", "fanout", "reconcile", *(f"deliver:{g}" for g in GROUPS))
TERMINAL = ("delivered", "failed", "dead")


@dataclass(frozen=True)
class ChaosOptions:
    """Sizes, pace and faults of one run."""

    workdir: Path
    events: int = 1000
    endpoints: int = 50  # two per tenant: one takes order.*, the other order.created only
    seed: int = 1
    rate: float = 30.0  # events offered per second (all senders together)
    senders: int = 6
    kill_every: tuple[float, float] = (3.0, 8.0)  # seconds between two kills
    down_for: tuple[float, float] = (0.2, 2.0)  # how long a killed role stays down
    pg_restart_at: float = 0.5  # fraction of the events accepted when Postgres is restarted
    delete_fraction: float = 0.01  # of the queue messages expected (one per delivery)
    drain_timeout: float = 600.0  # after the last event, for every delivery to finish
    deadline_seconds: int = 600
    queued_lease_seconds: int = 45
    visibility_timeout: int = 10
    deliver_timeout_seconds: int = 2
    slow_cap: int = 2
    slow_delay: float = 0.25
    timeout_delay: float = 3.0  # above deliver_timeout_seconds
    log: Callable[[str], None] = print


def chaos_config(options: ChaosOptions) -> dict[str, Any]:
    """The HOOKLINE_CONFIG of every role process: short retries, leases and deadlines."""
    return {
        "tenant_groups": [
            # A batch waits for its slowest message (a 2 s timeout), so a group's throughput
            # is about cap x batch / 2 s: caps of 2 left priority and bulk hours behind.
            {"name": "standard", "max_concurrency": 6, "max_receive_count": 10},
            {"name": "priority", "max_concurrency": 4, "max_receive_count": 10},
            {"name": "bulk", "max_concurrency": 4, "max_receive_count": 10},
        ],
        "retry_schedule_seconds": [0, 1, 1, 2, 2, 3, 5],
        "retry_jitter": 0.2,
        "delivery_deadline_hours": options.deadline_seconds / 3600,
        "delivery_queued_lease_seconds": options.queued_lease_seconds,
        "deliver_timeout_seconds": options.deliver_timeout_seconds,
        "deliver_connect_timeout_seconds": 1,
        "deliver_function_timeout_seconds": 10,
        "reconcile_late_outbox_seconds": 5,
    }


# -- subscribers ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Profile:
    """How an endpoint misbehaves: per request, one draw decides its answer."""

    name: str
    p5xx: float = 0.0
    p_timeout: float = 0.0
    p429: float = 0.0
    gone: bool = False
    delay: float = 0.0


FLAKY = Profile("5xx 30%", p5xx=0.3)
TIMEOUTS = Profile("timeouts 10% + 5xx 10%", p5xx=0.1, p_timeout=0.1)
THROTTLED = Profile("429+Retry-After 20% + 5xx 10%", p5xx=0.1, p429=0.2)


def profile_for(index: int, options: ChaosOptions) -> Profile:
    """Endpoint 0 answers 410 (and gets disabled), endpoint 1 is slow with a cap, the rest
    cycle through flaky, timing-out and throttling."""
    if index == 0:
        return Profile("410 Gone", gone=True)
    if index == 1:
        return Profile(
            f"slow {options.slow_delay}s, cap {options.slow_cap}", delay=options.slow_delay
        )
    return (FLAKY, FLAKY, TIMEOUTS, THROTTLED)[index % 4]


@dataclass(frozen=True)
class Hit:
    """One request a subscriber received."""

    endpoint: int
    webhook_id: str
    n: int  # the event's number in the run (from the body); -1 if unreadable
    status: int  # what was answered (0: held past the client's timeout)
    signed: bool  # the signature verified with the endpoint's secret
    signature: str  # the webhook-signature header, for the secret-leak scan


class _QuietServer(ThreadingHTTPServer):
    """Connections reset by a killed deliverer are expected here, not worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class ChaosSink:
    """One loopback server for every endpoint (`/ep/<index>`), answering by profile."""

    def __init__(self, seed: int, options: ChaosOptions) -> None:
        self.seed = seed
        self.options = options
        self.profiles: dict[int, Profile] = {}
        self.secrets: dict[int, str] = {}
        self.hits: list[Hit] = []
        self.served: Counter[str] = Counter()
        self.in_flight: Counter[int] = Counter()
        self.max_in_flight: Counter[int] = Counter()
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                sink._serve(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.port}/ep/{index}"

    def _draw(self, webhook_id: str, nth: int) -> float:
        digest = hashlib.sha256(f"{self.seed}:{webhook_id}:{nth}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length", 0))
        body = request.rfile.read(length)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            index = int(request.path.rsplit("/", 1)[1])
        except ValueError:
            index = -1
        webhook_id = headers.get("webhook-id", "")
        try:
            n = int(json.loads(body)["n"])
        except (ValueError, KeyError, TypeError):
            n = -1
        profile = self.profiles.get(index, Profile("unknown"))
        if len(body) < length:
            # The sender died mid-request (a SIGKILLed deliver process): nothing to answer.
            with self._lock:
                self.served["torn"] += 1
            return
        signed = index in self.secrets and verify_standard([self.secrets[index]], headers, body)
        with self._lock:
            nth = self._seen[webhook_id]
            self._seen[webhook_id] += 1
            self.in_flight[index] += 1
            self.max_in_flight[index] = max(self.max_in_flight[index], self.in_flight[index])
        draw = self._draw(webhook_id, nth)
        extra: dict[str, str] = {}
        delay = profile.delay
        if profile.gone:
            status, kind = 410, "410"
        elif draw < profile.p_timeout:
            status, kind, delay = 0, "timeout", self.options.timeout_delay
        elif draw < profile.p_timeout + profile.p429:
            status, kind, extra = 429, "429", {"Retry-After": "1"}
        elif draw < profile.p_timeout + profile.p429 + profile.p5xx:
            status, kind = (500, 502, 503)[nth % 3], "5xx"
        else:
            status, kind = 200, "2xx"
        try:
            if delay:
                time.sleep(delay)
            answer = status or 200  # a held request's answer comes too late to count
            payload = b'{"ok": true}' if answer < 300 else b'{"error": "chaos"}'
            request.send_response(answer)
            for k, v in extra.items():
                request.send_header(k, v)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(payload)))
            request.end_headers()
            request.wfile.write(payload)
        except OSError:
            pass  # the deliverer gave up (timeout) or its process was killed
        finally:
            with self._lock:
                self.in_flight[index] -= 1
                self.served[kind] += 1
                self.hits.append(
                    Hit(index, webhook_id, n, status, signed, headers.get("webhook-signature", ""))
                )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


# -- processes -----------------------------------------------------------------------------------


@dataclass
class RoleProcess:
    """One `hookline dev --role ROLE` child, which the chaos thread kills and restarts."""

    role: str
    workdir: Path
    env: dict[str, str]
    port: int = 0  # the front's
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0

    @property
    def state_dir(self) -> Path:
        return self.workdir / f"state-{self.role.replace(':', '-')}"

    def start(self, timeout: float = 60) -> None:
        from hookline_dev.local.devstate import healthy, read_state

        self.starts += 1
        command = [
            sys.executable, "-m", "hookline_dev.cli", "dev", "--role", self.role,
            "--port", str(self.port), "--state-dir", str(self.state_dir),
            "--log-file", str(self.workdir / f"{self.state_dir.name}.log"),
            "--status", "off", "--fanout-every", "0.5", "--reconcile-every", "3",
            "--visibility-timeout", str(self.env["CHAOS_VISIBILITY_TIMEOUT"]),
            "--parent-pid", str(os.getpid()),
        ]  # fmt: skip
        out = open(self.workdir / f"{self.state_dir.name}.out", "ab")  # noqa: SIM115
        with out:
            self.process = subprocess.Popen(
                command, cwd=self.workdir, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = (self.workdir / f"{self.state_dir.name}.out").read_text()[-3000:]
                raise ChaosError(
                    f"{self.role} exited at start ({self.process.returncode}):\n{tail}"
                )
            state = read_state(self.state_dir)
            up = state is not None and state.pid == self.process.pid
            if up and state and (self.role != "front" or healthy(state.url, timeout=1)):
                return
            time.sleep(0.1)
        raise ChaosError(f"{self.role} did not come up within {timeout}s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self.process = None
        self.kills += 1

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


class ChaosError(RuntimeError):
    """The run could not be carried out (a process would not start, a timeout)."""


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Tenant:
    id: str
    group: str
    path: str  # the source's /in/... path
    endpoints: list[tuple[int, str, tuple[str, ...]]]  # (index, endpoint id, filters)


@dataclass
class Sent:
    """What the providers saw."""

    accepted: dict[int, str] = field(default_factory=dict)  # n -> event id answered
    tenant_of: dict[int, int] = field(default_factory=dict)  # n -> tenant index
    type_of: dict[int, str] = field(default_factory=dict)
    retries: Counter[str] = field(default_factory=Counter)  # why a send was repeated
    crosswired: list[int] = field(default_factory=list)  # one msg id, two event ids
    rejected: list[tuple[int, int]] = field(default_factory=list)  # (n, status) 4xx
    signatures: set[str] = field(default_factory=set)  # webhook-signature values sent
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class Outcome:
    """What came out, and every invariant that failed."""

    rows: list[tuple[str, object]] = field(default_factory=list)
    violations: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # the figures, for assertions

    def table(self) -> str:
        width = max(len(k) for k, _ in self.rows) if self.rows else 10
        lines = [f"  {k:<{width}}  {v}" for k, v in self.rows]
        if self.violations:
            lines.append("VIOLATIONS:")
            lines += [f"  - {v}" for v in self.violations]
        else:
            lines.append("  no violations")
        return "\n".join(lines)


def secret_leaks(
    workdir: Path, secrets: list[str], signature_headers: list[str]
) -> tuple[set[str], int, int, int]:
    """Every secret (whole, or its key without `whsec_`) and every MAC of the signature
    headers (`v1,<base64> v1,<base64>`) that appears in a `*.log` file under `workdir`:
    (found, files, characters scanned, how many were looked for). Secrets are searched as
    substrings; the many MACs as every window of their length inside each run of base64
    characters, so a MAC is found whatever surrounds it."""
    needles = {x for s in secrets for x in (s, s.removeprefix("whsec_"))}
    macs = {e.partition(",")[2] for h in signature_headers for e in h.split()} - {""}
    lengths = {len(m) for m in macs}
    found: set[str] = set()
    files = size = 0
    for path in sorted(workdir.rglob("*.log")):
        text = path.read_text(errors="replace")
        files, size = files + 1, size + len(text)
        found |= {x for x in needles if x in text}
        for run in _BASE64_RUN.findall(text):
            for n in lengths:
                found |= {run[i : i + n] for i in range(len(run) - n + 1)} & macs
    return found, files, size, len(needles) + len(macs)


class ChaosRun:
    """Set up, run with faults, drain, audit. `run()` returns the `Outcome`."""

    def __init__(self, options: ChaosOptions) -> None:
        self.o = options
        self.rng = random.Random(options.seed)
        self.workdir = Path(options.workdir).absolute()
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.sink = ChaosSink(options.seed, options)
        self.sent = Sent()
        self.tenants: list[Tenant] = []
        self.roles: dict[str, RoleProcess] = {}
        self.pg: Any = None
        self.pg_dir: Path | None = None
        self.moto: Any = None
        self.database_url = ""
        self.pg_restarts = 0
        self.pg_down_seconds = 0.0
        self.deleted: list[str] = []  # message bodies the thief took
        self.role_lock = threading.Lock()
        self.stop_chaos = threading.Event()
        self.chaos_errors: list[str] = []
        self.started = 0.0

    # setup -----------------------------------------------------------------------------------

    def log(self, text: str) -> None:
        self.o.log(f"[chaos {time.monotonic() - self.started:6.1f}s] {text}")

    @contextlib.contextmanager
    def _environment(self) -> Iterator[dict[str, str]]:
        """This process takes the stack's environment meanwhile (admin services read it)."""
        config = self.workdir / "hookline.json"
        config.write_text(json.dumps(chaos_config(self.o)))
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("HOOKLINE_", "AWS_", "POWERTOOLS_")) and k != "DATABASE_URL"
        }
        env.update(
            DATABASE_URL=self.database_url,
            AWS_ENDPOINT_URL=self.moto.endpoint_url,
            AWS_REGION="us-east-1",
            AWS_DEFAULT_REGION="us-east-1",
            AWS_ACCESS_KEY_ID="testing",
            AWS_SECRET_ACCESS_KEY="testing",
            HOOKLINE_CONFIG=str(config),
            HOOKLINE_LOCAL_KEY_FILE=str(self.workdir / "master.key"),
            HOOKLINE_ALLOW_PRIVATE_TARGETS="1",
            HOOKLINE_ALLOW_HTTP_TARGETS="1",
            HOOKLINE_DB_POOL_SIZE="16",
            POWERTOOLS_LOG_LEVEL="WARNING",
            POWERTOOLS_METRICS_DISABLED="true",
            POWERTOOLS_TRACE_DISABLED="true",
            POWERTOOLS_SERVICE_NAME="hookline-chaos",
            POWERTOOLS_METRICS_NAMESPACE="Hookline",
            PYTHONPATH=os.pathsep.join(
                [str(REPO / "layers" / "core"), str(REPO / "devtools"), str(REPO)]
            ),
            CHAOS_VISIBILITY_TIMEOUT=str(self.o.visibility_timeout),
        )
        names = [k for k in env if k.startswith(("HOOKLINE_", "AWS_", "POWERTOOLS_"))]
        names.append("DATABASE_URL")
        with exported({k: env[k] for k in names}):
            yield env

    def _start_backends(self) -> None:
        from hookline_dev.local.emulator import MotoProcess
        from hookline_dev.localpg import LocalPostgres

        # Under root the server runs as its own user, who must reach its data directory:
        # a folder of its own (pytest's tmp_path is private to root).
        self.pg_dir = Path(tempfile.mkdtemp(prefix="hookline-chaos-pg-"))
        self.pg_dir.chmod(0o755)
        self.pg = LocalPostgres(self.pg_dir / "data", durable=True)
        admin_url = self.pg.start()
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute("DROP DATABASE IF EXISTS hookline_chaos")
            conn.execute("CREATE DATABASE hookline_chaos")
        self.database_url = psycopg.conninfo.make_conninfo(admin_url, dbname="hookline_chaos")
        from hookline.migrate import migrate

        migrate(self.database_url)
        self.moto = MotoProcess(log_path=self.workdir / "moto.log")
        self.moto.start()

    def _set_up_tenants(self) -> None:
        from hookline.db import Database
        from hookline.settings import get_settings
        from hookline_dev.local.queues import ensure_queues
        from tests.support import operator

        settings = get_settings()
        ensure_queues(
            self._sqs(), settings.config, visibility_timeout_seconds=self.o.visibility_timeout
        )
        db = Database(self.database_url, max_size=2, timeout=10)
        try:
            pairs = self.o.endpoints // 2
            for t in range(pairs):
                group = GROUPS[t % len(GROUPS)]
                tenant = operator.add_tenant(db, settings.config, name=f"chaos-{t}", group=group)
                path = operator.add_source(
                    db, tenant_id=tenant["id"], scheme="standard", secrets=[SOURCE_SECRET]
                )["path"]
                endpoints: list[tuple[int, str, tuple[str, ...]]] = []
                pair: tuple[tuple[int, tuple[str, ...]], ...] = (
                    (2 * t, ("order.*",)),
                    (2 * t + 1, ("order.created",)),
                )
                for k, filters in pair:
                    self.sink.profiles[k] = profile_for(k, self.o)
                    cap = self.o.slow_cap if k == 1 else 5
                    made = operator.add_endpoint(
                        db, settings, tenant_id=tenant["id"], url=self.sink.url(k),
                        event_types=filters, max_concurrency=cap,
                    )  # fmt: skip
                    self.sink.secrets[k] = made["secret"]
                    endpoints.append((k, made["id"], filters))
                self.tenants.append(Tenant(tenant["id"], group, path, endpoints))
        finally:
            db.close()

    def _sqs(self) -> Any:
        return boto3.client(
            "sqs",
            endpoint_url=self.moto.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def _start_roles(self, env: dict[str, str]) -> None:
        from hookline_dev.localpg import free_port

        for role in KILLABLE:
            process = RoleProcess(
                role, self.workdir, env, port=free_port() if role == "front" else 0
            )
            self.roles[role] = process
        # Started one by one: six interpreters importing at once starve a 2-core machine.
        for process in self.roles.values():
            process.start()

    # sending ---------------------------------------------------------------------------------

    def _sender(self, numbers: Iterator[int], front: str) -> None:
        with httpx.Client(timeout=httpx.Timeout(10.0, connect=2.0)) as http:
            for n in numbers:
                self._send_one(http, front, n)

    def _send_one(self, http: httpx.Client, front: str, n: int) -> None:
        tenant = self.tenants[self.sent.tenant_of[n]]
        body = json.dumps({"type": self.sent.type_of[n], "chaos": self.o.seed, "n": n}).encode()
        msg_id = f"msg_chaos_{self.o.seed}_{n}"
        first_id: str | None = None
        for attempt in range(10_000):
            headers = standard_headers(SOURCE_SECRET, body, msg_id)
            with self.sent.lock:
                self.sent.signatures.add(headers["webhook-signature"])
            try:
                answer = http.post(front + tenant.path, content=body, headers=headers)
            except httpx.TransportError as err:
                self.sent.retries[type(err).__name__] += 1
                time.sleep(min(0.1 * (attempt + 1), 1.0))
                continue
            if answer.status_code == 200:
                event_id = answer.json()["id"]
                with self.sent.lock:
                    if first_id is not None and first_id != event_id:
                        self.sent.crosswired.append(n)
                    self.sent.accepted[n] = event_id
                return
            if answer.status_code >= 500 or answer.status_code == 429:
                self.sent.retries[f"HTTP {answer.status_code}"] += 1
                time.sleep(min(0.1 * (attempt + 1), 1.0))
                continue
            with self.sent.lock:
                self.sent.rejected.append((n, answer.status_code))
            return

    def _send_all(self) -> float:
        """Offer every event at the configured rate; the seconds it took."""
        for n in range(self.o.events):
            self.sent.tenant_of[n] = self.rng.randrange(len(self.tenants))
            self.sent.type_of[n] = self.rng.choice(TYPES)
        front = f"http://127.0.0.1:{self.roles['front'].port}"
        began = time.monotonic()
        lock = threading.Lock()
        counter = iter(range(self.o.events))

        def paced() -> Iterator[int]:
            while True:
                with lock:
                    n = next(counter, None)
                if n is None:
                    return
                due = began + n / self.o.rate
                pause = due - time.monotonic()
                if pause > 0:
                    time.sleep(pause)
                yield n

        threads = [
            threading.Thread(target=self._sender, args=(paced(), front), daemon=True)
            for _ in range(self.o.senders)
        ]
        for thread in threads:
            thread.start()
        last_report = time.monotonic()
        while any(t.is_alive() for t in threads):
            time.sleep(0.5)
            if time.monotonic() - last_report > 10:
                last_report = time.monotonic()
                self.log(f"accepted {len(self.sent.accepted)}/{self.o.events}")
        return time.monotonic() - began

    # chaos -----------------------------------------------------------------------------------

    def _chaos(self) -> None:
        """Kill and restart random roles; restart Postgres once."""
        rng = random.Random(self.o.seed + 1)
        order: list[str] = []
        try:
            while not self.stop_chaos.wait(rng.uniform(*self.o.kill_every)):
                if (
                    self.pg_restarts == 0
                    and len(self.sent.accepted) >= self.o.pg_restart_at * self.o.events
                ):
                    self._restart_postgres(rng)
                    continue
                if not order:  # every role once per round, in a seeded order
                    order = rng.sample(KILLABLE, len(KILLABLE))
                role = order.pop()
                with self.role_lock:
                    process = self.roles[role]
                    process.kill()
                    self.log(f"SIGKILL {role}")
                    time.sleep(rng.uniform(*self.o.down_for))
                    process.start()
        except Exception as err:  # reported as a violation: the run did not do what it says
            self.chaos_errors.append(f"chaos thread: {type(err).__name__}: {err}")

    def _restart_postgres(self, rng: random.Random) -> None:
        self.log("Postgres: immediate stop (a crash), then start on the same data and port")
        began = time.monotonic()
        self.pg.stop("immediate")
        time.sleep(rng.uniform(1.0, 3.0))
        self.pg.start()
        self.pg_down_seconds = time.monotonic() - began
        self.pg_restarts += 1

    def _thief(self, expected_messages: float) -> None:
        """Receive and delete queue messages, unprocessed, at about `delete_fraction` of the
        messages the run sends (one per delivery, at least)."""
        rng = random.Random(self.o.seed + 2)
        sqs = self._sqs()
        urls = {g: sqs.get_queue_url(QueueName=f"hookline-deliver-{g}")["QueueUrl"] for g in GROUPS}
        target = round(self.o.delete_fraction * expected_messages)
        while not self.stop_chaos.wait(0.05) and len(self.deleted) < target:
            done = len(self.sent.accepted) / max(1, self.o.events)
            if len(self.deleted) >= target * done:
                continue
            group = rng.choice(GROUPS)
            try:
                answer = sqs.receive_message(QueueUrl=urls[group], MaxNumberOfMessages=1)
                for message in answer.get("Messages", []):
                    sqs.delete_message(QueueUrl=urls[group], ReceiptHandle=message["ReceiptHandle"])
                    self.deleted.append(message["Body"])
            except Exception as err:
                self.chaos_errors.append(f"thief: {type(err).__name__}: {err}")
                return

    # draining and auditing -------------------------------------------------------------------

    def _query(self, statement: str, *params: Any) -> list[dict[str, Any]]:
        with psycopg.connect(self.database_url, row_factory=dict_row, connect_timeout=5) as conn:
            return [dict(r) for r in conn.execute(statement, params).fetchall()]

    def _drain(self, timeout: float) -> bool:
        """Wait until the ledger has every accepted event fanned out and every delivery is
        finished; False on timeout."""
        deadline = time.monotonic() + timeout
        last = time.monotonic()
        while time.monotonic() < deadline:
            row = self._query(
                "SELECT (SELECT count(*) FROM outbox WHERE fanned_out_at IS NULL) AS unfanned,"
                " (SELECT count(*) FROM deliveries WHERE state NOT IN"
                "  ('delivered', 'failed', 'dead')) AS open,"
                " (SELECT count(*) FROM deliveries) AS total"
            )[0]
            if row["unfanned"] == 0 and row["open"] == 0 and row["total"] > 0:
                return True
            if time.monotonic() - last > 10:
                last = time.monotonic()
                self.log(
                    f"draining: {row['open']} open of {row['total']}, {row['unfanned']} unfanned"
                )
            time.sleep(0.5)
        return False

    def run(self) -> Outcome:
        self.started = time.monotonic()
        self._start_backends()
        try:
            with self._environment() as env:
                self._set_up_tenants()
                self._start_roles(env)
                self.log(f"{len(self.roles)} role processes up; sending {self.o.events} events")
                return self._run_with_chaos()
        finally:
            for process in self.roles.values():
                with contextlib.suppress(Exception):
                    process.stop()
            self.sink.stop()
            if self.moto is not None:
                self.moto.stop()
            if self.pg is not None:
                self.pg.stop("fast")
                if self.pg_dir is not None:
                    shutil.rmtree(self.pg_dir, ignore_errors=True)

    def _run_with_chaos(self) -> Outcome:
        chaos = threading.Thread(target=self._chaos, name="chaos", daemon=True)
        thief = threading.Thread(
            target=self._thief, args=(self.o.events * 1.5,), name="thief", daemon=True
        )
        chaos.start()
        thief.start()
        send_seconds = self._send_all()
        self.log(f"sent: {len(self.sent.accepted)} accepted in {send_seconds:.1f}s")
        # The chaos goes on into the drain until every role was killed at least once.
        until = time.monotonic() + 120
        while time.monotonic() < until and chaos.is_alive():
            if all(p.kills for p in self.roles.values()):
                break
            time.sleep(0.2)
        self.stop_chaos.set()
        chaos.join(120)
        thief.join(30)
        if self.pg_restarts == 0:  # a short run can end before the chaos thread got to it
            self._restart_postgres(random.Random(self.o.seed + 3))
        # Whatever was down when the chaos stopped is started again.
        with self.role_lock:
            for process in self.roles.values():
                if process.process is None or process.process.poll() is not None:
                    process.start()
        drained = self._drain(self.o.drain_timeout)
        drain_seconds = time.monotonic() - self.started - send_seconds
        # Stop the scheduled reconcile so the final one is the only one looking.
        self.roles["reconcile"].stop()
        final = self._final_reconcile()
        return self._audit(drained, send_seconds, drain_seconds, final)

    def _secret_leaks(self, hits: list[Hit]) -> tuple[set[str], int, int, int]:
        with self.sent.lock:
            headers = [*self.sent.signatures, *(h.signature for h in hits)]
        secrets = [SOURCE_SECRET, *self.sink.secrets.values()]
        return secret_leaks(self.workdir, secrets, headers)

    def _final_reconcile(self) -> dict[str, Any]:
        from hookline.db import Database
        from hookline.runtime import build_reconciler
        from hookline.settings import get_settings

        db = Database(self.database_url, max_size=2, timeout=10)
        try:
            return build_reconciler(get_settings(), db).run(trigger="chaos-final").as_dict()
        finally:
            db.close()

    def _audit(
        self, drained: bool, send_seconds: float, drain_seconds: float, final: dict[str, Any]
    ) -> Outcome:
        out = Outcome()
        v = out.violations
        v += self.chaos_errors
        if not drained:
            v.append(f"not every delivery finished within {self.o.drain_timeout:.0f}s")
        if self.sent.rejected:
            v.append(
                f"{len(self.sent.rejected)} sends refused with a 4xx, e.g. {self.sent.rejected[:3]}"
            )
        if self.sent.crosswired:
            v.append(f"{len(self.sent.crosswired)} retried sends answered with another event id")
        accepted = self.sent.accepted
        events = self._query(
            "SELECT id, dedupe_key, type FROM events WHERE dedupe_key LIKE %s",
            f"msg_chaos_{self.o.seed}_%",
        )
        by_key: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for e in events:
            by_key[e["dedupe_key"]].append(e)
        lost = [
            n
            for n, eid in accepted.items()
            if eid not in {e["id"] for e in by_key[f"msg_chaos_{self.o.seed}_{n}"]}
        ]
        twice = [k for k, rows in by_key.items() if len(rows) > 1]
        if lost:
            v.append(f"{len(lost)} accepted events not in the ledger, e.g. n={lost[:5]}")
        if twice:
            v.append(f"{len(twice)} webhook ids stored as more than one event")
        if len(accepted) != self.o.events:
            v.append(f"only {len(accepted)} of {self.o.events} events were accepted")
        n_of_event = {e["id"]: int(e["dedupe_key"].rsplit("_", 1)[1]) for e in events}

        deliveries = self._query(
            "SELECT d.id, d.event_id, d.endpoint_id, d.state, d.last_error, d.attempt_count"
            " FROM deliveries d JOIN events e ON e.id = d.event_id WHERE e.dedupe_key LIKE %s",
            f"msg_chaos_{self.o.seed}_%",
        )
        index_of = {eid: k for t in self.tenants for k, eid, _ in t.endpoints}
        pairs = Counter((d["event_id"], d["endpoint_id"]) for d in deliveries)
        created_twice = sum(1 for c in pairs.values() if c > 1)
        if created_twice:
            v.append(f"{created_twice} (event, endpoint) pairs with more than one delivery")
        # Expected: every matching endpoint of the event's tenant; the 410 endpoint only until
        # it was disabled (at most one then).
        have: dict[int, set[int]] = defaultdict(set)
        delivery_of: dict[tuple[int, int], str] = {}
        for d in deliveries:
            n = n_of_event[d["event_id"]]
            k = index_of[d["endpoint_id"]]
            have[n].add(k)
            delivery_of[(n, k)] = d["id"]
        missing = extra = 0
        for n in accepted:
            tenant = self.tenants[self.sent.tenant_of[n]]
            kind = self.sent.type_of[n]
            expected = {k for k, _, f in tenant.endpoints if kind in f or "order.*" in f}
            required = expected - {0}
            missing += len(required - have[n])
            extra += len(have[n] - expected)
        if missing:
            v.append(f"{missing} deliveries missing (event matched the endpoint)")
        if extra:
            v.append(f"{extra} deliveries to endpoints the event did not match")
        states = Counter(d["state"] for d in deliveries)
        unfinished = sum(n for s, n in states.items() if s not in TERMINAL)
        if unfinished:
            v.append(f"{unfinished} deliveries not finished: {dict(states)}")
        no_reason = [
            d["id"] for d in deliveries if d["state"] in ("failed", "dead") and not d["last_error"]
        ]
        if no_reason:
            v.append(f"{len(no_reason)} failed/dead deliveries without a reason")

        # The subscribers' side.
        hits = list(self.sink.hits)
        ok_ids = {h.webhook_id for h in hits if 200 <= h.status < 300}
        not_ok = [
            d["id"] for d in deliveries if d["state"] == "delivered" and d["id"] not in ok_ids
        ]
        if not_ok:
            v.append(f"{len(not_ok)} delivered deliveries never answered 2xx at their sink")
        unsigned = sum(1 for h in hits if not h.signed)
        if unsigned:
            v.append(f"{unsigned} requests failed signature verification at the sink")
        wrong_id = sum(1 for h in hits if delivery_of.get((h.n, h.endpoint)) != h.webhook_id)
        if wrong_id:
            v.append(f"{wrong_id} requests whose webhook-id is not their delivery's id")
        ids_per_delivery: dict[tuple[int, int], set[str]] = defaultdict(set)
        for h in hits:
            ids_per_delivery[(h.n, h.endpoint)].add(h.webhook_id)
        several = sum(1 for ids in ids_per_delivery.values() if len(ids) > 1)
        if several:
            v.append(f"{several} (event, endpoint) pairs received under more than one webhook-id")
        ok_counts = Counter(h.webhook_id for h in hits if 200 <= h.status < 300)
        duplicates = sum(c - 1 for c in ok_counts.values() if c > 1)
        cap_seen = self.sink.max_in_flight[1]
        if cap_seen > self.o.slow_cap:
            v.append(f"the slow endpoint saw {cap_seen} requests at once (cap {self.o.slow_cap})")

        leaks, scanned, scanned_bytes, needles = self._secret_leaks(hits)
        if leaks:
            v.append(f"{len(leaks)} secrets or signatures appear in the logs: {sorted(leaks)[:3]}")

        repaired = {k: n for k, n in final["repairs"].items() if n}
        if repaired or final["unreconciled"]:
            v.append(
                f"the final reconcile repaired {repaired or 'nothing'} and left "
                f"{final['unreconciled']} unreconciled: {final['findings']}"
            )
        attempts = self._query(
            "SELECT count(*) AS n FROM attempts a JOIN deliveries d ON d.id = a.delivery_id"
            " JOIN events e ON e.id = d.event_id WHERE e.dedupe_key LIKE %s",
            f"msg_chaos_{self.o.seed}_%",
        )[0]["n"]
        runs = self._query(
            "SELECT key, sum(value::bigint) AS n FROM reconcile_runs, jsonb_each_text(repairs)"
            " WHERE trigger <> 'chaos-final' GROUP BY key HAVING sum(value::bigint) > 0"
        )
        repairs_during = {r["key"]: int(r["n"]) for r in runs}
        kills = ", ".join(f"{r} {p.kills}" for r, p in self.roles.items())
        pg = f"{self.pg_restarts} (immediate stop, down {self.pg_down_seconds:.1f}s)"
        reconciled = f"repaired {repaired or 'nothing'}, unreconciled {final['unreconciled']}"
        total = time.monotonic() - self.started
        timing = f"{send_seconds:.0f}s / {drain_seconds:.0f}s / {total:.0f}s"
        served = self.sink.served
        out.counts = {
            **{f"kills {r}": p.kills for r, p in self.roles.items()},
            "pg_restarts": self.pg_restarts,
            "deleted": len(self.deleted),
            **{f"served {k}": n for k, n in served.items()},
            "sender_retries": sum(self.sent.retries.values()),
            "accepted": len(accepted),
            "lost": len(lost),
            "deliveries": len(deliveries),
            "created_twice": created_twice,
            **{f"state {k}": n for k, n in states.items()},
            "attempts": attempts,
            "duplicates_at_sink": duplicates,
            "max_in_flight_slow": cap_seen,
            "secret_leaks": len(leaks),
            "log_files_scanned": scanned,
            "secrets_looked_for": needles,
        }
        rows = out.rows
        rows += [
            ("INJECTED", ""),
            ("SIGKILLs per role", f"{sum(p.kills for p in self.roles.values())} ({kills})"),
            ("Postgres restarts", pg),
            ("queue messages deleted", len(self.deleted)),
            ("sink answers 5xx", served["5xx"]),
            ("sink timeouts (held)", served["timeout"]),
            ("sink 429 + Retry-After", served["429"]),
            ("sink 410", served["410"]),
            ("requests torn by a kill", served["torn"]),
            ("sender retries", f"{sum(self.sent.retries.values())} {dict(self.sent.retries)}"),
            ("OUTCOME", ""),
            ("events offered / accepted", f"{self.o.events} / {len(accepted)}"),
            ("events in the ledger", f"{len(by_key)} (stored twice: {len(twice)})"),
            ("events lost", len(lost)),
            ("deliveries", f"{len(deliveries)} {dict(sorted(states.items()))}"),
            ("deliveries created twice", created_twice),
            ("deliveries missing / unexpected", f"{missing} / {extra}"),
            ("attempts (retries)", f"{attempts} ({attempts - len(deliveries)})"),
            ("requests at sinks", len(hits)),
            ("duplicate 2xx at sinks", f"{duplicates} (at-least-once; allowed)"),
            ("webhook-id mismatches", wrong_id + several),
            ("slow endpoint max in flight", f"{cap_seen} (cap {self.o.slow_cap})"),
            ("reconcile repairs during the run", repairs_during),
            ("secrets/signatures in logs", f"{len(leaks)} of {needles} looked for, in {scanned}"
             f" log files ({scanned_bytes / 1e6:.1f} MB)"),
            ("final reconcile", reconciled),
            ("time send / drain / total", timing),
        ]  # fmt: skip
        return out
