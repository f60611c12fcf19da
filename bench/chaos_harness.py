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

The subscribers are bench/chaos_sink.py, the role processes bench/chaos_roles.py, the audit
bench/chaos_audit.py.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import random
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import httpx
import psycopg
from psycopg.rows import dict_row

from bench.chaos_audit import Outcome, audit, secret_leaks
from bench.chaos_roles import RoleProcess
from bench.chaos_sink import ChaosSink, Hit, profile_for
from tests.support.environment import exported
from tests.support.signers import standard_headers

REPO = Path(__file__).resolve().parents[1]
GROUPS = ("standard", "priority", "bulk")
SOURCE_SECRET = "whsec_" + base64.b64encode(b"hookline-chaos-run-source-key-32").decode()
TYPES = ("order.created", "order.paid")
KILLABLE = ("front", "fanout", "reconcile", *(f"deliver:{g}" for g in GROUPS))


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
        from hookline.config import HooklineConfig
        from hookline.migrate import migrate

        # as a deploy does: the receipt then leaves this run's lease out (decision 0111), and
        # lost messages are found through the leases their ids imply
        migrate(self.database_url, HooklineConfig.from_dict(chaos_config(self.o)))
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
            # The even endpoints' cap is the in-flight ceiling: their first messages go
            # without a claim (decision 0108); the odd ones' 5 (endpoint 1's the slow cap).
            ceiling = sum(g.max_concurrency * g.batch_size for g in settings.config.tenant_groups)
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
                    cap = self.o.slow_cap if k == 1 else 5 if k % 2 else ceiling
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
        return audit(self, drained, send_seconds, drain_seconds, final)

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
