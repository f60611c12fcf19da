"""An event published by another process than the one running the fan-out is delivered at once
(decision 0022), not at the next scheduled run: the CLI against a running `hookline dev`, and
the front of `hookline dev --role` nudging the fan-out role, over Postgres LISTEN/NOTIFY.

Each stack here runs its fan-out (and reconcile) schedule every 10 minutes, so only a nudge can
deliver within the tests' few seconds.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg import sql

from hookline.db import Database
from hookline.settings import get_settings
from hookline_dev.cli import main
from hookline_dev.local.devstate import DevState, healthy, read_state
from hookline_dev.local.listener import APPLICATION_NAME
from hookline_dev.localpg import free_port
from tests.e2e.conftest import CHILD_PYTHONPATH, E2E_CONFIG, api_auth, wait_until
from tests.support import operator
from tests.support.environment import exported
from tests.support.postgres import backend_pids
from tests.support.sinks import Sink

pytestmark = pytest.mark.e2e

SCHEDULES = ["--fanout-every", "600", "--reconcile-every", "600"]
DELIVERED_WITHIN = 10.0  # seconds; the schedule would take 600


@dataclass
class Dev:
    """One `hookline dev` child process."""

    process: subprocess.Popen[bytes]
    state: DevState
    out: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start_dev(workdir: Path, name: str, env: dict[str, str], *args: str) -> Dev:
    """Start `hookline dev ARGS` with its own state folder; wait until it is up."""
    state_dir = workdir / f"state-{name}"
    out = workdir / f"{name}.out"
    command = [
        sys.executable, "-m", "hookline_dev.cli", "dev", "--state-dir", str(state_dir),
        "--log-file", str(workdir / f"{name}.log"), "--status", "off",
        "--parent-pid", str(os.getpid()), *SCHEDULES, *args,
    ]  # fmt: skip
    with open(out, "wb") as sink:
        process = subprocess.Popen(
            command, cwd=workdir, env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"hookline dev {name} exited early:\n{out.read_text()}")
        state = read_state(state_dir)
        if state is not None and state.pid == process.pid and (not state.url or healthy(state.url)):
            return Dev(process, state, out)
        time.sleep(0.1)
    process.kill()
    raise AssertionError(f"hookline dev {name} did not come up:\n{out.read_text()}")


def environment_of(state: DevState) -> contextlib.AbstractContextManager[None]:
    """This process takes the stack's exported environment (`hookline dev --print-env`)."""
    return exported(state.env())


@pytest.fixture
def workdir(
    pg_admin_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A folder, a fresh database and the environment of the stack's processes."""
    folder = tmp_path_factory.mktemp("nudge")
    (folder / "hookline.json").write_text(json.dumps(E2E_CONFIG))
    name = f"hookline_nudge_{os.getpid()}_{folder.name}".replace("-", "_")
    ident = sql.Identifier(name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("HOOKLINE_", "AWS_", "POWERTOOLS_")) and k != "DATABASE_URL"
    }
    env.update(
        DATABASE_URL=psycopg.conninfo.make_conninfo(pg_admin_url, dbname=name),
        HOOKLINE_CONFIG=str(folder / "hookline.json"),
        HOOKLINE_LOCAL_KEY_FILE=str(folder / "master.key"),  # shared by every process
        PYTHONPATH=CHILD_PYTHONPATH,
    )
    try:
        yield folder, env
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


def subscribe(state: DevState, sink: Sink) -> str:
    """A tenant with an endpoint at the sink; the tenant id."""
    settings = get_settings()
    db = Database(state.database_url, max_size=1, timeout=10)
    try:
        tenant = operator.add_tenant(db, settings.config, name="nudge", group="standard")["id"]
        operator.add_endpoint(db, settings, tenant_id=tenant, url=sink.url("/hooks"))
    finally:
        db.close()
    return str(tenant)


