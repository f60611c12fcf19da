"""The pipeline bench against another revision, the two taking turns in the same hour.

A change to the hot path is judged by ratios to the bare relay that move by ±25 % between
single runs with the machine's load (docs/performance.md, "Now"), so a figure of the change
alone says little: the code before must run in the same hour, in turns. This exports REV's
tree (`git archive`) beside this one and runs `bench/pipeline.py ... --json` in each, the
order turned round every round (REV first, then this tree first, ...), each tree with its own
`PYTHONPATH` and this virtualenv. It prints, per meter and width, each tree's median ratio to
the bare relay of the same run with the spread, and the median absolute figure; and where
both trees ran, how this tree's median moved against REV's. With `--floor` among the
pipeline's arguments the same table follows against the floor relay of the same run (a REV
whose bench has no floor shows none).

    .venv/bin/python bench/against.py REV [--rounds 3] [-- PIPELINE ARGS]

PIPELINE ARGS default to `--processes 1 --endpoints 1,10 --seconds 5` (`--json` is added).
A round of the defaults takes ~4.5 min. A benchmark: prints, never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import print_table  # noqa: E402

DEFAULT_ARGS = ["--processes", "1", "--endpoints", "1,10", "--seconds", "5"]
TOTAL_CPU = "total_cpu_us"  # server CPU + Python CPU, derived from the two
# (meter, how the table names it): the meters, per delivered event
METERS = [
    ("server_cpu_us", "server CPU"),
    ("wal_bytes", "WAL"),
    ("python_cpu_us", "Python CPU"),
    ("events_per_s", "events/s"),
    ("log_bytes", "log bytes"),
    # not a target of its own: events/s follows its inverse (docs/performance.md, "Now")
    (TOTAL_CPU, "server + Python CPU"),
]
Run = list[dict[str, Any]]  # one pipeline run's --json rows


def export(rev: str, into: Path, repo: Path = REPO) -> Path:
    """REV's tree of `repo`, as committed, under `into`."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=repo, capture_output=True, check=True
    )
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def run_pipeline(tree: Path, args: Sequence[str]) -> Run:
    """One `bench/pipeline.py --json` run of `tree`'s code: its rows."""
    paths = [tree / "layers" / "core", tree / "devtools", tree]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}
    done = subprocess.run(
        [sys.executable, str(tree / "bench" / "pipeline.py"), *args, "--json"],
        cwd=tree, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"pipeline in {tree} failed:\n{done.stderr[-2000:]}")
    rows: Run = json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def turns(rounds: int) -> list[list[str]]:
    """Which tree runs first in each round: REV, then this tree, then REV ..."""
    return [["rev", "here"] if n % 2 == 0 else ["here", "rev"] for n in range(rounds)]


def summary(runs: dict[str, list[Run]], baseline: str = "bare") -> list[list[str]]:
    """Table rows: per width and meter, each tree's median ratio to the `baseline` relay of
    the same run ("bare" or "floor"; spread) and median absolute figure, and this tree's
    median against REV's."""
    return [
        _compare(runs, f"{label}, {width} ep", partial(_meter, width=width, meter=meter),
                 baseline)
        for width in _widths(runs)
        for meter, label in METERS
    ]  # fmt: skip


def has_floor(runs: dict[str, list[Run]]) -> bool:
    """Whether any run has the floor relay's rows (`bench/pipeline.py --floor`)."""
    return any(r["pipeline"] == "floor" for rs in runs.values() for run in rs for r in run)


def stage_summary(runs: dict[str, list[Run]]) -> list[list[str]]:
    """The same for each stage's server and Python CPU (the rows' `stages`; a tree whose
    pipeline bench does not give them shows none), against the bare relay's same stage."""
    table = []
    for width in _widths(runs):
        named = (
            _row(run, "hookline", width).get("stages", {}) for rs in runs.values() for run in rs
        )
        for stage in sorted({stage for stages in named for stage in stages}):
            # "server": Postgres's own processes (WAL writer, checkpointer ...)
            name = "Postgres's own" if stage == "server" else stage
            for meter, label in (("server_cpu_us", "server CPU"), ("python_cpu_us", "Python CPU")):
                value = partial(_stage_meter, width=width, stage=stage, meter=meter)
                figures = [value(run, "hookline") for rs in runs.values() for run in rs]
                if any(figures):  # a stage that did nothing (the fan-out at receipt) is left out
                    table.append(_compare(runs, f"{name} {label}, {width} ep", value))
    return table


