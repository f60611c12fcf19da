"""Running a bench script as its tests do: a subprocess from the repository root, against a
fresh database on the test server (`DATABASE_URL`), its output captured."""

from __future__ import annotations

import os
import subprocess
import sys

from bench.common import REPO


def run_bench(script: str, admin_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`bench/<script>` with `args`, on a database it creates on `admin_url`'s server."""
    env = {**os.environ, "DATABASE_URL": admin_url}
    return subprocess.run(
        [sys.executable, f"bench/{script}", *args],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
