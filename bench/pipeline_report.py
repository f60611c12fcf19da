"""What one phase of the pipeline bench (bench/pipeline.py) measured, and its tables: per
delivered event, beside the bare relay's phase of the same width (and the floor's, with
--floor), with issue 24's targets read off the ratios; and, with --wal-mix, the phase's WAL
by relation and record kind."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from common import print_table
from walmix import mix_kinds, mix_rows, wal_mix

# Issue 24: (meter, ratio to the bare relay, whether the ratio is a floor)
RATIO_TARGETS = (("server_cpu_us", 2.0, False), ("wal_bytes", 2.0, False),
                 ("python_cpu_us", 2.0, False), ("events_per_s", 0.6, True))  # fmt: skip
LOG_BYTES_TARGET = 1000


@dataclass
class Phase:
    """What one pipeline at one process count and one fan-out width measured."""

    pipeline: str
    processes: int
    endpoints: int = 1
    events: int = 0
    seconds: float = 0.0
    server_cpu: dict[str, float] = field(default_factory=dict)  # by stage, + "server"
    python_cpu: dict[str, float] = field(default_factory=dict)
    trips: dict[str, int] = field(default_factory=dict)
    log_bytes: dict[str, int] = field(default_factory=dict)
    deliver_batches: tuple[int, int] = (0, 0)  # messages handled, batches that held any
    wal_bytes: int = 0
    commits: int = 0
    statements: list[dict[str, Any]] = field(default_factory=list)  # pg_stat_statements
    wal_range: tuple[str, str] = ("", "")  # where the phase's WAL starts and ends
    # --perf: by stage, bench/backend_perf.py's parts as µs per delivered event
    backend_functions: dict[str, dict[str, float]] = field(default_factory=dict)

    def per_event(self, value: float) -> float:
        """`value` per delivered event."""
        return value / self.events if self.events else float("nan")

    def row(self) -> dict[str, Any]:
        """The --json row: per delivered event."""
        return {
            "pipeline": self.pipeline, "processes": self.processes, "endpoints": self.endpoints,
            "events_per_s": round(self.events / self.seconds, 1) if self.seconds else None,
            "server_cpu_us": round(self.per_event(sum(self.server_cpu.values())) * 1e6)
            if self.server_cpu else None,
            "wal_bytes": round(self.per_event(self.wal_bytes)),
            "commits": round(self.per_event(self.commits), 2),
            "python_cpu_us": round(self.per_event(sum(self.python_cpu.values())) * 1e6),
            "log_bytes": round(self.per_event(sum(self.log_bytes.values()))),
            # beside the meters: each stage's share, for telling a change's stage apart
            "stages": {s: self.stage_cpu(s) for s in sorted({*self.python_cpu, *self.server_cpu})},
            "messages_per_batch": round(self.deliver_batches[0] / self.deliver_batches[1], 2)
            if self.deliver_batches[1] else None,
        }  # fmt: skip

    def stage_cpu(self, stage: str) -> dict[str, float]:
        """One stage's server and Python CPU (µs) and round trips, per delivered event."""
        return {
            "server_cpu_us": round(self.per_event(self.server_cpu.get(stage, 0.0)) * 1e6),
            "python_cpu_us": round(self.per_event(self.python_cpu.get(stage, 0.0)) * 1e6),
            "round_trips": round(self.per_event(self.trips.get(stage, 0)), 2),
        }


