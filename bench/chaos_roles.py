"""The chaos run's processes: one `hookline dev --role ROLE` child per component, which the
chaos thread SIGKILLs and restarts (bench/chaos_harness.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class RoleProcess:
    """One `hookline dev --role ROLE` child, which the chaos thread kills and restarts."""

    role: str
    workdir: Path
    env: dict[str, str]
    port: int = 0  # the front's
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    kills: int = 0

    @property
    def state_dir(self) -> Path:
        return self.workdir / f"state-{self.role.replace(':', '-')}"

    def start(self, timeout: float = 60) -> None:
        from hookline_dev.local.devstate import healthy, read_state

        self.starts += 1
        command = [
            sys.executable, "-m", "hookline_dev.cli", "dev", "--role", self.role,
            "--port", str(self.port), "--state-dir", str(self.state_dir),
            "--log-file", str(self.workdir / f"{self.state_dir.name}.log"),
            "--status", "off", "--fanout-every", "0.5", "--reconcile-every", "3",
            "--visibility-timeout", str(self.env["CHAOS_VISIBILITY_TIMEOUT"]),
            "--parent-pid", str(os.getpid()),
        ]  # fmt: skip
        out = open(self.workdir / f"{self.state_dir.name}.out", "ab")  # noqa: SIM115
        with out:
            self.process = subprocess.Popen(
                command, cwd=self.workdir, env=self.env, stdout=out, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                tail = (self.workdir / f"{self.state_dir.name}.out").read_text()[-3000:]
                raise ChaosError(
                    f"{self.role} exited at start ({self.process.returncode}):\n{tail}"
                )
            state = read_state(self.state_dir)
            up = state is not None and state.pid == self.process.pid
            if up and state and (self.role != "front" or healthy(state.url, timeout=1)):
                return
            time.sleep(0.1)
        raise ChaosError(f"{self.role} did not come up within {timeout}s")

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)
        self.process = None
        self.kills += 1

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None


class ChaosError(RuntimeError):
    """The run could not be carried out (a process would not start, a timeout)."""
