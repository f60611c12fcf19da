"""The core layer is built without Docker: pip fetches arm64 wheels for the Lambda Python."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from hookline.aws import sdk_is_supported
from hookline.config import HooklineConfig
from infra.components.layer import (
    LAMBDA_DIRECT_UPLOAD_ZIPPED_BYTES,
    LAMBDA_UNZIPPED_LIMIT_BYTES,
    MAX_LAYER_BYTES,
    RUNTIME_PROVIDED,
    PipLayerBundling,
    layer_hash,
    layer_size,
    pip_command,
    runtime_dependencies,
    runtime_interpreter,
)
from infra.paths import REPO_ROOT

pytestmark = pytest.mark.infra


def test_layer_ships_exactly_the_pinned_runtime_dependencies() -> None:
    deps = runtime_dependencies()
    names = {d.split("==")[0].split("[")[0] for d in deps}
    needed = {"aws-lambda-powertools", "psycopg", "psycopg-pool", "httpx"}
    # jsonschema validates event-type schemas; google-re2 runs their patterns (decision 0023).
    assert needed | {"jsonschema", "google-re2", "cryptography"} <= names
    assert all("==" in d for d in deps), "layer dependencies must be pinned"


def test_pip_installs_only_arm64_binary_wheels_for_the_lambda_python(tmp_path: Path) -> None:
    command = pip_command(tmp_path, "3.12", ["httpx==0.28.1"])
    joined = " ".join(command)
    assert "--only-binary=:all:" in command
    assert "--python-version 3.12" in joined
    assert "--platform manylinux2014_aarch64" in joined
    assert f"--target {tmp_path}" in joined
    assert command[-1] == "httpx==0.28.1"


def test_layer_hash_follows_sources_pins_and_config() -> None:
    config = HooklineConfig()
    deps = runtime_dependencies()
    same = layer_hash(config, deps)
    assert layer_hash(config, deps) == same
    assert layer_hash(config, [*deps, "extra==1"]) != same
    changed = dataclasses.replace(config, delivery_deadline_hours=48)
    assert layer_hash(changed, deps) != same


def test_bundler_lays_out_package_and_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given pip replaced by a recorder (the real download needs the network)
    calls: list[list[str]] = []
    monkeypatch.setattr(
        "infra.components.layer.subprocess.run", lambda cmd, check: calls.append(cmd)
    )
    config = HooklineConfig()
    # When the local bundler runs
    assert PipLayerBundling(config, ["httpx==0.28.1"]).try_bundle(str(tmp_path)) is True
    # Then pip targeted python/, and the package and its SQL and config are in place
    assert calls and str(tmp_path / "python") in calls[0]
    assert (tmp_path / "python" / "hookline" / "config.py").is_file()
    assert list((tmp_path / "python" / "hookline" / "migrations").glob("*.sql"))
    assert not list((tmp_path / "python").rglob("__pycache__"))
    loaded = HooklineConfig.from_dict(
        json.loads((tmp_path / "hookline" / "config.json").read_text())
    )
    assert loaded == config


def test_the_layer_carries_the_license_and_notice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given pip replaced by a recorder (only the files the bundler copies matter here)
    monkeypatch.setattr("infra.components.layer.subprocess.run", lambda cmd, check: None)
    # When the local bundler lays out the layer
    assert PipLayerBundling(HooklineConfig(), []).try_bundle(str(tmp_path)) is True
    # Then /opt/hookline/ holds the project's LICENSE and NOTICE, as the wheel does
    for name in ("LICENSE", "NOTICE"):
        bundled = tmp_path / "hookline" / name
        assert bundled.read_bytes() == (REPO_ROOT / name).read_bytes(), name
    assert "Apache License" in (tmp_path / "hookline" / "LICENSE").read_text()


def test_the_layer_holds_no_dev_tooling(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Given pip replaced by a recorder (only the package copy matters here)
    monkeypatch.setattr("infra.components.layer.subprocess.run", lambda cmd, check: None)
    # When the local bundler lays out the layer
    assert PipLayerBundling(HooklineConfig(), []).try_bundle(str(tmp_path)) is True
    # Then what Lambda runs is there, and none of the dev stack or the CLI (decision 0049)
    site = tmp_path / "python"
    assert (site / "hookline" / "runtime.py").is_file()
    assert not list(tmp_path.rglob("hookline_dev"))
    for name in ("local", "commands", "cli.py", "apiclient.py", "terminal.py", "localpg.py"):
        assert not (site / "hookline" / name).exists(), name


@pytest.fixture(scope="module")
def built_layer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The layer folder as `make synth` builds it: real pip, the pinned arm64 wheels."""
    out = tmp_path_factory.mktemp("layer")
    PipLayerBundling(HooklineConfig(), runtime_dependencies()).try_bundle(str(out))
    return out


