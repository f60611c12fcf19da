"""The A/B runner of the pipeline bench (`bench/against.py`): the two trees take turns, REV's
is REV as committed, and the table it prints is the medians and spreads of the runs given."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from bench.against import export, has_floor, stage_summary, summary, turns

pytestmark = pytest.mark.unit


def run(
    server: float, bare_server: float, wal: float = 3000, width: int = 1
) -> list[dict[str, Any]]:
    """One pipeline run's --json rows: Hookline's and the bare relay's at one width."""
    common = {"processes": 1, "endpoints": width, "commits": 1.0, "log_bytes": 400}
    return [
        {"pipeline": "hookline", **common, "events_per_s": 900.0, "server_cpu_us": server,
         "wal_bytes": wal, "python_cpu_us": 1000.0},
        {"pipeline": "bare", **common, "events_per_s": 1500.0, "server_cpu_us": bare_server,
         "wal_bytes": 1500.0, "python_cpu_us": 500.0, "log_bytes": 0},
    ]  # fmt: skip


def test_the_trees_take_turns_going_first() -> None:
    # Given four rounds, then each round runs both trees, REV first in the first round and
    # this tree first in the next
    assert turns(4) == [["rev", "here"], ["here", "rev"], ["rev", "here"], ["here", "rev"]]


def test_the_table_gives_each_trees_median_ratio_its_spread_and_the_move() -> None:
    # Given three runs of each tree, REV's server CPU 600/300, 660/300, 700/280 µs (2.00x,
    # 2.20x, 2.50x) and this tree's 540/300, 560/280, 500/250 (1.80x, 2.00x, 2.00x)
    runs = {
        "rev": [run(600, 300), run(660, 300), run(700, 280)],
        "here": [run(540, 300), run(560, 280), run(500, 250)],
    }
    # When they are summed up
    table = {row[0]: row[1:] for row in summary(runs)}
    # Then each tree shows its median ratio with the spread, its median figure, and this
    # tree's median against REV's (540 against 660: -18.2 %)
    assert table["server CPU, 1 ep"] == [
        "2.20 (2.00-2.50)", "660", "2.00 (1.80-2.00)", "540", "-18.2 %",
    ]  # fmt: skip
    # And a meter that did not move reads +0.0 %; log bytes have no ratio (the bare relay
    # writes none)
    assert table["WAL, 1 ep"][-1] == "+0.0 %"
    assert table["log bytes, 1 ep"][0] == "-"
    # And the server and Python CPU together, which events/s follows: this tree's 1,540,
    # 1,560 and 1,500 µs (Python 1,000 in each) against the bare relay's 800, 780 and 750
    # (1.93x, 2.00x, 2.00x), its median 1,540 against REV's 1,660: -7.2 %
    assert table["server + Python CPU, 1 ep"][2:] == ["2.00 (1.93-2.00)", "1,540", "-7.2 %"]


def test_rev_is_exported_as_committed(tmp_path: Path) -> None:
    # Given a repository whose bench changed between two commits
    repo = tmp_path / "repo"
    (repo / "bench").mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
            cwd=repo, check=True, capture_output=True,
        )  # fmt: skip

    git("init", "-q")
    (repo / "bench" / "pipeline.py").write_text("before\n")
    git("add", ".")
    git("commit", "-qm", "before")
    (repo / "bench" / "pipeline.py").write_text("after\n")
    git("commit", "-qam", "after")
    # When its first commit is exported for a comparison
    tree = export("HEAD~1", tmp_path / "tree", repo)
    # Then the exported bench is that commit's, not the newest
    assert (tree / "bench" / "pipeline.py").read_text() == "before\n"


def test_stages_are_compared_where_a_tree_gives_them() -> None:
    # Given REV's runs from a pipeline bench without per-stage figures, and this tree's with
    # deliver's server CPU 300 and 400 µs against the bare relay's deliver at 100
    def staged(deliver_us: float) -> list[dict[str, Any]]:
        rows = run(600, 300)
        rows[0]["stages"] = {"deliver": {"server_cpu_us": deliver_us, "python_cpu_us": 700}}
        rows[1]["stages"] = {"deliver": {"server_cpu_us": 100, "python_cpu_us": 500}}
        return rows

    runs = {"rev": [run(600, 300)], "here": [staged(300), staged(400)]}
    # When the stages are summed up
    table = {row[0]: row[1:] for row in stage_summary(runs)}
    # Then this tree's deliver shows its median ratio to the bare relay's deliver with the
    # spread, and REV, which has no figure, shows none and no move
    assert table["deliver server CPU, 1 ep"] == ["-", "-", "3.50 (3.00-4.00)", "350", "-"]
    assert table["deliver Python CPU, 1 ep"][2:4] == ["1.40 (1.40-1.40)", "700"]


def test_the_floor_relay_gets_its_own_table_where_the_runs_have_it() -> None:
    # Given REV's runs from a pipeline bench without the floor relay, and this tree's with
    # it: Hookline's server CPU 600 and 660 µs against the floor's 300 and 400 (2.00x, 1.65x)
    def floored(server: float, floor_server: float) -> list[dict[str, Any]]:
        rows = run(server, 250)
        rows.append({**rows[1], "pipeline": "floor", "server_cpu_us": floor_server})
        return rows

    runs = {"rev": [run(600, 300)], "here": [floored(600, 300), floored(660, 400)]}
    # When they are summed up against the floor
    table = {row[0]: row[1:] for row in summary(runs, "floor")}
    # Then this tree shows its median ratio to the floor of the same run with the spread,
    # REV none, and the move of the figures as in the bare relay's table
    assert has_floor(runs)
    assert table["server CPU, 1 ep"] == ["-", "600", "1.82 (1.65-2.00)", "630", "+5.0 %"]
    # And the bare relay's table still reads each run's bare relay (600/250 and 660/250)
    assert summary(runs)[0][3] == "2.52 (2.40-2.64)"
    assert not has_floor({"rev": [run(600, 300)], "here": [run(600, 300)]})
