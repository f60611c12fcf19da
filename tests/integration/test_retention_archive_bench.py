"""The bench of retention's archive (`bench/retention_archive.py`) measures what it says: each
day size is archived by Hookline's retention (which must drop the day, or with `--kept` remove
the other tenant's share and keep the day, or the run stops) and by the streaming baseline,
and the slope, peak and rate it states are printed."""

from __future__ import annotations

import re

import pytest

from tests.support import benches

pytestmark = pytest.mark.integration

# events, endpoints, hookline s and MB, streaming s and MB, gzip bytes
ROW = re.compile(r"^(\d+) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d.]+) +([\d,]+)$")


def test_each_day_size_is_archived_and_dropped_and_the_slope_is_stated(pg_admin_url: str) -> None:
    done = benches.run_bench(
        "retention_archive.py", pg_admin_url, "--events", "300,900", "--endpoints", "2"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [ROW.match(line) for line in done.stdout.splitlines()]
    sizes = [(int(r[1]), int(r[2])) for r in rows if r]
    assert sizes == [(300, 2), (900, 2)]
    assert all(float(r[3]) > 0 and float(r[5]) > 0 and r[7] != "0" for r in rows if r)
    assert re.search(r"s per 1,000 events of a day; peak memory [\d.]+ MB at 900", done.stdout)


def test_a_day_another_tenant_keeps_has_its_share_removed_and_stays(pg_admin_url: str) -> None:
    done = benches.run_bench(
        "retention_archive.py", pg_admin_url, "--events", "300,900", "--endpoints", "2",
        "--kept", "20",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    sizes = [(int(r[1]), int(r[2])) for r in map(ROW.match, done.stdout.splitlines()) if r]
    assert sizes == [(300, 2), (900, 2)]
