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
import importlib
import importlib.util
import logging
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TextIO

import boto3
import psycopg
from botocore.config import Config
from psycopg.rows import dict_row

from hookline.errors import HooklineError
from hookline.repositories import devstack as repo
from hookline_dev.local.apigw import LocalContext
from hookline_dev.local.archive_bucket import ensure_archive_bucket
from hookline_dev.local.devstate import (
    DevState,
    find_running,
    operator_key,
    remove_state,
    write_state,
)
from hookline_dev.local.emulator import MotoProcess, wait_until_answering
from hookline_dev.local.front import LocalFront
from hookline_dev.local.listener import FanoutListener
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
OPTIONAL_FUNCTIONS = ("reconcile", "console")  # scheduled or routed only once they exist
# Settings that other processes need to share with the stack (exported by --print-env): the
# operator key is what the CLI sends to the front's /v1 (decision 0030).
SHARED_ENV = (
    "HOOKLINE_LOCAL_KEY_FILE", "HOOKLINE_KMS_KEY_ID", "HOOKLINE_SQS_FAIR_QUEUES",
    "HOOKLINE_API_KEY", "HOOKLINE_ARCHIVE_BUCKET",
)  # fmt: skip
ROLES = ("front", "fanout", "reconcile", "deliver")  # deliver:<group> for one tenant group


