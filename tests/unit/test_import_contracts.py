"""The import contracts of pyproject.toml (docs/decisions/0031) hold: handlers → runtime
factories → services → repositories → db, nothing Lambda runs imports the dev tooling or a
handler, and no import cycles (function-level imports count). A contract broken by a change
fails this test, with import-linter's account of the offending import chain."""

from __future__ import annotations

import os
import pkgutil
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import hookline

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
# The dev stack, the CLI and their helpers: in the package today, kept out of every contract's
# "core" until they move to a package of their own.
DEV_TOOLING = {"apiclient", "cli", "commands", "local", "localpg", "terminal"}


def contracts() -> dict[str, dict[str, object]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    return {c["id"]: c for c in config["contracts"]}


def lint_imports() -> str:
    beside = Path(sys.executable).with_name("lint-imports")
    found = str(beside) if beside.exists() else shutil.which("lint-imports")
    assert found, "lint-imports is not installed: pip install -e '.[dev]'"
    return found


def test_every_import_contract_is_kept() -> None:
    # Given this tree first on the path (not an installed copy of hookline)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "layers/core"), str(ROOT)])}
    # When import-linter checks the contracts
    answer = subprocess.run(
        [lint_imports(), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    # Then every one is kept
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "0 broken" in answer.stdout


def test_the_core_lists_name_every_module_of_the_package_but_the_dev_tooling() -> None:
    # Given the package's top-level modules
    modules = {m.name for m in pkgutil.iter_modules(hookline.__path__)}
    # Then each is either dev tooling or in both "core" lists, so a new module is covered
    for contract in ("core-without-dev-tooling", "core-without-handlers"):
        core = {
            str(m).removeprefix("hookline.")
            for m in contracts()[contract]["source_modules"]  # type: ignore[attr-defined]
            if str(m).startswith("hookline.")
        }
        assert core | DEV_TOOLING == modules, (contract, sorted(modules - core - DEV_TOOLING))
        assert not core & DEV_TOOLING
