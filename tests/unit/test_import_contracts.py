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
import hookline_dev

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
# What the dev stack and the CLI were called while they lived in the core package: none may
# come back to it (they live in `hookline_dev`, outside the Lambda layer; decision 0049).
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
    path = [str(ROOT / "layers/core"), str(ROOT / "devtools"), str(ROOT)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    # When import-linter checks the contracts
    answer = subprocess.run(
        [lint_imports(), "--no-cache"], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=300, check=False,
    )  # fmt: skip
    # Then every one is kept
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "0 broken" in answer.stdout


def test_the_core_lists_name_every_module_of_the_core_package() -> None:
    # Given the core package's top-level modules (what the Lambda layer bundles)
    modules = {m.name for m in pkgutil.iter_modules(hookline.__path__)}
    # Then each is in both "core" lists, so a new module is covered by both contracts
    for contract in ("core-without-dev-tooling", "core-without-handlers"):
        core = {
            str(m).removeprefix("hookline.")
            for m in contracts()[contract]["source_modules"]  # type: ignore[attr-defined]
            if str(m).startswith("hookline.")
        }
        assert core == modules, (contract, sorted(modules ^ core))
    # And the dev tooling forbidden to them is a package of its own
    assert contracts()["core-without-dev-tooling"]["forbidden_modules"] == ["hookline_dev"]


def test_the_dev_tooling_is_not_in_the_core_package() -> None:
    # Given the two packages' top-level modules
    core = {m.name for m in pkgutil.iter_modules(hookline.__path__)}
    dev = {m.name for m in pkgutil.iter_modules(hookline_dev.__path__)}
    # Then none of the dev tooling is inside `hookline`, and all of it is in `hookline_dev`
    assert not core & (DEV_TOOLING | {"hookline_dev"})
    assert dev >= DEV_TOOLING
    assert Path(hookline_dev.__file__).resolve().parent == ROOT / "devtools" / "hookline_dev"
