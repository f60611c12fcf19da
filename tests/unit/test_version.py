"""One version, written once (hookline.__version__, decision 0064), is what every place that
shows a version shows."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest

from hookline import __version__
from hookline_dev.cli import main

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]


def test_the_version_is_semantic() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_hookline_version_prints_it(capsys: pytest.CaptureFixture[str]) -> None:
    # When an operator asks the CLI for its version
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    # Then it prints the one version and exits 0
    assert exited.value.code == 0
    assert capsys.readouterr().out.strip() == f"hookline {__version__}"


def test_the_api_document_and_the_clients_carry_it() -> None:
    # Given the committed OpenAPI document and both clients' manifests
    document = json.loads((REPO / "docs" / "openapi.json").read_text())
    python = tomllib.loads((REPO / "clients" / "python" / "pyproject.toml").read_text())
    typescript = json.loads((REPO / "clients" / "typescript" / "package.json").read_text())
    # Then each says the same version (make clients writes it into them)
    assert document["info"]["version"] == __version__
    assert python["project"]["version"] == __version__
    assert typescript["version"] == __version__


def test_the_changelog_has_a_section_for_it() -> None:
    changelog = (REPO / "CHANGELOG.md").read_text()
    assert re.search(
        rf"^## \[{re.escape(__version__)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", changelog, re.M
    )
