"""Generate the typed clients from docs/openapi.json (`make clients`; decision 0064).

    python clients/generate.py               # regenerate clients/python and clients/typescript
    python clients/generate.py --out DIR     # generate into DIR/python and DIR/typescript

clients/python is made whole by openapi-python-client (config and templates in
clients/generator/python); clients/typescript/src/schema.ts by openapi-typescript (from
clients/typescript/node_modules: `npm ci` there first). The files in HAND_WRITTEN are not
generated and are kept as they are; tests/unit/test_clients.py fails when the committed
clients differ from what this script makes of the current document.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLIENTS = REPO / "clients"
DOCUMENT = REPO / "docs" / "openapi.json"
GENERATOR = CLIENTS / "generator" / "python"
TS = CLIENTS / "typescript"
TS_SCHEMA = Path("src") / "schema.ts"

# Paths under clients/python that people write; everything else there is generated.
HAND_WRITTEN = {Path("hookline_client") / "auth.py"}


def generate_python(out: Path) -> None:
    """openapi-python-client's project for the document, in `out` (which must not exist)."""
    bin_dir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [
        str(bin_dir / "openapi-python-client"), "generate",
        "--path", str(DOCUMENT),
        "--config", str(GENERATOR / "config.yaml"),
        "--custom-template-path", str(GENERATOR / "templates"),
        "--meta", "pdm",
        "--output-path", str(out),
    ]  # fmt: skip
    result = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    # The generator reports problems with the document as warnings and still exits 0.
    if result.returncode != 0 or "Warning" in result.stdout or "Error" in result.stdout:
        raise SystemExit(f"openapi-python-client failed:\n{result.stdout}\n{result.stderr}")
    shutil.copy(REPO / "LICENSE", out / "LICENSE")


def generate_typescript(out: Path) -> None:
    """openapi-typescript's types for the document, as `out`/src/schema.ts."""
    binary = TS / "node_modules" / ".bin" / "openapi-typescript"
    if not binary.exists():
        raise SystemExit(f"{binary} is missing: run `npm ci` in {TS}")
    target = out / TS_SCHEMA
    target.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        # Fields with a default may be left out of a request (--default-non-nullable false).
        [str(binary), str(DOCUMENT), "--default-non-nullable", "false", "--output", str(target)],
        cwd=TS,
        capture_output=True,
        check=True,
    )


def generate(out: Path) -> None:
    """Both clients' generated files under `out` (python/, typescript/)."""
    generate_python(out / "python")
    generate_typescript(out / "typescript")


def generated_files(root: Path) -> dict[Path, bytes]:
    """The generated files of a clients/python tree, by relative path."""
    skip = {"__pycache__", ".ruff_cache", "build", "dist"}
    return {
        path.relative_to(root): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not skip.intersection(path.relative_to(root).parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
        and path.relative_to(root) not in HAND_WRITTEN
    }


def install(fresh: Path) -> None:
    """Replace the committed clients' generated files with `fresh` ones."""
    python = CLIENTS / "python"
    for path in generated_files(python) if python.exists() else {}:
        (python / path).unlink()
    for path, content in generated_files(fresh / "python").items():
        (python / path).parent.mkdir(parents=True, exist_ok=True)
        (python / path).write_bytes(content)
    shutil.copy(fresh / "typescript" / TS_SCHEMA, TS / TS_SCHEMA)
    # The npm package carries the document's version, as the Python client does.
    manifest = TS / "package.json"
    package = json.loads(manifest.read_text())
    package["version"] = json.loads(DOCUMENT.read_text())["info"]["version"]
    manifest.write_text(json.dumps(package, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, help="generate here instead of into clients/")
    args = parser.parse_args()
    if args.out is not None:
        generate(args.out)
        return
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        install(Path(tmp))


if __name__ == "__main__":
    main()