def parse_roles(values: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Normalise `--role` values (repeated and/or comma lists): `front`, `fanout`,
    `reconcile`, `deliver` (every tenant group) or `deliver:<group>`. Raises ValueError."""
    roles: list[str] = []
    for value in values:
        for part in value.split(","):
            role = part.strip()
            if not role:
                continue
            base, colon, group = role.partition(":")
            if base not in ROLES or (colon and (base != "deliver" or not group)):
                raise ValueError(
                    f"unknown role {role!r}; roles: front, fanout, reconcile, deliver, "
                    "deliver:<group>"
                )
            if role not in roles:
                roles.append(role)
    return tuple(roles)


class DevStackError(HooklineError):
    """The dev stack cannot start (already running, port taken, database locked, ...)."""


@dataclass(frozen=True)
class DevOptions:
    """How `hookline dev` runs; None means: as the configuration says."""

    port: int = 8080  # 0 picks a free port (written to dev.json)
    state_dir: Path = Path(".hookline")
    fanout_every: float | None = None  # seconds; default schedules.fanout_minutes
    reconcile_every: float | None = None  # seconds; default schedules.reconcile_minutes
    visibility_timeout: int | None = None  # default: deliver function timeout x 6, as on AWS
    log_file: str | None = None  # default <state_dir>/dev.log; "-" is stderr
    status: str = "auto"  # auto (in place on a terminal, else plain lines), plain, off
    status_every: float = 10.0  # seconds between plain status lines
    poll_wait_seconds: int = 1  # long-poll wait of each ReceiveMessage (bounds stop latency)
    roles: tuple[str, ...] = ()  # empty: everything in this process (see parse_roles)

    def runs(self, role: str) -> bool:
        """Whether this process runs `role` (`deliver:<group>` is also run by `deliver`)."""
        if not self.roles:
            return True
        if role in self.roles:
            return True
        return role.startswith("deliver:") and "deliver" in self.roles


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
    log_stream: IO[str] | None = None
    saved_stdout: TextIO | None = None
    log_handler_stream: tuple[logging.StreamHandler[Any], Any] | None = None


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
        log_file = self._route_logs()
        database_url, pg_kind = self._database()
        aws_endpoint, emulator = self._aws()
        self._configure_environment(database_url, aws_endpoint, emulator)
        ensure_archive_bucket(self.environ, aws_endpoint)  # retention archives here too
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
        self._sqs = _sqs_client(aws_endpoint, settings.aws_region, config)
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

    def _route_logs(self) -> str:
        """Powertools' JSON logs and EMF lines (both written to stdout on Lambda) go to the
        log file; stdout is kept for the banner and the status line."""
        from hookline.observability import logger as powertools_logger

        target = self.options.log_file
        if target == "-":
            stream: IO[str] = sys.stderr
            where = "stderr"
        else:
            path = Path(target) if target else self.state_dir / "dev.log"
            path.parent.mkdir(parents=True, exist_ok=True)
            stream = self.parts.log_stream = open(path, "a", buffering=1)  # noqa: SIM115 - closed in stop()
            where = str(path.absolute())
        handler = powertools_logger.registered_handler
        if isinstance(handler, logging.StreamHandler):
            self.parts.log_handler_stream = (handler, handler.setStream(stream))
        # EMF metrics are print()ed: on Lambda they land in CloudWatch Logs, here in the log.
        self.parts.saved_stdout = sys.stdout
        sys.stdout = stream
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        return where

    def _database(self) -> tuple[str, str]:
        given = self.environ.get("DATABASE_URL")
        if given:
            url, kind = given, "DATABASE_URL"
        else:
            server = self.parts.postgres = LocalPostgres(self.state_dir / "pg", durable=True)
            self._say(f"starting the embedded Postgres (data in {server.data_dir})…")
            admin_url = server.start()
            url = _ensure_database(admin_url, EMBEDDED_DB)
            kind = f"embedded, data in {server.data_dir}"
        from hookline.migrate import migrate

        try:
            migrate(url)
            conn = psycopg.connect(url, autocommit=True, row_factory=dict_row)
        except psycopg.OperationalError as err:
            raise DevStackError(f"cannot reach Postgres at {_redact(url)}: {err}") from err
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
                f"another hookline dev is using the database {_redact(url)}; stop it first"
            )
        return url, kind

    def _aws(self) -> tuple[str, str]:
        given = self.environ.get("AWS_ENDPOINT_URL")
        if given:
            wait_until_answering(given)
            return given, "external"
        moto = self.parts.moto = MotoProcess(log_path=self.state_dir / "moto.log")
        return moto.start(), "moto"

    def _configure_environment(self, database_url: str, aws_endpoint: str, emulator: str) -> None:
        env = self.environ
        env["DATABASE_URL"] = database_url
        env["AWS_ENDPOINT_URL"] = aws_endpoint
        env.setdefault("AWS_REGION", env.get("AWS_DEFAULT_REGION", "us-east-1"))
        env.setdefault("AWS_DEFAULT_REGION", env["AWS_REGION"])
        if emulator == "moto":
            # moto takes any credentials; real ones (or an expired SSO profile) must not matter.
            for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
                env.pop(name, None)
            env["AWS_ACCESS_KEY_ID"] = "testing"
            env["AWS_SECRET_ACCESS_KEY"] = "testing"  # noqa: S105 - moto's dummy credential
        else:
            env.setdefault("AWS_ACCESS_KEY_ID", "test")
            env.setdefault("AWS_SECRET_ACCESS_KEY", "test")  # LocalStack's documented dummy
        env["HOOKLINE_LOCAL_MODE"] = "1"  # /v1 without an IAM identity: local only
        # ... but with a key: a caller of the front's /v1 is an operator only with it (or from
        # the front's own origin), so a web page cannot drive the stack (decision 0030).
        env["HOOKLINE_API_KEY"] = env.get("HOOKLINE_API_KEY") or operator_key(self.state_dir)
        env.setdefault("HOOKLINE_ALLOW_PRIVATE_TARGETS", "1")  # subscribers on this machine
        env.setdefault("HOOKLINE_ALLOW_HTTP_TARGETS", "1")
        # On AWS each container has its own small pool; here the front's threads, every
        # container's deliver threads and the fan-out share one.
        env.setdefault("HOOKLINE_DB_POOL_SIZE", "32")
        env.setdefault("POWERTOOLS_TRACE_DISABLED", "true")  # no X-Ray daemon here
        # Whoever talks to this stack (CLI, demo, tests, from any folder) must seal and open
        # secrets with the same local master key: an absolute path, shared through dev.json.
        key_file = Path(env.get("HOOKLINE_LOCAL_KEY_FILE") or self.state_dir / "master.key")
        env["HOOKLINE_LOCAL_KEY_FILE"] = str(key_file.absolute())
        # Nudges are in-process; queue URLs are looked up on the emulator.
        env.pop("HOOKLINE_FANOUT_FUNCTION", None)
        env.pop("HOOKLINE_QUEUE_URL_PREFIX", None)

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
                context_factory=_context_factory(name, timeout),
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
        from hookline.nudge import set_local_nudger

        infra = config.infrastructure
        fanout = handlers["fanout"]

        def run_fanout(nudged: bool) -> None:
            event = (
                {"source": "hookline.nudge"}
                if nudged
                else scheduled_event("hookline-fanout", region)
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
        self._restore_logs()

    def _restore_logs(self) -> None:
        parts = self.parts
        if parts.saved_stdout is not None:
            sys.stdout = parts.saved_stdout
            parts.saved_stdout = None
        if parts.log_handler_stream is not None:
            handler, previous = parts.log_handler_stream
            handler.setStream(previous)
            parts.log_handler_stream = None
        if parts.log_stream is not None:
            parts.log_stream.close()
            parts.log_stream = None

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
        if self.options.roles:
            self._role_banner()
            return
        assert self.state is not None and self.config is not None and self.parts.fanout
        s, config = self.state, self.config
        groups = ", ".join(f"{g.name} (cap {g.max_concurrency})" for g in config.tenant_groups)
        reconcile = (
            f"every {_period(self.parts.reconcile.every)}"
            if self.parts.reconcile
            else "not scheduled (functions/reconcile/handler.py does not exist yet)"
        )
        aws = "moto server (child process)" if emulator == "moto" else "AWS_ENDPOINT_URL"
        lines = [
            "Hookline is running on this machine — the Lambda handlers, invoked as AWS would.",
            f"  API (API Gateway REST)  {s.url}   POST /in/{{source_id}} → receiver · "
            "ANY /v1/{proxy+} → api (with $HOOKLINE_API_KEY from --print-env, not SigV4)",
            f"  Postgres                {_redact(s.database_url)}  ({pg_kind})",
            f"  AWS (SQS + DLQs)        {s.aws_endpoint_url}  ({aws})",
            f"  Deliver per group       {groups}",
            f"  Fan-out                 every {_period(self.parts.fanout.every)} "
            "and right after each accepted event (from any process)",
            f"  Reconcile               {reconcile}",
            f"  Logs (JSON, as in CloudWatch)  {s.log_file}",
            '  Other terminals:        eval "$(.venv/bin/hookline dev --print-env)"   '
            "then e.g. hookline events list",
            "  See it work:            make demo",
        ]
        if self.requeued:
            lines.append(
                f"  Recovered               {self.requeued} deliveries left on the queues by the "
                "previous run were enqueued again"
            )
        lines.append("Ctrl-C stops (in-flight deliveries finish first).")
        self._say("\n".join(lines))

    def _role_banner(self) -> None:
        assert self.state is not None
        parts = self.parts
        running = []
        if parts.front is not None:
            running.append(f"front {self.state.url}")
        if parts.fanout is not None:
            running.append(f"fanout every {_period(parts.fanout.every)}")
        if parts.reconcile is not None:
            running.append(f"reconcile every {_period(parts.reconcile.every)}")
        running += [f"deliver:{group}" for group in parts.sources]
        self._say(
            f"hookline dev (pid {self.state.pid}) running roles: {', '.join(running) or 'none'}"
            f" on {_redact(self.state.database_url)} and {self.state.aws_endpoint_url}"
        )


def load_handlers() -> dict[str, Callable[..., Any]]:
    """The Lambda handlers, imported from `functions/` (the optional ones once they exist).

    The deliver handler gets one module instance per calling thread (`ContainerPerThread`);
    the others are imported once.
    """
    ensure_functions_importable()
    handlers: dict[str, Callable[..., Any]] = {}
    for name in ("receiver", "api", "fanout", "reconcile", "console"):
        if name in OPTIONAL_FUNCTIONS and not handler_exists(name):
            continue
        module = importlib.import_module(f"functions.{name}.handler")
        handlers[name] = module.lambda_handler
    handlers["deliver"] = ContainerPerThread("functions.deliver.handler")
    return handlers


class ContainerPerThread:
    """A Lambda handler whose module is loaded afresh for each thread that calls it.

    On AWS every concurrent invocation runs in a container of its own, with its own copy of
    the module's globals: the deliver handler's thread pool, which runs a batch's records in
    parallel, is per container. The event source calls the handler from one thread per batch
    in flight, so a module copy per thread is a container per concurrent batch: a group's
    batches do not queue behind each other's (or another group's) records, as on AWS. Shared
    collaborators that live outside the module (the database pool, the HTTP client) are
    process-wide, as `hookline.runtime` builds them.
    """

    def __init__(self, module: str) -> None:
        """`module` is the handler module's dotted name; it must define `lambda_handler`."""
        spec = importlib.util.find_spec(module)
        if spec is None or spec.origin is None:
            raise DevStackError(f"cannot find the handler module {module}")
        self.module = module
        self.origin = spec.origin
        self._local = threading.local()
        self._lock = threading.Lock()
        self.containers = 0

    def __call__(self, event: dict[str, Any], context: Any) -> Any:
        """Invoke this thread's copy (loading it on the first call: a cold start)."""
        handler = getattr(self._local, "handler", None)
        if handler is None:
            with self._lock:
                self.containers += 1
                name = f"{self.module}__container_{self.containers}"
            spec = importlib.util.spec_from_file_location(name, self.origin)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            handler = self._local.handler = module.lambda_handler
        return handler(event, context)


