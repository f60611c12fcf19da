"""The committed clients are what `make clients` makes of the committed OpenAPI document, and
the hand-written parts (the TypeScript entry point, its e2e script) type-check against the
generated types: a change to the API that is not regenerated into the clients fails here."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from clients.generate import CLIENTS, TS, TS_SCHEMA, generate, generated_files

pytestmark = pytest.mark.integration

REGENERATE = "make clients"


def test_the_committed_clients_are_what_the_document_generates(tmp_path: Path) -> None:
    # Given the committed clients and the committed docs/openapi.json
    committed = generated_files(CLIENTS / "python")
    # When both clients are generated afresh from the document
    generate(tmp_path)
    fresh = generated_files(tmp_path / "python")
    # Then the Python client has the same files with the same bytes
    assert sorted(map(str, fresh)) == sorted(map(str, committed)), f"files differ: {REGENERATE}"
    stale = [str(path) for path in fresh if fresh[path] != committed[path]]
    assert not stale, f"clients/python is stale ({stale[:5]}...): run {REGENERATE}"
    # And the TypeScript types too
    assert (tmp_path / "typescript" / TS_SCHEMA).read_bytes() == (TS / TS_SCHEMA).read_bytes(), (
        f"clients/typescript/{TS_SCHEMA} is stale: run {REGENERATE}"
    )


def test_the_typescript_client_type_checks_against_the_generated_types() -> None:
    # Given the hand-written entry point and the e2e script, which call the API's paths
    tsc = TS / "node_modules" / ".bin" / "tsc"
    # When TypeScript checks them against the generated schema
    result = subprocess.run(
        [str(tsc), "-p", str(TS), "--noEmit"], capture_output=True, text=True, check=False
    )
    # Then every path, parameter and body they use exists with the types they give it
    assert result.returncode == 0, result.stdout + result.stderr
