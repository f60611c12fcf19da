"""Where a running `hookline dev` can be found: `.hookline/dev.json`.

The dev stack writes this file once everything is up and removes it when it stops cleanly;
`hookline demo`, `bench/e2e.py`, the end-to-end tests and `hookline dev --print-env` read it.
A file left behind by a killed stack is recognised as stale (its process is gone, or its
front does not answer), so nothing trusts it blindly.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

STATE_FILE = "dev.json"
API_KEY_FILE = "api.key"  # the stack's operator key for /v1, kept across restarts
HEALTH_PATH = "/_hookline/health"  # answered by the local front itself, never by the receiver
DEFAULT_STATE_DIR = ".hookline"


@dataclass(frozen=True)
class DevState:
    """What another process needs to talk to a running dev stack."""

    pid: int
    url: str  # the HTTP front, e.g. http://127.0.0.1:8080
    port: int
    database_url: str
    aws_endpoint_url: str
    aws_region: str
    emulator: str  # "moto" (started by the stack) or "external" (AWS_ENDPOINT_URL)
    config_path: str | None
    log_file: str | None
    started_at: float
    queues: dict[str, dict[str, str]] = field(default_factory=dict)  # group -> url, dlq_url
    # Settings every process talking to this stack must share (e.g. the local master key
    # file that seals secrets at rest), as absolute paths.
    shared_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        """The environment under which the `hookline` CLI and boto3 reach this stack."""
        env = {
            "DATABASE_URL": self.database_url,
            "AWS_ENDPOINT_URL": self.aws_endpoint_url,
            "AWS_REGION": self.aws_region,
            "AWS_DEFAULT_REGION": self.aws_region,
            "HOOKLINE_LOCAL_MODE": "1",
            "HOOKLINE_ALLOW_PRIVATE_TARGETS": "1",
            "HOOKLINE_ALLOW_HTTP_TARGETS": "1",
            "HOOKLINE_URL": self.url,
        }
        if self.emulator == "moto":
            # moto accepts any credentials; never send real ones to it.
            env["AWS_ACCESS_KEY_ID"] = "testing"
            env["AWS_SECRET_ACCESS_KEY"] = "testing"  # noqa: S105 - moto's dummy credential
        if self.config_path:
            env["HOOKLINE_CONFIG"] = self.config_path
        env.update(self.shared_env)
        return env


def state_path(state_dir: str | Path) -> Path:
    """The state file in `state_dir`."""
    return Path(state_dir) / STATE_FILE


def write_state(state_dir: str | Path, state: DevState) -> Path:
    """Write the state file atomically, readable by this user only (it holds the DB URL)."""
    path = state_path(state_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        json.dump(asdict(state), out, indent=2)
    tmp.replace(path)
    return path


def operator_key(state_dir: str | Path) -> str:
    """The dev stack's operator key for `/v1` (decision 0030): read from `api.key` in
    `state_dir`, or made (random, readable by this user only) on the first start, so a shell
    that exported it keeps working across restarts."""
    path = Path(state_dir) / API_KEY_FILE
    try:
        key = path.read_text().strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    key = "hkl_local_" + secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(key + "\n")
    return key


def read_state(state_dir: str | Path) -> DevState | None:
    """The state file's contents, or None when there is none (or it is unreadable)."""
    path = state_path(state_dir)
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        return DevState(**data)
    except (OSError, ValueError, TypeError):
        return None


def remove_state(state_dir: str | Path, pid: int) -> None:
    """Remove the state file if it is still this process's."""
    current = read_state(state_dir)
    if current is not None and current.pid == pid:
        state_path(state_dir).unlink(missing_ok=True)


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (a zombie counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: trust kill(0)
    return stat.rsplit(")", 1)[-1].split()[0] != "Z"


def healthy(url: str, timeout: float = 2.0) -> bool:
    """Whether a dev stack's front answers its health check."""
    try:
        with urllib.request.urlopen(f"{url}{HEALTH_PATH}", timeout=timeout) as response:  # noqa: S310 - loopback URL from our own state file
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError, ValueError):
        return False


def find_running(state_dir: str | Path) -> DevState | None:
    """The dev stack running from `state_dir`, or None (no file, or a stale one)."""
    state = read_state(state_dir)
    if state is None or not process_alive(state.pid) or not healthy(state.url):
        return None
    return state


class BackgroundDevStack:
    """A `hookline dev` child process for tools that need a stack and found none running
    (`hookline demo`, `bench/e2e.py`): started with `start()`, stopped with `stop()`."""

    def __init__(
        self,
        state_dir: str | Path,
        *,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        log_path: Path | None = None,
    ) -> None:
        """`args` are extra `hookline dev` arguments; its output goes to `log_path`."""
        self.state_dir = Path(state_dir)
        self.args = list(args)
        self.env = dict(os.environ if env is None else env)
        self.log_path = log_path or self.state_dir / "dev.out"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 120.0) -> DevState:
        """Start it and wait until its front answers; its state."""
        self.state_dir.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable, "-m", "hookline_dev.cli", "dev", "--port", "0", "--status", "plain",
            "--state-dir", str(self.state_dir), "--parent-pid", str(os.getpid()), *self.args,
        ]  # fmt: skip
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env, start_new_session=True,
            )  # fmt: skip
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"hookline dev exited with {self.process.returncode}; see {self.log_path}"
                )
            state = read_state(self.state_dir)
            if state is not None and state.pid == self.process.pid and healthy(state.url):
                return state
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"hookline dev did not come up within {timeout:g} s; see {self.log_path}"
        )

    def stop(self, timeout: float = 60.0) -> int | None:
        """SIGTERM (a clean stop), SIGKILL after `timeout`; the exit code."""
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        return process.returncode
