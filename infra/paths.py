"""Where the app's sources are, relative to the repository root (the CDK app's working dir)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
FUNCTIONS_DIR = REPO_ROOT / "functions"
CORE_LAYER_DIR = REPO_ROOT / "layers" / "core"
PYPROJECT = REPO_ROOT / "pyproject.toml"


def function_dir(name: str) -> Path:
    """The code folder (asset root) of the Lambda function `name`."""
    return FUNCTIONS_DIR / name
