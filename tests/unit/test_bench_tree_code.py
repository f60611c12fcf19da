"""A bench run in an exported tree times that tree's code: `bench/common.py` puts the tree's
`layers/core` and `devtools` ahead of the virtualenv's editable install of this checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.common import REPO

pytestmark = pytest.mark.unit


def test_a_bench_in_an_exported_tree_imports_the_trees_hookline(tmp_path: Path) -> None:
    # Given a tree beside this checkout with its own `hookline` and `hookline_dev` (the
    # virtualenv's editable install points at this checkout's)
    (tmp_path / "bench").mkdir()
    shutil.copy(REPO / "bench" / "common.py", tmp_path / "bench" / "common.py")
    for package in ("layers/core/hookline", "devtools/hookline_dev"):
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "__init__.py").write_text("TREE = True\n")
    # When a script of that tree's bench imports `common` first, as the benches do
    script = (
        "import sys; sys.path.insert(0, sys.argv[1]); import common; "
        "import hookline, hookline_dev; print(hookline.__file__); print(hookline_dev.__file__)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "bench")],
        cwd=tmp_path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    # Then both packages are the tree's, not this checkout's
    assert done.stdout.split() == [
        str(tmp_path / "layers/core/hookline/__init__.py"),
        str(tmp_path / "devtools/hookline_dev/__init__.py"),
    ]
