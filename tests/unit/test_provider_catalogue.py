"""docs/providers.md is the registry's catalogue: regenerated, it must not change."""

from __future__ import annotations

from pathlib import Path

import pytest

from hookline.verifiers.catalogue import render
from hookline.verifiers.schemes import SCHEMES

PAGE = Path(__file__).resolve().parents[2] / "docs" / "providers.md"
pytestmark = pytest.mark.unit


def test_the_committed_catalogue_matches_the_registry() -> None:
    # Given the committed page / When the registry renders it / Then they are the same
    assert PAGE.read_text() == render(), (
        "docs/providers.md is stale: PYTHONPATH=layers/core .venv/bin/python "
        "-m hookline.verifiers.catalogue > docs/providers.md"
    )


def test_every_scheme_has_a_row() -> None:
    page = PAGE.read_text()
    assert all(f"`{scheme}`" in page for scheme in SCHEMES)