def publish_with_the_cli(tenant: str, n: int, capsys: pytest.CaptureFixture[str]) -> None:
    """`hookline publish …` in this process (not the stack's): the payload {"n": n}."""
    capsys.readouterr()
    code = main(["publish", "--tenant", tenant, "--type", "order.created",
                 "--data", json.dumps({"n": n}), "--json"])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0 and json.loads(out)["id"], out


def delivered(sink: Sink, n: int) -> bool:
    """Whether the sink received the event whose payload is {"n": n}."""
    return any(json.loads(r.body) == {"n": n} for r in sink.requests("/hooks"))


def listeners(admin_url: str, dbname: str) -> list[int]:
    return backend_pids(admin_url, dbname, APPLICATION_NAME)


def test_the_cli_publishes_to_a_running_stack_and_the_event_is_delivered_at_once(
    workdir: tuple[Path, dict[str, str]],
    pg_admin_url: str,
    sink: Sink,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Given `hookline dev` running (fan-out every 10 minutes) and an endpoint on it
    folder, env = workdir
    dev = start_dev(folder, "all", env, "--port", "0")
    try:
        with environment_of(dev.state):
            tenant = subscribe(dev.state, sink)
            # When a developer publishes from another terminal (`hookline publish`)
            began = time.monotonic()
            publish_with_the_cli(tenant, 1, capsys)
            # Then the endpoint receives it within seconds, not at the next scheduled run
            wait_until(lambda: delivered(sink, 1), DELIVERED_WITHIN, "the first event")
            assert time.monotonic() - began < DELIVERED_WITHIN

            # And when the stack's listening connection is ended (as a Postgres restart would)
            dbname = str(psycopg.conninfo.conninfo_to_dict(dev.state.database_url)["dbname"])
            [old] = listeners(pg_admin_url, dbname)
            with psycopg.connect(pg_admin_url, autocommit=True) as conn:
                conn.execute("SELECT pg_terminate_backend(%s)", (old,))
            wait_until(
                lambda: listeners(pg_admin_url, dbname) not in ([], [old]), 10, "a new listener"
            )
            # Then the next publish is delivered at once too, and the stack kept running
            publish_with_the_cli(tenant, 2, capsys)
            wait_until(lambda: delivered(sink, 2), DELIVERED_WITHIN, "the second event")
            assert dev.process.poll() is None
    finally:
        dev.stop()
    assert dev.process.returncode == 0, dev.out.read_text()


def test_a_front_role_nudges_the_fanout_role_in_another_process(
    workdir: tuple[Path, dict[str, str]], sink: Sink
) -> None:
    # Given a stack of two processes (decision 0018): the front, and the fan-out with the
    # deliver pollers (fan-out every 10 minutes), sharing Postgres and an SQS emulator
    from hookline_dev.local.emulator import MotoProcess

    folder, env = workdir
    moto = MotoProcess(log_path=folder / "moto.log")
    env = {
        **env,
        "AWS_ENDPOINT_URL": moto.start(),
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_REGION": "us-east-1",
    }
    started: list[Dev] = []
    try:
        started.append(start_dev(folder, "fanout", env, "--role", "fanout,deliver"))
        front = start_dev(folder, "front", env, "--role", "front", "--port", str(free_port()))
        started.append(front)
        with environment_of(front.state):
            tenant = subscribe(front.state, sink)
        # When a service publishes an event through the front
        began = time.monotonic()
        answer = httpx.post(
            front.state.url + "/v1/events",
            json={"tenant_id": tenant, "type": "order.created", "payload": {"n": 1}},
            headers=api_auth(front.state),
            timeout=10,
        )
        assert answer.status_code == 200, answer.text
        # Then the fan-out in the other process was woken: delivered within seconds
        wait_until(lambda: delivered(sink, 1), DELIVERED_WITHIN, "the event")
        assert time.monotonic() - began < DELIVERED_WITHIN
    finally:
        for dev in reversed(started):
            dev.stop()
        moto.stop()