def _meter(run: Run, pipeline: str, *, width: int, meter: str) -> float | None:
    row = _row(run, pipeline, width)
    if not row:
        return None
    if meter == TOTAL_CPU:
        return float(row["server_cpu_us"] + row["python_cpu_us"])
    return float(row[meter])


def _stage_meter(run: Run, pipeline: str, *, width: int, stage: str, meter: str) -> float | None:
    figure = _row(run, pipeline, width).get("stages", {}).get(stage, {}).get(meter)
    return None if figure is None else float(figure)


def _compare(
    runs: dict[str, list[Run]],
    label: str,
    value: Callable[[Run, str], float | None],
    baseline: str = "bare",
) -> list[str]:
    """One row: per tree the median ratio to the `baseline` relay (spread; none where its
    figure is 0, as the relays' log bytes are, or missing) and the median figure of the runs
    that have it, then this tree's median against REV's."""
    cells, medians = [label], {}
    for tree in ("rev", "here"):
        ratios, figures = [], []
        for run in runs.get(tree, []):
            ours, base = value(run, "hookline"), value(run, baseline)
            if ours is None:
                continue
            figures.append(ours)
            if base:
                ratios.append(ours / base)
        medians[tree] = statistics.median(figures) if figures else None
        cells.append(_spread(ratios) if ratios else "-")
        cells.append(f"{medians[tree]:,.0f}" if figures else "-")
    rev, here = medians["rev"], medians["here"]
    cells.append(f"{100 * (here - rev) / rev:+.1f} %" if rev and here is not None else "-")
    return cells


def headers(names: dict[str, str], baseline: str = "bare") -> list[str]:
    """The summary's column headers, naming the two trees and the relay of the ratios."""
    rev, here = names["rev"], names["here"]
    return ["meter", f"{rev} x {baseline}", rev, f"{here} x {baseline}", here, f"{here} vs {rev}"]


def _widths(runs: dict[str, list[Run]]) -> list[int]:
    return sorted({r["endpoints"] for rs in runs.values() for run in rs for r in run})


def _row(run: Run, pipeline: str, width: int) -> dict[str, Any]:
    """The run's row of one pipeline and width; empty when the run has none."""
    return next((r for r in run if r["pipeline"] == pipeline and r["endpoints"] == width), {})


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def main(argv: Sequence[str] | None = None) -> int:
    given = list(sys.argv[1:] if argv is None else argv)
    ours, pipeline_args = given, DEFAULT_ARGS
    if "--" in given:  # what follows is bench/pipeline.py's
        at = given.index("--")
        ours, pipeline_args = given[:at], given[at + 1 :]
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev", help="the revision to compare with (e.g. main, HEAD~1)")
    parser.add_argument("--rounds", type=int, default=3, help="runs of each tree")
    args = parser.parse_args(ours)
    names = {"rev": args.rev, "here": "this tree"}
    runs: dict[str, list[Run]] = {"rev": [], "here": []}
    with tempfile.TemporaryDirectory(prefix="hookline-against-") as scratch:
        trees = {"rev": export(args.rev, Path(scratch)), "here": REPO}
        for number, order in enumerate(turns(args.rounds), start=1):
            for tree in order:
                print(f"round {number}: {names[tree]} ...", file=sys.stderr, flush=True)
                runs[tree].append(run_pipeline(trees[tree], pipeline_args))
    print(f"bench/pipeline.py {' '.join(pipeline_args)}: {args.rounds} runs of each tree")
    print("ratios to the bare relay of the same run: median (spread); figures per delivered event")
    print_table(headers(names), summary(runs))
    if has_floor(runs):
        print("\nratios to the floor relay of the same run (`--floor`)")
        print_table(headers(names, "floor"), summary(runs, "floor"))
    print("\nper stage (Hookline's against the bare relay's same stage):")
    print_table(headers(names), stage_summary(runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