def test_layer_leaves_out_the_sdk_the_lambda_runtime_ships(built_layer: Path) -> None:
    # Given the layer built from the pinned dependencies (boto3 and botocore among them)
    site = built_layer / "python"
    # Then the SDK Lambda's runtime provides is not in it, and the rest is
    assert not (site / "botocore").exists() and not (site / "boto3").exists()
    assert not list(site.glob("boto*.dist-info")) and not (site / "s3transfer").exists()
    for package in ("httpx", "psycopg", "aws_lambda_powertools", "hookline", "jsonschema"):
        assert (site / package).is_dir(), package
    # And it is unzipped within its budget, half of Lambda's 250 MiB limit (82 MB before)
    assert layer_size(built_layer) <= MAX_LAYER_BYTES


def test_layer_ships_bytecode_the_lambda_runtime_loads(built_layer: Path) -> None:
    # Given the layer built where a Python of the Lambda runtime's version is found
    version = HooklineConfig().infrastructure.python_version
    if runtime_interpreter(version) is None:
        pytest.skip(f"no Python {version} on this machine: the layer ships sources only")
    site = built_layer / "python"
    tag = "cpython-" + version.replace(".", "")
    # Then every module has that version's bytecode, so a cold start compiles none of them
    sources = [p for p in site.rglob("*.py") if "__pycache__" not in p.parts]
    missing = [
        p for p in sources if not (p.parent / "__pycache__" / f"{p.stem}.{tag}.pyc").is_file()
    ]
    assert sources and missing == []
    # And it is never checked against the sources' times (PEP 552: hash-based, unchecked),
    # which CDK's zip of the asset does not keep
    compiled = site / "hookline" / "__pycache__" / f"runtime.{tag}.pyc"
    assert compiled.read_bytes()[4:8] == b"\x01\x00\x00\x00"


def test_layer_fits_lambdas_size_limits(built_layer: Path, tmp_path: Path) -> None:
    # Given the layer built from the pinned dependencies, zipped as CDK zips an asset
    archive = Path(shutil.make_archive(str(tmp_path / "layer"), "zip", built_layer))
    # Then the zip could even be uploaded directly (50 MiB), and the layer leaves at least
    # half of the 250 MiB unzipped limit to the function's own code and other layers
    assert archive.stat().st_size <= LAMBDA_DIRECT_UPLOAD_ZIPPED_BYTES
    assert MAX_LAYER_BYTES <= LAMBDA_UNZIPPED_LIMIT_BYTES // 2
    assert layer_size(built_layer) <= MAX_LAYER_BYTES
    print(
        f"layer: {layer_size(built_layer) / 1e6:.1f} MB unzipped, "
        f"{archive.stat().st_size / 1e6:.1f} MB zipped"
    )


def test_the_local_sdk_pin_is_one_hookline_supports() -> None:
    # The runtime's SDK is used on Lambda; tests run on the pinned one, which must be supported
    import botocore

    assert set(RUNTIME_PROVIDED) >= {"boto3", "botocore"}
    assert sdk_is_supported(botocore.__version__)
    assert sdk_is_supported("1.40.4") and not sdk_is_supported("1.29.165")
