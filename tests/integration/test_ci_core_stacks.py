"""CI's crash report (.ci/core-stacks): a test process that segfaults in a C extension leaves
a core file, and the end of the CI run prints its C stack, so the crash names its library
and function instead of only the Python line that called into it."""

from __future__ import annotations

import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(shutil.which("gdb") is None, reason="gdb is not installed"),
]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / ".ci" / "core-stacks"


def allow_cores() -> None:
    _, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))


def report(marker: Path, where: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), str(marker), str(where)],
        cwd=REPO, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_a_crash_during_the_run_is_reported_with_its_c_stack(tmp_path: Path) -> None:
    # Given a run that started, then a process that dies of a segfault inside a C function
    marker = tmp_path / "started"
    marker.touch()
    crashed = subprocess.run(
        [sys.executable, "-c", "import ctypes; ctypes.string_at(0)"],
        cwd=tmp_path, preexec_fn=allow_cores, capture_output=True, timeout=60, check=False,
    )  # fmt: skip
    assert crashed.returncode == -signal.SIGSEGV
    core = tmp_path / "core"
    if not core.exists():
        pytest.skip("this machine's core_pattern or core limit keeps no core file here")
    # When the run ends
    printed = report(marker, tmp_path)
    # Then its output names the C function that crashed, and the core file is gone
    assert printed.returncode == 0, printed.stderr
    assert f"the C stack of the crash that left {core}" in printed.stdout
    # (a frame of the stack: the command line gdb repeats names it too)
    assert re.search(r"^#\d+ .*\bstring_at \(", printed.stdout, re.MULTILINE), printed.stdout
    assert not core.exists()


def test_a_run_without_a_crash_prints_nothing(tmp_path: Path) -> None:
    # Given a run that started, and a core file older than it (another run's; a day old, so
    # that the CI run around this test does not take it for one of its own either)
    older = tmp_path / "core"
    older.write_bytes(b"not ours")
    a_day_ago = time.time() - 86400
    os.utime(older, (a_day_ago, a_day_ago))
    marker = tmp_path / "started"
    marker.touch()
    # When the run ends, nothing is printed and the older file is left alone
    printed = report(marker, tmp_path)
    assert (printed.returncode, printed.stdout) == (0, "")
    assert (tmp_path / "core").exists()
