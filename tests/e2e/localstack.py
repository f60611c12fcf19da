"""Run a command with LocalStack (host mode, no Docker) as the AWS side of the e2e tier.

    python -m tests.e2e.localstack [--keep] -- pytest -q tests/e2e

Installs `localstack-core` 2026.3.0 (the last on PyPI; it needs Python >= 3.12) into a
virtualenv under `.hookline/localstack/venv` with the dependency pins in this folder (today's
releases of its dependencies break it), starts it in host mode on a free loopback port with
its state under `.hookline/localstack/`, waits for its health check, runs the command with
`HOOKLINE_E2E_AWS_ENDPOINT_URL` (the e2e fixtures hand it to `hookline dev` as
`AWS_ENDPOINT_URL`) and stops LocalStack by its pid. The recipe and what works in host mode:
../shared TESTING-WITHOUT-DOCKER.md, docs/local.md.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PINS = Path(__file__).with_name("localstack-constraints-py313.txt")
PACKAGE = "localstack-core[runtime]==2026.3.0"
HOME = REPO / ".hookline" / "localstack"


def find_python() -> str:
    """A Python >= 3.12 interpreter: $LOCALSTACK_PYTHON, pyenv's, or one on PATH."""
    candidates = [os.environ.get("LOCALSTACK_PYTHON", "")]
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    candidates += sorted(glob.glob(str(pyenv / "3.13*/bin/python3")), reverse=True)
    candidates += sorted(glob.glob(str(pyenv / "3.12*/bin/python3")), reverse=True)
    candidates += ["python3.13", "python3.12", "python3"]
    for candidate in filter(None, candidates):
        try:
            out = subprocess.run(
                [candidate, "-c", "import sys; print(sys.version_info >= (3, 12))"],
                capture_output=True,
                text=True,
                timeout=20,
                check=False,
            )
        except OSError:
            continue
        if out.returncode == 0 and out.stdout.strip() == "True":
            return candidate
    sys.exit("LocalStack needs Python >= 3.12: set LOCALSTACK_PYTHON")


def ensure_venv() -> Path:
    """The virtualenv with localstack-core installed (created on first use, ~60 s)."""
    venv = HOME / "venv"
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    if marker.exists() and marker.read_text() == PINS.read_text():
        return python
    print("installing localstack-core into .hookline/localstack/venv (once, ~1 min)…", flush=True)
    subprocess.run([find_python(), "-m", "venv", str(venv)], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "-c", str(PINS), PACKAGE], check=True
    )
    marker.write_text(PINS.read_text())
    return python


def free_port() -> int:
    """A free loopback port."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(python: Path) -> tuple[subprocess.Popen[bytes], str]:
    """Start LocalStack in host mode; (process, endpoint URL) once it is healthy."""
    port = free_port()
    root = HOME / "state"
    root.mkdir(parents=True, exist_ok=True)
    env = {
        **os.environ,
        "FILESYSTEM_ROOT": str(root),
        "DISABLE_EVENTS": "1",
        "OVERRIDE_IN_DOCKER": "0",
        "GATEWAY_SERVER": "hypercorn",
        "GATEWAY_LISTEN": f"127.0.0.1:{port}",
        # cloudformation, iam and sts: the destinations test deploys the customer's role
        # template in a second account and assumes the role; s3: the archive; ses: the dev
        # stack verifies its operational e-mail sender (decision 0068).
        "SERVICES": "sqs,events,secretsmanager,cloudwatch,logs,kms,cloudformation,iam,sts,s3,ses",
        "SKIP_SSL_CERT_DOWNLOAD": "1",
        # Queue URLs on loopback (the default host name needs DNS for *.localstack.cloud).
        "SQS_ENDPOINT_STRATEGY": "path",
        "LOCALSTACK_HOST": f"127.0.0.1:{port}",
    }
    log = open(HOME / "localstack.log", "ab")  # noqa: SIM115 - the child holds it
    process = subprocess.Popen(
        [str(python), "-m", "localstack.runtime.main"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"LocalStack exited with {process.returncode}; see {HOME / 'localstack.log'}")
        try:
            with urllib.request.urlopen(f"{endpoint}/_localstack/health", timeout=2) as answer:
                health = json.loads(answer.read())
            if health.get("services", {}).get("sqs") in ("available", "running"):
                return process, endpoint
        except OSError:
            pass
        time.sleep(0.5)
    stop(process)
    sys.exit(f"LocalStack did not become healthy; see {HOME / 'localstack.log'}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Stop LocalStack (its process group: it may start helpers)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command to run")
    args = parser.parse_args()
    command = [c for c in args.command if c != "--"] or [
        sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/e2e",
    ]  # fmt: skip
    HOME.mkdir(parents=True, exist_ok=True)
    process, endpoint = start(ensure_venv())
    print(f"LocalStack (host mode) at {endpoint}, pid {process.pid}", flush=True)
    try:
        env = {**os.environ, "HOOKLINE_E2E_AWS_ENDPOINT_URL": endpoint}
        return subprocess.run(command, env=env, cwd=REPO, check=False).returncode
    finally:
        stop(process)


if __name__ == "__main__":
    raise SystemExit(main())
