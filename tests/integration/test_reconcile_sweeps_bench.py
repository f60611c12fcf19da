"""The reconcile-sweeps bench (`bench/reconcile_sweeps.py`) measures what it says: at every
rate each sweep finds exactly the stuck deliveries among the delivered leases it reads (else
the run stops instead of printing figures of something else), and the window it reports
grows with the rate."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from bench.common import REPO

pytestmark = pytest.mark.integration

STATEMENTS = {
    "kill_past_deadline",
    "requeue_expired_leases",
    "advance_lease_floor",
    "count_expired_leases",
    "never_attempted",
    "count_deliveries_by_state",
}


def test_each_sweep_finds_the_stuck_deliveries_at_each_rate(pg_admin_url: str) -> None:
    done = subprocess.run(
        [sys.executable, "bench/reconcile_sweeps.py", "--rates", "2", "--rounds", "1",
         "--stuck", "6"],
        cwd=REPO, env={**os.environ, "DATABASE_URL": pg_admin_url},
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line.split() for line in done.stdout.splitlines()]
    measured = {(r[0], r[1]): r for r in rows if len(r) >= 5 and r[1] in STATEMENTS}
    assert {name for _, name in measured} == STATEMENTS
    assert {rate for rate, _ in measured} == {"0", "2"}

    def leases(rate: str, name: str) -> int:
        return int(measured[(rate, name)][2].replace(",", ""))

    # the baseline reads the stuck ones alone; at 2/s, the expired window holds the six
    # minutes since the floor and the queued count all 21 (less the seconds the run took)
    assert leases("0", "count_deliveries_by_state") == 6
    assert 6 + 2 * 6 * 60 - 10 <= leases("2", "requeue_expired_leases") <= 6 + 2 * 6 * 60
    assert 6 + 2 * 21 * 60 - 10 <= leases("2", "count_deliveries_by_state") <= 6 + 2 * 21 * 60
    assert "µs per delivery" in done.stdout