def report(phases: list[Phase]) -> None:
    """The tables: throughput and cost per delivered event, then per stage."""
    rows = []
    for ph in phases:
        server = sum(ph.server_cpu.values())
        rows.append([
            ph.pipeline, ph.processes, ph.endpoints, ph.events, f"{ph.events / ph.seconds:.0f}",
            f"{ph.per_event(server) * 1e6:.0f}" if ph.server_cpu else "-",
            f"{ph.per_event(ph.wal_bytes):.0f}", f"{ph.per_event(ph.commits):.2f}",
            f"{ph.per_event(sum(ph.trips.values())):.1f}",
            f"{ph.per_event(sum(ph.python_cpu.values())) * 1e6:.0f}",
            f"{ph.per_event(sum(ph.log_bytes.values())):.0f}",
        ])  # fmt: skip
    print_table(["pipeline", "procs/stage", "endpoints", "delivered", "events/s",
                 "server CPU µs/ev", "WAL B/ev", "commits/ev", "round trips/ev",
                 "Python CPU µs/ev", "log B/ev"], rows)  # fmt: skip
    print(
        "\nper stage, per delivered event (server CPU µs / round trips / Python CPU µs / log B);"
        " messages/batch: the mean of the deliver stage's batches:"
    )
    stage_rows = []
    for ph in phases:
        stages = sorted(set(ph.python_cpu) | set(ph.server_cpu))
        cells = [
            f"{s}: {ph.per_event(ph.server_cpu.get(s, 0.0)) * 1e6:.0f} / "
            f"{ph.per_event(ph.trips.get(s, 0)):.1f} / "
            f"{ph.per_event(ph.python_cpu.get(s, 0.0)) * 1e6:.0f} / "
            f"{ph.per_event(ph.log_bytes.get(s, 0)):.0f}"
            for s in stages
        ]
        messages, batches = ph.deliver_batches
        stage_rows.append(
            [
                ph.pipeline,
                ph.processes,
                ph.endpoints,
                f"{messages / batches:.1f}" if batches else "-",
                "; ".join(cells),
            ]
        )
    print_table(["pipeline", "procs/stage", "endpoints", "messages/batch", "stages"], stage_rows)
    print()
    for ours in (ph for ph in phases if ph.pipeline == "hookline"):
        for against in ("bare", "floor"):
            theirs = [ph for ph in phases if ph.pipeline == against and
                      (ph.processes, ph.endpoints) == (ours.processes, ours.endpoints)]  # fmt: skip
            if theirs:
                print(
                    f"{ours.processes} procs/stage, {ours.endpoints} endpoints, "
                    f"x {against}: " + "; ".join(target_cells(ours.row(), theirs[0].row()))
                )
    for ph in phases:
        if not ph.statements:
            continue
        print(f"\n{ph.pipeline}, {ph.processes} procs/stage, {ph.endpoints} endpoints: "
              "costliest statements (pg_stat_statements), per delivered event")  # fmt: skip
        print_table(
            ["statement", "calls/ev", "plan µs/ev", "exec µs/ev", "plan µs/call",
             "exec µs/call", "blks hit/ev", "WAL B/ev"],
            [[st["query"][:70], f"{ph.per_event(st['calls']):.2f}",
              f"{ph.per_event(st['plan_ms']) * 1e3:.0f}",
              f"{ph.per_event(st['exec_ms']) * 1e3:.0f}",
              f"{st['plan_ms'] * 1e3 / st['calls']:.0f}",
              f"{st['exec_ms'] * 1e3 / st['calls']:.0f}",
              f"{ph.per_event(st['hit']):.0f}", f"{ph.per_event(int(st['wal'])):.0f}"]
             for st in ph.statements if st["calls"]],
        )  # fmt: skip


def target_cells(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """Issue 24's meters of `ours` against `theirs` (a --json row each), read off its targets."""
    cells = []
    for key, target, lower in RATIO_TARGETS:
        if ours[key] is None or not theirs[key]:
            continue
        ratio = ours[key] / theirs[key]
        met = ratio >= target if lower else ratio <= target
        cells.append(f"{key} {ratio:.2f}x ({'>=' if lower else '<='} {target:g}x: "
                     f"{'met' if met else 'MISSED'})")  # fmt: skip
    met = ours["log_bytes"] <= LOG_BYTES_TARGET
    cells.append(f"log_bytes {ours['log_bytes']} (<= {LOG_BYTES_TARGET}: "
                 f"{'met' if met else 'MISSED'})")  # fmt: skip
    return cells


def report_wal_mix(url: str, phases: list[Phase]) -> None:
    """Each phase's WAL per delivered event, by table and index, then by record kind."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        for ph in phases:
            print(f"\n{ph.pipeline}, {ph.processes} procs/stage, {ph.endpoints} endpoints: "
                  "WAL by relation (pg_waldump), per delivered event")  # fmt: skip
            mix = wal_mix(conn, *ph.wal_range)
            print_table(["relation", "WAL B/ev", "share"], mix_rows(mix, ph.events))
            if ph.events:
                print(mix_kinds(mix, ph.events))


def report_backend_functions(phases: list[Phase]) -> None:
    """--perf: per width, each pipeline's stages side by side, their backends' CPU by part."""
    from backend_perf import PARTS

    for width in sorted({ph.endpoints for ph in phases}):
        shown = [ph for ph in phases if ph.endpoints == width and ph.backend_functions]
        columns = [(ph, stage) for ph in shown for stage in sorted(ph.backend_functions)
                   if stage != "server"]  # fmt: skip
        if not columns:
            continue
        print(f"\n{width} endpoints: the backends' CPU by C function (perf, inclusive), "
              "µs per delivered event")  # fmt: skip
        print_table(
            ["part", *(f"{ph.pipeline} {stage}" for ph, stage in columns)],
            [[name, *(f"{ph.backend_functions[stage][name]:.0f}" for ph, stage in columns)]
             for name, _ in PARTS],
        )  # fmt: skip
