"""The bench of batches spanning days (`bench/batch_days.py`) measures what it says: every
batch of every route is claimed and recorded whole (a batch short of a delivery stops the run),
and its table marks as deliver's the route `day_parts` takes for each span."""

from __future__ import annotations

import re

import pytest

from hookline.repositories.hot_cursors import MOST_DAYS_SPLIT
from tests.support import benches

pytestmark = pytest.mark.integration

# a row of the table: span, how, deliver's way or not, median and p90 µs, ratio to one day's
ROW = re.compile(
    r"(?P<span>\d+) days? +(?P<how>one statement each|per day \(\d+ each\))"
    r" +(?P<yes>yes)? +[\d,]+ +[\d,]+ +(?P<ratio>[\d.]+)$"
)


def test_each_span_is_measured_both_ways_and_deliver_s_way_is_marked(pg_admin_url: str) -> None:
    past = MOST_DAYS_SPLIT + 1
    done = benches.run_bench(
        "batch_days.py", pg_admin_url, "--batches", "3", "--days", f"2,{past}", "--past-days", "0"
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {}
    for line in done.stdout.splitlines():
        row = ROW.match(line)
        if row:
            how = "per day" if row["how"].startswith("per day") else "one statement"
            rows[(int(row["span"]), how)] = (row["yes"] is not None, float(row["ratio"]))
    assert set(rows) == {
        (1, "one statement"), (2, "one statement"), (2, "per day"),
        (past, "one statement"), (past, "per day"),
    }  # fmt: skip
    marked = {route for route, (deliver_s, _) in rows.items() if deliver_s}
    assert marked == {(1, "one statement"), (2, "per day"), (past, "one statement")}
    assert rows[(1, "one statement")][1] == 1.0
    assert all(ratio > 0 for _, ratio in rows.values())
