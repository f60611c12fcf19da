"""Hookline ships under Apache-2.0: every dependency installed beside it (Python, and the npm
packages of the TypeScript client) is under a licence compatible with that, or is one of the
exceptions docs/licences.md records; the vendored htmx keeps its own licence file."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

REPO = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pip-licenses"]
# What each exception is under (docs/licences.md): if one changes, the decision is revisited.
EXCEPTIONS = {
    "psycopg": "LGPL-3.0-only",
    "psycopg-binary": "LGPL-3.0-only",
    "psycopg-pool": "LGPL-3.0-only",
    "docutils": "",  # dev only (twine's readme check): public domain, BSD-2-Clause, GPL parts
    "atheris": "",  # dev only (fuzzing); Apache-2.0 upstream, no licence in its metadata
}
NPM_ALLOWED = {
    "MIT",
    "Apache-2.0",
    "BSD-2-Clause",
    "BSD-3-Clause",
    "ISC",
    "0BSD",
    "Unlicense",
    "Python-2.0",
}
STRONG_COPYLEFT = ("GPL", "AGPL", "SSPL", "EUPL", "CC-BY-SA")


def test_every_python_dependency_has_an_allowed_licence() -> None:
    # Given every distribution in this environment and the allowlist in pyproject.toml
    # When pip-licenses checks them
    result = subprocess.run(
        [Path(sys.executable).parent / "pip-licenses", "--format=json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=False,
    )
    # Then none is under a licence outside the list
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) > 50


def test_the_allowlist_holds_no_copyleft_licence_beyond_file_level() -> None:
    # Given the allowlist
    allowed = [name.strip() for name in CONFIG["allow-only"].split(";")]
    # Then no strong copyleft (nor LGPL) licence is in it: those are exceptions, by name
    assert not [name for name in allowed if any(c in name.upper() for c in STRONG_COPYLEFT)]


def test_the_exceptions_are_the_packages_and_licences_recorded() -> None:
    # Given the packages the check ignores (besides Hookline's own two)
    ignored = set(CONFIG["ignore-packages"]) - {"hookline", "hookline-client"}
    # Then each is a recorded exception, and the LGPL ones are still under the LGPL
    assert ignored == set(EXCEPTIONS)
    for name, expected in EXCEPTIONS.items():
        if expected:
            assert metadata.metadata(name)["License-Expression"] == expected


def test_every_npm_package_of_the_typescript_client_has_an_allowed_licence() -> None:
    # Given the TypeScript client's installed packages (npm ci from its lock file)
    modules = REPO / "clients" / "typescript" / "node_modules"
    manifests = [
        *modules.glob("*/package.json"),
        *modules.glob("@*/*/package.json"),
    ]
    assert manifests, "clients/typescript/node_modules is missing: make install (npm ci)"
    # Then each is under a permissive licence
    found = {m.parent.relative_to(modules).as_posix(): json.loads(m.read_text()) for m in manifests}
    refused = {
        name: manifest.get("license")
        for name, manifest in found.items()
        if not set(str(manifest.get("license", "")).strip("()").split(" OR ")) & NPM_ALLOWED
    }
    assert not refused


def test_hookline_and_its_packages_declare_apache_2() -> None:
    # Given the licence files at the root and the packages' metadata
    licence = (REPO / "LICENSE").read_text()
    package = json.loads((REPO / "clients" / "typescript" / "package.json").read_text())
    client = tomllib.loads((REPO / "clients" / "python" / "pyproject.toml").read_text())
    # Then the full Apache-2.0 text is there and every package says Apache-2.0
    assert "Apache License" in licence and "Version 2.0, January 2004" in licence
    assert "END OF TERMS AND CONDITIONS" in licence
    root = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert root["project"]["license"] == "Apache-2.0"
    assert client["project"]["license"] == "Apache-2.0"
    assert package["license"] == "Apache-2.0"
    # And the vendored htmx keeps its own (Zero-Clause BSD) licence, named in NOTICE
    static = REPO / "layers" / "core" / "hookline" / "console" / "static"
    assert "Zero-Clause BSD" in (static / "htmx-LICENSE.txt").read_text()
    assert "htmx" in (REPO / "NOTICE").read_text()
