"""The end-to-end tier: one real `hookline dev` process for the session, talked to over HTTP.

The stack gets a fresh database on the harness's Postgres (it applies the migrations itself),
a fast retry schedule and fan-out period, and a short SQS visibility timeout, so retries,
redrives and restarts happen within seconds. Tests set up tenants, sources and endpoints
through the same services the CLI uses, in this process, under the environment the stack
exports (`hookline dev --print-env`: its database, and the settings that must be shared,
such as the key that seals secrets); everything else goes through the front (HTTP), the
queues (boto3 on the stack's emulator) or subscribers on loopback. The fixtures are
package-scoped, so the stack stops and the environment is restored before other tiers run.
Set HOOKLINE_E2E_AWS_ENDPOINT_URL to run the tier against LocalStack instead of the stack's
own moto server.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import boto3
import psycopg
import pytest
from psycopg import sql

from hookline.config import load_config
from hookline.db import Database, reset_database
from hookline.settings import Settings, get_settings
from hookline_dev.local.devstate import DevState, healthy, read_state
from tests.support import operator
from tests.support.sinks import Sink

REPO = Path(__file__).resolve().parents[2]
# This checkout's code for the child processes (the layer first, as on Lambda, then the dev
# tooling), not whichever checkout the virtualenv's editable install points at.
CHILD_PYTHONPATH = os.pathsep.join(
    [str(REPO / "layers" / "core"), str(REPO / "devtools"), str(REPO)]
)

# Retries every second, two receives before the DLQ, short HTTP timeouts.
E2E_CONFIG: dict[str, Any] = {
    "tenant_groups": [
        {"name": "standard", "max_concurrency": 4, "max_receive_count": 2},
        {"name": "priority", "max_concurrency": 2, "max_receive_count": 2},
        {"name": "bulk", "max_concurrency": 2, "max_receive_count": 2},
    ],
    "retry_schedule_seconds": [0, 1],
    "retry_jitter": 0.0,
    # Generous for a loaded CI machine: a timed-out attempt would be retried, not lost, but
    # the tests count requests.
    "deliver_timeout_seconds": 10,
    "deliver_connect_timeout_seconds": 5,
    "deliver_function_timeout_seconds": 20,
}
DEV_ARGS = ["--fanout-every", "1", "--visibility-timeout", "2", "--status", "plain"]


@dataclass
class DevProcess:
    """A `hookline dev` child process, which tests may kill and restart on the same port.

    The first start asks for any free port (`--port 0`) and keeps the one the stack bound: a
    port picked here and handed over could be taken by another process in between."""

    workdir: Path
    env: dict[str, str]
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    state: DevState | None = None
    starts: int = 0
    _logs: list[Path] = field(default_factory=list)

    @property
    def state_dir(self) -> Path:
        return self.workdir / ".hookline"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        """The stack's output (banner and status lines) of its current run."""
        return self._logs[-1]

    def start(self, timeout: float = 60) -> DevState:
        """Start the stack and wait until its front answers."""
        self.starts += 1
        log = self.workdir / f"dev-{self.starts}.out"
        self._logs.append(log)
        command = [
            sys.executable, "-m", "hookline_dev.cli", "dev", "--port", str(self.port),
            "--log-file", str(self.workdir / "dev.log"), "--parent-pid", str(os.getpid()),
            *DEV_ARGS,
        ]  # fmt: skip
        with open(log, "wb") as out:
            self.process = subprocess.Popen(
                command, cwd=self.workdir, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"hookline dev exited early:\n{log.read_text()}")
            state = read_state(self.state_dir)
            if state is not None and state.pid == self.process.pid and healthy(state.url):
                self.state = state
                self.port = state.port
                return state
            time.sleep(0.1)
        raise AssertionError(f"hookline dev did not come up:\n{log.read_text()}")

    def signal(self, signum: int, timeout: float = 60) -> int:
        """Send a signal and wait for the process to end; its exit code."""
        assert self.process is not None
        self.process.send_signal(signum)
        code = self.process.wait(timeout)
        self.process = None
        return code

    def restart(self) -> DevState:
        """Start again after a stop or a kill (same port, same database)."""
        return self.start()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.signal(signal.SIGTERM)


