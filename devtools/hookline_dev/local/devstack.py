"""`hookline dev`: the whole of Hookline on one machine, running the Lambda handlers as-is.

No emulator runs Lambda code without Docker, so this process plays AWS's part around the
handlers, and the handlers are the very functions deployed to Lambda:

| on AWS                                | here                                           |
|---------------------------------------|------------------------------------------------|
| RDS Postgres                          | DATABASE_URL, else embedded (.hookline/pg)     |
| SQS queues + DLQs, redrive            | moto server child process, or AWS_ENDPOINT_URL |
| S3 ledger archive bucket              | the same emulator (local/archive_bucket.py)    |
| API Gateway REST -> receiver λ        | `LocalFront` on 127.0.0.1:PORT -> the handler  |
| EventBridge rule -> fanout λ, nudges  | `ScheduledRunner` thread, woken by the nudge:  |
|                                       | in-process, or NOTIFY from other processes     |
| EventBridge rule -> reconcile λ       | `ScheduledRunner` thread (once it exists)      |
| SQS event source mapping -> deliver λ | one `SqsEventSource` per tenant group, capped  |
| CloudWatch Logs (Powertools, EMF)     | the same JSON lines in .hookline/dev.log       |

On start the stack takes a per-database advisory lock (one dev stack per database), applies
the migrations, creates the queues, and puts every delivery a previous run left `queued` or
`delivering` back to `pending`: that run is gone (the lock proves it) and so is its emulator's
state. On AWS SQS does not forget, and the reconciler's lease checks cover lost messages; here
the runner repairs at once what it knows it lost. See docs/decisions/0009-local-dev-stack.md.

With `roles` (`hookline dev --role front --role deliver:standard ...`) a process runs only
some of the components, against a shared Postgres and SQS (DATABASE_URL and AWS_ENDPOINT_URL
are then required), so several processes make one stack and each can be killed on its own
(bench/chaos.py). Such a process takes no lock and repairs nothing at start: its peers are
alive, and the reconciler's lease checks bring back what a dead one left, as on AWS. See
docs/decisions/0018-dev-roles-and-the-chaos-run.md.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import psycopg
from psycopg.rows import dict_row

from hookline.repositories import devstack as repo
from hookline_dev.local.apigw import LocalContext
from hookline_dev.local.archive_bucket import ensure_archive_bucket
from hookline_dev.local.banner import banner, redact, role_banner
from hookline_dev.local.devenv import configure_environment, ensure_database, sqs_client
from hookline_dev.local.devlogs import LogRoute
from hookline_dev.local.devoptions import DevOptions, DevStackError
from hookline_dev.local.devstate import DevState, find_running, remove_state, write_state
from hookline_dev.local.emulator import MotoProcess, wait_until_answering
from hookline_dev.local.front import LocalFront
from hookline_dev.local.handlers import context_factory, load_handlers
from hookline_dev.local.listener import FanoutListener
from hookline_dev.local.notify_sender import ensure_notify_sender
from hookline_dev.local.poller import SqsEventSource
from hookline_dev.local.powertools import isolate_resolver_state, serialize_metrics
from hookline_dev.local.queues import GroupQueues, ensure_queues
from hookline_dev.local.schedules import ScheduledRunner, scheduled_event
from hookline_dev.local.status import Snapshot, StatusWriter
from hookline_dev.localpg import LocalPostgres

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

    from hookline.config import HooklineConfig

logger = logging.getLogger("hookline.local")

EMBEDDED_DB = "hookline"
LOCK_WAIT_SECONDS = 5.0
# Settings that other processes need to share with the stack (exported by --print-env): the
# operator key is what the CLI sends to the front's /v1 (decision 0030).
SHARED_ENV = (
    "HOOKLINE_LOCAL_KEY_FILE", "HOOKLINE_KMS_KEY_ID", "HOOKLINE_SQS_FAIR_QUEUES",
    "HOOKLINE_API_KEY", "HOOKLINE_ARCHIVE_BUCKET", "HOOKLINE_NOTIFY_FROM",
)  # fmt: skip


@dataclass
class _Parts:
    """What `start()` brought up, torn down in reverse by `stop()`."""

    postgres: LocalPostgres | None = None
    moto: MotoProcess | None = None
    lock_conn: psycopg.Connection[Any] | None = None
    front: LocalFront | None = None
    fanout: ScheduledRunner | None = None
    fanout_listener: FanoutListener | None = None  # nudges from other processes
    reconcile: ScheduledRunner | None = None
    sources: dict[str, SqsEventSource] = field(default_factory=dict)
    logs: LogRoute = field(default_factory=LogRoute)


class DevStack:
    """The local stack: `start()`, then `run(stop)` until `stop` is set, then `stop()`."""

    def __init__(
        self,
        options: DevOptions,
        *,
        environ: MutableMapping[str, str] | None = None,
        out: TextIO | None = None,
    ) -> None:
        """`environ` is the process environment the handlers' settings are read from (the
        handlers read `os.environ`, so that is the default); `out` gets the banner and status."""
        self.options = options
        self.environ = os.environ if environ is None else environ
        self.out = out or sys.stdout
        self.state_dir = Path(options.state_dir).absolute()
        self.parts = _Parts()
        self.state: DevState | None = None
        self.config: HooklineConfig | None = None
        self.queues: dict[str, GroupQueues] = {}
        self.requeued = 0
        self.isolated = False  # Powertools resolver state made per thread
        self._sqs: SQSClient | None = None
        self._status: StatusWriter | None = None
        self._stopped = False

    # -- start ---------------------------------------------------------------------------------

    def start(self) -> DevState:
        """Bring everything up; on any failure, tear down what was started and raise."""
        try:
            return self._start()
        except BaseException:
            self.stop()
            raise

    def _start(self) -> DevState:
        self._prepare_state_dir()
        running = find_running(self.state_dir)
        if running is not None:
            raise DevStackError(
                f"hookline dev is already running from {self.state_dir} "
                f"(pid {running.pid}, {running.url}); stop it first"
            )
        if self.options.roles:
            missing = [v for v in ("DATABASE_URL", "AWS_ENDPOINT_URL") if not self.environ.get(v)]
            if missing:
                raise DevStackError(
                    f"--role needs a shared database and SQS: set {' and '.join(missing)}"
                )
        log_file = self.parts.logs.start(self.options.log_file, self.state_dir)
        database_url, pg_kind = self._database()
        aws_endpoint, emulator = self._aws()
        configure_environment(self.environ, self.state_dir, database_url, aws_endpoint, emulator)
        ensure_archive_bucket(self.environ, aws_endpoint)  # retention archives here too
        ensure_notify_sender(self.environ, aws_endpoint)  # operational e-mail (decision 0068)
        # Many invocations share this process: make Powertools' per-process state per thread.
        serialize_metrics()
        self.isolated = isolate_resolver_state()

        from hookline.db import reset_database
        from hookline.runtime import reset_runtime
        from hookline.settings import get_settings

        reset_database()  # forget settings and pools built before the environment was set
        reset_runtime()
        settings = get_settings()
        config = self.config = settings.config
        self._sqs = sqs_client(aws_endpoint, settings.aws_region, config)
        self.queues = ensure_queues(
            self._sqs, config, visibility_timeout_seconds=self.options.visibility_timeout
        )
        assert self.parts.lock_conn is not None
        if not self.options.roles:
            # Only the one stack of this database may conclude that nobody works on them.
            self.requeued = repo.requeue_in_progress(self.parts.lock_conn)
        if self.requeued:
            logger.warning(
                "re-enqueueing %d deliveries left on the queues by the previous run", self.requeued
            )
        handlers = load_handlers()
        self._start_event_sources(handlers["deliver"], config)
        self._start_schedules(handlers, config, settings.aws_region, database_url)
        if self.options.runs("front"):
            self._start_front(handlers, config)
        front = self.parts.front
        self.state = DevState(
            pid=os.getpid(),
            url=front.url if front else "",
            port=front.port if front else 0,
            database_url=database_url,
            aws_endpoint_url=aws_endpoint,
            aws_region=settings.aws_region,
            emulator=emulator,
            config_path=str(Path(settings.config_path).absolute())
            if settings.config_path
            else None,
            log_file=log_file,
            started_at=time.time(),
            queues={g: {"url": q.url, "dlq_url": q.dlq_url} for g, q in self.queues.items()},
            shared_env={k: self.environ[k] for k in SHARED_ENV if self.environ.get(k)},
        )
        write_state(self.state_dir, self.state)
        self._banner(pg_kind, emulator)
        return self.state

    def _prepare_state_dir(self) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            # Under root the embedded Postgres runs as its own user, who must reach its data.
            self.state_dir.chmod(0o755)

    def _database(self) -> tuple[str, str]:
        given = self.environ.get("DATABASE_URL")
        if given:
            url, kind = given, "DATABASE_URL"
        else:
            server = self.parts.postgres = LocalPostgres(self.state_dir / "pg", durable=True)
            self._say(f"starting the embedded Postgres (data in {server.data_dir})…")
            admin_url = server.start()
            url = ensure_database(admin_url, EMBEDDED_DB)
            kind = f"embedded, data in {server.data_dir}"
        from hookline.migrate import migrate
        from hookline.settings import Settings

        try:
            migrate(url, Settings.from_env(self.environ).config)
            conn = psycopg.connect(url, autocommit=True, row_factory=dict_row)
        except psycopg.OperationalError as err:
            raise DevStackError(f"cannot reach Postgres at {redact(url)}: {err}") from err
        self.parts.lock_conn = conn
        if self.options.roles:
            return url, kind  # one of several processes of one stack: no lock to take
        # A stack killed a moment ago may still hold the lock until Postgres sees its socket
        # close: give that a few seconds before concluding another stack is running.
        deadline = time.monotonic() + LOCK_WAIT_SECONDS
        while not repo.try_lock(conn):
            if time.monotonic() < deadline:
                time.sleep(0.2)
                continue
            raise DevStackError(
                f"another hookline dev is using the database {redact(url)}; stop it first"
            )
        return url, kind

    def _aws(self) -> tuple[str, str]:
        given = self.environ.get("AWS_ENDPOINT_URL")
        if given:
            wait_until_answering(given)
            return given, "external"
        moto = self.parts.moto = MotoProcess(log_path=self.state_dir / "moto.log")
        return moto.start(), "moto"

    def _start_event_sources(self, deliver: Callable[..., Any], config: HooklineConfig) -> None:
        assert self._sqs is not None
        timeout = config.deliver_function_timeout_seconds
        unknown = [
            r for r in self.options.roles
            if r.startswith("deliver:") and r.partition(":")[2] not in config.group_names
        ]  # fmt: skip
        if unknown:
            raise DevStackError(
                f"no tenant group for {', '.join(unknown)}; groups: {', '.join(config.group_names)}"
            )
        for group in config.tenant_groups:
            if not self.options.runs(f"deliver:{group.name}"):
                continue
            name = f"hookline-deliver-{group.name}"
            source = SqsEventSource.for_group(
                self._sqs,
                group,
                self.queues[group.name],
                deliver,
                wait_seconds=self.options.poll_wait_seconds,
                context_factory=context_factory(name, timeout),
            )
            source.start()
            self.parts.sources[group.name] = source

    def _start_schedules(
        self,
        handlers: dict[str, Callable[..., Any]],
        config: HooklineConfig,
        region: str,
        database_url: str,
    ) -> None:
        from hookline.nudge import NUDGE_SOURCE, set_local_nudger

        infra = config.infrastructure
        fanout = handlers["fanout"]

        def run_fanout(nudged: bool) -> None:
            event = (
                {"source": NUDGE_SOURCE} if nudged else scheduled_event("hookline-fanout", region)
            )
            fanout(
                event, LocalContext("hookline-fanout", timeout_seconds=infra.fanout_timeout_seconds)
            )

        if self.options.runs("fanout"):
            every = self.options.fanout_every or config.schedules.fanout_minutes * 60
            self.parts.fanout = ScheduledRunner("fanout", run_fanout, every)
            # Accepts in this process nudge in-process; other processes (the CLI, a front
            # role) NOTIFY, and this listener wakes the runner (decision 0022).
            set_local_nudger(self.parts.fanout.nudge)
            self.parts.fanout_listener = FanoutListener(database_url, self.parts.fanout.nudge)
            self.parts.fanout_listener.start()
            self.parts.fanout.start(run_now=True)  # catch up with what arrived while stopped
        reconcile = handlers.get("reconcile")
        if reconcile is not None and self.options.runs("reconcile"):

            def run_reconcile(nudged: bool) -> None:
                reconcile(
                    scheduled_event("hookline-reconcile", region),
                    LocalContext(
                        "hookline-reconcile", timeout_seconds=infra.reconcile_timeout_seconds
                    ),
                )

            every = self.options.reconcile_every or config.schedules.reconcile_minutes * 60
            self.parts.reconcile = ScheduledRunner("reconcile", run_reconcile, every)
            self.parts.reconcile.start()

    def _start_front(self, handlers: dict[str, Callable[..., Any]], config: HooklineConfig) -> None:
        # /v1 goes to the management API function, as API Gateway routes it on AWS.
        try:
            front = LocalFront(
                handlers["receiver"],
                handlers={"/v1/{proxy+}": handlers["api"]},
                console=handlers.get("console"),
                one_at_a_time=not self.isolated,
                operator_key=self.environ["HOOKLINE_API_KEY"],
                port=self.options.port,
                timeout_seconds=config.infrastructure.receiver_timeout_seconds,
                health=lambda: {"status": "ok", "pid": os.getpid()},
                ingress=config.infrastructure.ingress,
            )
        except OSError as err:
            raise DevStackError(
                f"cannot listen on 127.0.0.1:{self.options.port} ({err.strerror}); "
                "pick another port with --port"
            ) from err
        front.start()
        self.parts.front = front

    # -- run -----------------------------------------------------------------------------------

    def run(self, stop: threading.Event) -> None:
        """Show the status until `stop` is set."""
        mode = self.options.status
        if mode != "off":
            self._status = StatusWriter(
                self.out,
                self.snapshot,
                tty=None if mode == "auto" else False,
                plain_every=self.options.status_every,
            )
        while not stop.wait(1.0):
            if self._status is not None:
                try:
                    self._status.tick()
                except Exception:
                    logger.exception("status line failed")
        if self._status is not None:
            self._status.final()

    def snapshot(self) -> Snapshot:
        """The numbers of the status line, right now."""
        assert self.config is not None
        counts = None
        conn = self.parts.lock_conn
        if conn is not None and not conn.closed:
            with contextlib.suppress(psycopg.Error):
                counts = repo.status_counts(conn)
        dead_letters: dict[str, int] = {}
        for group, queues in self.queues.items():
            try:
                assert self._sqs is not None
                attributes = self._sqs.get_queue_attributes(
                    QueueUrl=queues.dlq_url, AttributeNames=["ApproximateNumberOfMessages"]
                )["Attributes"]
                dead_letters[group] = int(attributes.get("ApproximateNumberOfMessages", 0))
            except Exception:
                dead_letters[group] = -1
        in_flight = {g: s.stats.in_flight for g, s in self.parts.sources.items()}
        return Snapshot(counts, dead_letters, in_flight, self.config.group_names)

    # -- stop ----------------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop taking requests, let the running fan-out and in-flight batches finish, then
        stop the emulator and the embedded Postgres. Safe to call twice or after a failed start."""
        if self._stopped:
            return
        self._stopped = True
        parts = self.parts
        if parts.front is not None:
            self._say("stopping: no new requests; finishing the running fan-out and batches…")
            parts.front.stop()
        from hookline.nudge import set_local_nudger

        set_local_nudger(None)
        if parts.fanout_listener is not None:
            parts.fanout_listener.stop(timeout=5)
        config = self.config
        for runner in (parts.fanout, parts.reconcile):
            if runner is not None:
                runner.stop(
                    timeout=config.infrastructure.reconcile_timeout_seconds if config else 60
                )
        batch_timeout = (config.deliver_function_timeout_seconds if config else 60) + 5
        # All groups at once: each worker's last long poll ends within poll_wait_seconds.
        stoppers = [
            threading.Thread(target=source.stop, kwargs={"timeout": batch_timeout})
            for source in parts.sources.values()
        ]
        for stopper in stoppers:
            stopper.start()
        for stopper in stoppers:
            stopper.join()
        for group, source in parts.sources.items():
            logger.info("event source of %s stopped: %s", group, source.stats)
        for runner in (parts.fanout, parts.reconcile):
            if runner is not None:
                logger.info("%s schedule stopped: %s", runner.name, runner.stats)
        if parts.fanout_listener is not None:
            logger.info("fan-out listener stopped: %s", parts.fanout_listener.stats)
        if parts.moto is not None:
            parts.moto.stop()
        with contextlib.suppress(Exception):
            from hookline.db import reset_database

            reset_database()
        if parts.lock_conn is not None:
            with contextlib.suppress(Exception):
                parts.lock_conn.close()  # releases the dev stack lock
        if parts.postgres is not None:
            parts.postgres.stop("fast")
        if self.state is not None:
            remove_state(self.state_dir, self.state.pid)
        parts.logs.restore()

    # -- output --------------------------------------------------------------------------------

    def _say(self, text: str) -> None:
        if self.options.status == "off":
            return
        if self._status is not None:
            self._status.message(text)
        else:
            self.out.write(text + "\n")
            self.out.flush()

    def _banner(self, pg_kind: str, emulator: str) -> None:
        assert self.state is not None
        parts = self.parts
        if self.options.roles:
            self._say(
                role_banner(
                    self.state,
                    front=parts.front is not None,
                    fanout_every=parts.fanout.every if parts.fanout else None,
                    reconcile_every=parts.reconcile.every if parts.reconcile else None,
                    deliver_groups=list(parts.sources),
                )
            )
            return
        assert self.config is not None and parts.fanout
        self._say(
            banner(
                self.state,
                self.config,
                fanout_every=parts.fanout.every,
                reconcile_every=parts.reconcile.every if parts.reconcile else None,
                requeued=self.requeued,
                pg_kind=pg_kind,
                emulator=emulator,
            )
        )
