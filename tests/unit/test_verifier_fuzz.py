"""The coverage-guided verifier fuzzer (tests/fuzz/verifiers.py, atheris/libFuzzer) in CI: a
fixed-seed run over every provider finds nothing, and the same run finds a planted forgery,
which shows its oracle is not vacuous."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("atheris", reason="atheris ships wheels for Linux x86_64 only")

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
RUNS = int(os.environ.get("HOOKLINE_ATHERIS_RUNS", "100000"))


def fuzz(tmp_path: Path, runs: int, sabotage: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOOKLINE_FUZZ_SABOTAGE": "1" if sabotage else "0"}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.fuzz.verifiers",
            f"-runs={runs}",
            "-seed=1",
            f"-artifact_prefix={tmp_path}/",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_verifiers_survive_a_coverage_guided_run(tmp_path: Path) -> None:
    # When every provider's verifier is fuzzed for RUNS inputs
    run = fuzz(tmp_path, RUNS)

    # Then libFuzzer finished them all: no crash, no forgery, no replay-window bypass
    assert run.returncode == 0, run.stderr[-3000:]
    assert f"Done {RUNS} runs" in run.stderr
    assert not list(tmp_path.glob("crash-*"))


def test_the_fuzzer_catches_a_verifier_that_skips_its_signature_check(tmp_path: Path) -> None:
    # Given GitHub's verifier with its signature check removed (a planted bug)
    # When the same fuzzer runs
    run = fuzz(tmp_path, RUNS, sabotage=True)

    # Then it stops on a forgery and keeps the input that shows it
    assert run.returncode != 0
    output = run.stdout + run.stderr  # atheris prints the exception on stdout
    assert "Forgery: github: accepted a body that was not the one signed" in output
    assert list(tmp_path.glob("crash-*"))
