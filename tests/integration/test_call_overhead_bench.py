"""The call-overhead bench (`bench/call_overhead.py`) measures what it says: every step kept in
`bench/variants/overhead` still applies, on the steps before it, to the claim's template as
built, and each route is called with no ids and with one id it does not find (a probe that
matches nothing stops the run instead of printing figures of something else)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from bench.common import REPO
from tests.support import benches

pytestmark = pytest.mark.integration


# a fan-out run's statements, each as a scheduled and as a nudged run makes it
FANOUT = ("empty fan-out round", "fan_out_batch, nothing to do", "claim_due, nothing due")
RUNS = ("scheduled", "nudged")


def run_bench(admin_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return benches.run_bench("call_overhead.py", admin_url, "--calls", "5", "--warm", "1", *args)


def test_every_step_applies_and_each_route_is_measured_both_ways(pg_admin_url: str) -> None:
    steps = sorted((REPO / "bench/variants/overhead").glob("*.sql"))
    assert steps
    done = run_bench(pg_admin_url)
    assert done.returncode == 0, done.stderr[-2000:]
    measured = {}
    for cells in (line.split() for line in done.stdout.splitlines()):
        if len(cells) >= 4 and cells[-3].isdigit() and (cells[-2].isdigit() or cells[-2] == "-"):
            measured[" ".join(cells[:-3])] = (cells[-3], cells[-2], cells[-1])
    assert set(measured) == {
        "SELECT 1", "SELECT of the six parameters", "built claim", *(p.stem for p in steps),
        *(f"{statement}, {run}" for statement in FANOUT for run in RUNS),
    }  # fmt: skip
    assert measured["built claim"][2] == "+0"
    # a fan-out run's statements take no ids: one figure
    assert all(measured[name][1] == "-" for name in measured if name.endswith(RUNS))
    assert all(one.isdigit() for name, (_, one, _) in measured.items() if not name.endswith(RUNS))


def test_a_probe_that_matches_nothing_stops_the_run(pg_admin_url: str, tmp_path: Path) -> None:
    probe = tmp_path / "typo.sql"
    probe.write_text("-- replace:\n    RETURN QUERY %6$s;\n-- with:\n    RETURN;\n-- end\n")
    done = run_bench(pg_admin_url, "--variant", str(probe))
    assert done.returncode != 0
    assert "0 matches for '    RETURN QUERY %6$s;" in done.stderr