@dataclass
class Stack:
    """What a test needs of the running stack."""

    dev: DevProcess
    db: Database
    settings: Settings

    @property
    def url(self) -> str:
        return self.dev.url

    @property
    def state(self) -> DevState:
        assert self.dev.state is not None
        return self.dev.state

    @property
    def auth(self) -> dict[str, str]:
        """The header a service sends to the front's /v1: the key `--print-env` exports."""
        return api_auth(self.state)

    def sqs(self) -> Any:
        return boto3.client(
            "sqs",
            endpoint_url=self.state.aws_endpoint_url,
            region_name=self.state.aws_region,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )

    def tenant(self, group: str = "standard", name: str = "e2e") -> str:
        return operator.add_tenant(self.db, self.settings.config, name=name, group=group)["id"]

    def source(self, tenant_id: str, scheme: str, secret: str) -> str:
        return operator.add_source(self.db, tenant_id=tenant_id, scheme=scheme, secrets=[secret])[
            "path"
        ]

    def endpoint(self, tenant_id: str, url: str, **options: Any) -> dict[str, Any]:
        return operator.add_endpoint(
            self.db, self.settings, tenant_id=tenant_id, url=url, **options
        )

    def query(self, statement: str, *params: Any) -> list[dict[str, Any]]:
        with self.db.connection() as conn:
            return [dict(r) for r in conn.execute(statement, params).fetchall()]

    def deliveries(self, **where: str) -> list[dict[str, Any]]:
        clause = " AND ".join(f"{k} = %s" for k in where) or "true"
        return self.query(f"SELECT * FROM deliveries WHERE {clause}", *where.values())

    def attempts(self, delivery_id: str) -> list[dict[str, Any]]:
        return self.query(
            "SELECT * FROM attempt_log WHERE delivery_id = %s ORDER BY id", delivery_id
        )

    def cli(self, *argv: str) -> Any:
        """Run the `hookline` CLI with the stack's environment (what --print-env exports)."""
        result = subprocess.run(
            [sys.executable, "-m", "hookline_dev.cli", *argv, "--json"],
            env={**os.environ, **self.state.env()},
            capture_output=True,
            text=True,
            timeout=60,
        )
        if result.returncode:  # say what the CLI said, not only its exit status
            pytest.fail(f"hookline {' '.join(argv)} exited {result.returncode}: {result.stderr}")
        return json.loads(result.stdout)


@pytest.fixture(scope="package")
def e2e_database_url(pg_admin_url: str) -> Iterator[str]:
    """A fresh, empty database: the dev stack applies the migrations itself."""
    name = f"hookline_e2e_{os.getpid()}"
    ident = sql.Identifier(name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    yield psycopg.conninfo.make_conninfo(pg_admin_url, dbname=name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


@pytest.fixture(scope="package")
def dev_process(
    e2e_database_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DevProcess]:
    """One `hookline dev` for the whole tier, stopped cleanly (SIGTERM) at the end."""
    workdir = tmp_path_factory.mktemp("dev")
    config = workdir / "hookline.json"
    config.write_text(json.dumps(E2E_CONFIG))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HOOKLINE_", "AWS_", "POWERTOOLS_")) and k != "DATABASE_URL"
    }
    env.update(
        DATABASE_URL=e2e_database_url,
        HOOKLINE_CONFIG=str(config),
        PYTHONPATH=CHILD_PYTHONPATH,
    )
    localstack = os.environ.get("HOOKLINE_E2E_AWS_ENDPOINT_URL")
    if localstack:
        env["AWS_ENDPOINT_URL"] = localstack
    dev = DevProcess(workdir, env)
    dev.start()
    try:
        yield dev
    finally:
        dev.stop()


@pytest.fixture(scope="package")
def stack(dev_process: DevProcess) -> Iterator[Stack]:
    """The running stack, with a pool on its database and its settings; this process takes
    the stack's environment meanwhile (services read the process-wide settings)."""
    assert dev_process.state is not None
    exported = dev_process.state.env()
    saved = {k: os.environ.get(k) for k in exported}
    os.environ.update(exported)
    reset_database()
    settings = get_settings()
    assert settings.config == load_config(dev_process.env["HOOKLINE_CONFIG"])
    db = Database(dev_process.state.database_url, max_size=4, timeout=10)
    try:
        yield Stack(dev_process, db, settings)
    finally:
        db.close()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        reset_database()


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A subscriber on loopback that records every request."""
    s = Sink().start()
    try:
        yield s
    finally:
        s.stop()


def serve_sink_on(port: int, sink: Sink) -> ThreadingHTTPServer:
    """Serve `sink`'s behaviour on a given port (for a subscriber that comes up late)."""
    server = ThreadingHTTPServer(("127.0.0.1", port), sink.server.RequestHandlerClass)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def api_auth(state: DevState) -> dict[str, str]:
    """`Authorization` with the stack's operator key (decision 0030)."""
    return {"Authorization": f"Bearer {state.env()['HOOKLINE_API_KEY']}"}


def wait_until(predicate: Callable[[], Any], timeout: float = 20, what: str = "") -> Any:
    """Poll until `predicate()` is truthy; its value. Fails the test on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or predicate}")
        time.sleep(0.1)
