"""A benchmark killed with SIGTERM (`kill`, `pkill`, a runner's timeout) leaves nothing
running: its local Postgres would otherwise stay up beside the next run, sharing the machine
whose CPU that run measures."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from bench.common import REPO
from hookline_dev.localpg import LocalPostgres

pytestmark = pytest.mark.integration

BENCH = """
import sys, time
sys.path[:0] = ["bench"]
from common import bench_database
with bench_database("sigterm") as (url, where):
    print(url, flush=True)
    time.sleep(120)
"""


def test_a_killed_benchmark_stops_its_server_and_removes_its_files() -> None:
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    bench = subprocess.Popen(
        [sys.executable, "-c", BENCH], cwd=REPO, env=env, stdout=subprocess.PIPE, text=True
    )
    data: Path | None = None
    try:
        assert bench.stdout is not None
        url = bench.stdout.readline().strip()
        assert url, "the benchmark printed no database URL"
        with psycopg.connect(url, connect_timeout=5) as conn:
            row = conn.execute("SELECT current_setting('data_directory')").fetchone()
            assert row is not None
            data = Path(row[0])
        assert data.is_dir()

        bench.send_signal(signal.SIGTERM)
        assert bench.wait(timeout=60) == 128 + signal.SIGTERM
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(url, connect_timeout=2)
        assert not data.parent.exists()
    finally:
        if bench.poll() is None:
            bench.kill()
        if data is not None and data.exists():  # what a failure here left: stop it
            LocalPostgres(data, durable=True).stop("immediate")
