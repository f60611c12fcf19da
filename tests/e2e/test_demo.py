"""`hookline demo` against the running dev stack: it shows the whole job and it is true."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.conftest import Stack

pytestmark = pytest.mark.e2e


def test_the_demo_shows_accepted_rejected_deduplicated_retried_and_delivered(
    stack: Stack,
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "hookline_dev.cli", "demo", "--state-dir", str(stack.dev.state_dir)],
        env={**os.environ, **stack.state.env()},
        cwd=stack.dev.workdir,
        capture_output=True,
        text=True,
        timeout=90,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "→ 401  rejected" in out
    assert "deduplicated: same id" in out
    assert "answered 503  signature valid" in out
    assert "delivered after 2 attempts" in out
    assert (
        "Summary: accepted 2 · rejected 1 (401) · deduplicated 1 · retried 1 · delivered 2 of 2"
        in out
    )
