"""The core layer: the `hookline` package, its runtime dependencies and the deployment config.

Bundled without Docker: pip downloads the arm64 manylinux wheels for the Lambda Python version
(`--platform ... --only-binary=:all:`), so a laptop or CI without Docker can synthesize and
deploy. See docs/decisions/0005-layer-bundling-without-docker.md.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import jsii
from aws_cdk import AssetHashType, BundlingOptions, DockerImage, ILocalBundling
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from hookline.config import HooklineConfig
from infra.paths import CORE_LAYER_DIR, PYPROJECT, REPO_ROOT

# Lambda's Python runtimes on arm64 run Amazon Linux 2023 (glibc 2.34): both tags load there.
PLATFORMS = ("manylinux_2_28_aarch64", "manylinux2014_aarch64")
CONFIG_PATH_IN_LAYER = "/opt/hookline/config.json"
# Apache-2.0 asks every copy to carry them: the wheel does, and so does the layer, in
# /opt/hookline/ next to the config.
LEGAL_FILES = (REPO_ROOT / "LICENSE", REPO_ROOT / "NOTICE")
# The AWS SDK the Lambda Python runtime already ships: pip resolves them (the pins keep local
# runs honest) but the layer leaves them out, 31 MB of 81 (docs/decisions/0047).
RUNTIME_PROVIDED = ("boto3", "botocore", "s3transfer", "jmespath", "python-dateutil")
# Lambda's limits (docs/performance.md, "Layer size budget"): a function's code and all its
# layers, unzipped, must be smaller than 250 MiB (CreateFunction answers "Unzipped size must be
# smaller than 262144000 bytes"); a zip uploaded directly (PublishLayerVersion --zip-file)
# must be at most 50 MiB. CDK uploads the layer through the asset bucket, where only the
# unzipped limit applies; staying under both keeps the layer publishable either way.
LAMBDA_UNZIPPED_LIMIT_BYTES = 262_144_000
LAMBDA_DIRECT_UPLOAD_ZIPPED_BYTES = 50 * 1024 * 1024
# The core layer takes at most half of the unzipped limit: the other half is for each
# function's own code (kilobytes today) and any further layer (an OpenTelemetry/ADOT layer).
MAX_LAYER_BYTES = LAMBDA_UNZIPPED_LIMIT_BYTES // 2
_IGNORED = ("__pycache__", "*.pyc", ".mypy_cache", ".pytest_cache")
# Where the layer's modules are on Lambda: compiled code names its source there (tracebacks).
SITE_IN_LAYER = "/opt/python"


def runtime_dependencies(pyproject: Path = PYPROJECT) -> list[str]:
    """The pinned runtime requirements of the `hookline` package, from pyproject.toml."""
    data = tomllib.loads(pyproject.read_text())
    return list(data["project"]["dependencies"])


def pip_command(target: Path, python_version: str, requirements: list[str]) -> list[str]:
    """The pip invocation that installs arm64 wheels for `python_version` into `target`."""
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--no-compile"]
    command += ["--target", str(target), "--implementation", "cp"]
    command += ["--python-version", python_version, "--only-binary=:all:"]
    for platform in PLATFORMS:
        command += ["--platform", platform]
    return command + requirements


@jsii.implements(ILocalBundling)
class PipLayerBundling:
    """Builds the layer folder on this machine: wheels, the package and the config JSON."""

    def __init__(self, config: HooklineConfig, requirements: list[str]) -> None:
        self._config = config
        self._requirements = requirements

    def try_bundle(self, output_dir: str, *_args: Any, **_options: Any) -> bool:
        """Fill `output_dir` with `python/` (wheels + hookline), `hookline/config.json` and
        `hookline/LICENSE`, `hookline/NOTICE`."""
        out = Path(output_dir)
        site = out / "python"
        site.mkdir(parents=True, exist_ok=True)
        subprocess.run(  # noqa: S603 - fixed argv, no shell
            pip_command(site, self._config.infrastructure.python_version, self._requirements),
            check=True,
        )
        prune_distributions(site, RUNTIME_PROVIDED)
        shutil.copytree(
            CORE_LAYER_DIR / "hookline",
            site / "hookline",
            ignore=shutil.ignore_patterns(*_IGNORED),
            dirs_exist_ok=True,
        )
        config_file = out / "hookline" / "config.json"
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text(self._config.to_json())
        for legal in LEGAL_FILES:
            shutil.copyfile(legal, config_file.parent / legal.name)
        compile_bytecode(site, self._config.infrastructure.python_version)
        print(f"core layer: {layer_size(out) / 1e6:.1f} MB unzipped", file=sys.stderr)
        return True


def runtime_interpreter(python_version: str) -> str | None:
    """A Python of the Lambda runtime's version on this machine (`HOOKLINE_LAYER_PYTHON`, or
    `python3.12` on the PATH, or pyenv's), or None when there is none."""
    home = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = [os.environ.get("HOOKLINE_LAYER_PYTHON"), shutil.which(f"python{python_version}")]
    candidates += sorted(str(p) for p in home.glob(f"versions/{python_version}.*/bin/python3"))
    for candidate in filter(None, candidates):
        try:
            with subprocess.Popen(  # noqa: S603 - a Python, fixed arguments
                [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            ) as probe:
                found, _ = probe.communicate()
        except OSError:
            continue
        if probe.returncode:
            continue  # e.g. a pyenv shim of a version that is not selected
        if found.strip() == python_version:
            return candidate
    return None


def compile_bytecode(site: Path, python_version: str) -> bool:
    """Compile every module of `site` to the runtime's bytecode, as `unchecked-hash` .pyc
    files: Lambda's /opt is read-only, so a layer without them compiles each module it
    imports on every cold start (~80 ms of the receiver's; docs/performance.md, "Cold
    starts"), and CDK zips assets with fixed timestamps, which a timestamp check would
    refuse. Without an interpreter of that version the layer ships sources only, said here."""
    interpreter = runtime_interpreter(python_version)
    if interpreter is None:
        print(
            f"core layer: no Python {python_version} here (set HOOKLINE_LAYER_PYTHON): shipping "
            "sources only, which Lambda compiles on every cold start",
            file=sys.stderr,
        )
        return False
    command = [interpreter, "-m", "compileall", "-q", "-j", "0", "-s", str(site)]
    command += ["-p", SITE_IN_LAYER, "--invalidation-mode", "unchecked-hash", str(site)]
    subprocess.run(command, check=True)  # noqa: S603 - fixed argv, no shell
    return True


def _normalized(name: str) -> str:
    return name.lower().replace("-", "_").replace(".", "_")


def prune_distributions(site: Path, names: tuple[str, ...]) -> list[str]:
    """Delete the installed distributions `names` from `site` (a `pip --target` folder), file
    by file as their RECORD lists them; returns the names of those that were there."""
    wanted = {_normalized(n) for n in names}
    removed: list[str] = []
    for info in sorted(site.glob("*.dist-info")):
        name = _normalized(info.name.removesuffix(".dist-info").rsplit("-", 1)[0])
        if name not in wanted:
            continue
        record = info / "RECORD"
        for line in record.read_text().splitlines() if record.is_file() else []:
            path = site / line.split(",", 1)[0]
            if path.is_file() and site in path.resolve().parents:
                path.unlink()
        shutil.rmtree(info, ignore_errors=True)
        removed.append(name)
    for folder in sorted(site.iterdir()):  # the packages' now empty folders
        if folder.is_dir() and not any(p.is_file() for p in folder.rglob("*")):
            shutil.rmtree(folder)
    return removed


def layer_size(folder: Path) -> int:
    """The unzipped size of a built layer folder in bytes (what Lambda's 250 MB limit counts)."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def layer_hash(config: HooklineConfig, requirements: list[str]) -> str:
    """A content hash of everything that goes into the layer (sources, pins, config)."""
    digest = hashlib.sha256()
    digest.update("\n".join([*requirements, *PLATFORMS, config.to_json()]).encode())
    for legal in LEGAL_FILES:
        digest.update(legal.read_bytes())
    package = CORE_LAYER_DIR / "hookline"
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
            digest.update(str(path.relative_to(package)).encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


class CoreLayer(Construct):
    """The `hookline` layer every function loads (arm64, the configured Python version)."""

    def __init__(self, scope: Construct, construct_id: str, *, config: HooklineConfig) -> None:
        super().__init__(scope, construct_id)
        requirements = runtime_dependencies()
        self.runtime = lambda_runtime(config)
        self.layer = lambda_.LayerVersion(
            self,
            "Layer",
            description="hookline package + runtime dependencies (arm64)",
            compatible_runtimes=[self.runtime],
            compatible_architectures=[lambda_.Architecture.ARM_64],
            code=lambda_.Code.from_asset(
                str(CORE_LAYER_DIR),
                asset_hash_type=AssetHashType.CUSTOM,
                asset_hash=layer_hash(config, requirements),
                bundling=BundlingOptions(
                    # Never pulled: the local bundler always succeeds or raises.
                    image=DockerImage.from_registry("public.ecr.aws/sam/build-python3.12"),
                    local=PipLayerBundling(config, requirements),
                ),
            ),
        )


def lambda_runtime(config: HooklineConfig) -> lambda_.Runtime:
    """The Lambda runtime matching `config.infrastructure.python_version`."""
    version = config.infrastructure.python_version
    runtime: lambda_.Runtime = getattr(lambda_.Runtime, "PYTHON_" + version.replace(".", "_"))
    return runtime
