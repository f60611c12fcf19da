"""Where the Postgres backends' CPU goes, by C function (`bench/pipeline.py --perf`).

`pg_stat_statements` times statements; it cannot tell a statement's planning inside a
function, its executor start-up, its constraints and triggers or its commit apart. Linux's
`perf` can: each phase's measured window is recorded system-wide (`perf record -a -g`,
`FREQUENCY` samples a second per CPU), and every sample of a backend is given to its stage by
the backend's pid (its application_name, as the server CPU column does). A function's figure
is inclusive: the CPU of every sample with the function anywhere on its stack, as µs per
delivered event (a sample is 1/`FREQUENCY` s).

Call chains need a server built with frame pointers: Debian's is not, so a caller's name is
often lost and only the sampled function is sure. Build one from the same sources and point
`HOOKLINE_PG_BIN` at it (docs/performance.md, "The backends by C function").
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

FREQUENCY = 999

# What is read off every stage: a name, then the C functions whose stacks it counts (a
# sample counts once however many of them it holds). They overlap: a PL/pgSQL function's
# inserts are inside its call, its commit is not.
PARTS = (
    ("the whole backend", ("PostgresMain",)),
    ("commit (and its WAL flush)", ("CommitTransaction",)),
    ("WAL flush", ("XLogFlush",)),
    ("parsing and analysis", ("raw_parser", "parse_analyze_varparams",
                              "parse_analyze_fixedparams")),
    ("planning (statements and functions')", ("pg_plan_queries",)),
    ("PL/pgSQL functions", ("plpgsql_call_handler",)),
    ("executor start-up", ("standard_ExecutorStart",)),
    ("inserts", ("ExecInsert",)),
    ("updates", ("ExecUpdate",)),
    ("CHECK constraints", ("ExecConstraints",)),
    ("triggers' WHEN", ("TriggerEnabled",)),
    ("expression text read back", ("stringToNode",)),
    ("index inserts", ("ExecInsertIndexTuples",)),
    ("client protocol", ("pq_getbyte", "socket_flush")),
)  # fmt: skip


@dataclass
class Recording:
    """A running `perf record`, and the FIFOs it is told to start on."""

    process: subprocess.Popen[bytes]
    control: Path


def start(path: Path, *, ready_within: float = 60.0) -> Recording:
    """Record every CPU into `path` until `stop`; returns once perf records, not once it is
    started. perf starts with its events off and says `ack` when told to turn them on
    (`--control`): on a busy machine it takes seconds to read every process's maps first,
    and what ran meanwhile would be missing from the recording."""
    perf = shutil.which("perf")
    if perf is None:
        raise SystemExit("--perf needs Linux's perf (Debian's linux-perf)")
    control = Path(tempfile.mkdtemp(prefix="hookline-perf-"))
    ctl, ack = control / "ctl", control / "ack"
    os.mkfifo(ctl)
    os.mkfifo(ack)
    process = subprocess.Popen(
        [perf, "record", "-a", "-g", "-F", str(FREQUENCY), "-o", str(path), "--quiet",
         "--delay=-1", f"--control=fifo:{ctl},{ack}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    recording = Recording(process, control)
    # Both ends opened read-write, so that neither open waits for perf's.
    ctl_fd, ack_fd = os.open(ctl, os.O_RDWR), os.open(ack, os.O_RDWR)
    try:
        os.write(ctl_fd, b"enable\n")
        answered, _, _ = select.select([ack_fd], [], [], ready_within)
        if not answered or not os.read(ack_fd, 16).startswith(b"ack"):
            stop(recording)
            raise RuntimeError(f"perf record did not start recording within {ready_within} s")
    finally:
        os.close(ctl_fd)
        os.close(ack_fd)
    return recording


def stop(recording: Recording) -> None:
    """End a recording and wait for its file."""
    recording.process.send_signal(signal.SIGINT)
    recording.process.wait(timeout=120)
    shutil.rmtree(recording.control, ignore_errors=True)


def stacks(path: Path) -> list[tuple[int, list[str]]]:
    """Every sample of a `postgres` process in `path`: (pid, the functions on its stack)."""
    script = subprocess.run(
        ["perf", "script", "-i", str(path), "--comm", "postgres", "-F", "pid,ip,sym"],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    samples: list[tuple[int, list[str]]] = []
    for block in script.split("\n\n"):
        lines = block.strip("\n").splitlines()
        if not lines:
            continue
        frames = [line.split()[1] for line in lines[1:] if len(line.split()) > 1]
        samples.append((int(lines[0].split()[0]), frames))
    return samples


def by_stage(path: Path, stage_of_pid: dict[int, str], events: int) -> dict[str, dict[str, float]]:
    """Each stage's PARTS as µs per delivered event."""
    counts: dict[str, Counter[str]] = {}
    for pid, frames in stacks(path):
        stage = stage_of_pid.get(pid)
        if stage is None:  # not in the phase's reading of the server (started after it)
            continue
        held = set(frames)
        tally = counts.setdefault(stage, Counter())
        for name, functions in PARTS:
            if held.intersection(functions):
                tally[name] += 1
    per_sample_us = 1e6 / FREQUENCY
    return {
        stage: {name: tally[name] * per_sample_us / events for name, _ in PARTS}
        for stage, tally in counts.items()
    } if events else {}  # fmt: skip