def handler_exists(name: str) -> bool:
    """Whether `functions/<name>/handler.py` exists."""
    ensure_functions_importable()
    try:
        return importlib.util.find_spec(f"functions.{name}.handler") is not None
    except ModuleNotFoundError:
        return False


def ensure_functions_importable() -> None:
    """Put the project root (which holds `functions/`) on `sys.path` if it is not there.

    The `hookline` console script runs with its own folder on the path, not the project's; the
    package lives in `<root>/devtools/hookline_dev`, so the root is found from it (or the cwd).
    """
    with contextlib.suppress(ModuleNotFoundError):
        if importlib.util.find_spec("functions.receiver.handler") is not None:
            return
    package_root = Path(__file__).resolve().parents[3]
    for candidate in (Path.cwd(), package_root):
        if (candidate / "functions" / "receiver" / "handler.py").exists():
            sys.path.insert(0, str(candidate))
            importlib.invalidate_caches()
            return
    raise DevStackError("cannot find the functions/ folder of the Hookline project")


def _ensure_database(admin_url: str, name: str) -> str:
    """Create database `name` on the server of `admin_url` if missing; its URL."""
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin_url.rsplit("/", 1)[0] + "/" + name  # a URL other tools understand too


def _sqs_client(endpoint: str, region: str, config: HooklineConfig) -> SQSClient:
    # One pooled connection per poller thread, plus the status line's.
    pool = sum(g.max_concurrency for g in config.tenant_groups) + 4
    client: SQSClient = boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name=region,
        config=Config(
            max_pool_connections=pool,
            retries={"max_attempts": 3, "mode": "standard"},
            connect_timeout=3,
            read_timeout=30,  # above the longest long poll
        ),
    )
    return client


def _context_factory(function_name: str, timeout: float) -> Callable[[], LocalContext]:
    return lambda: LocalContext(function_name=function_name, timeout_seconds=timeout)


def _redact(url: str) -> str:
    """A connection URL without its password."""
    try:
        params = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "<unparseable database URL>"
    if params.get("password"):
        params["password"] = "***"  # noqa: S105 - a mask, not a secret
        return psycopg.conninfo.make_conninfo("", **params)
    return url


def _period(seconds: float) -> str:
    if seconds >= 60 and seconds % 60 == 0:
        minutes = int(seconds // 60)
        return f"{minutes} min"
    return f"{seconds:g} s"


@contextlib.contextmanager
def running_stack(options: DevOptions) -> Iterator[DevStack]:
    """A started stack, stopped on exit (for tools that run one in-process)."""
    stack = DevStack(options)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()
