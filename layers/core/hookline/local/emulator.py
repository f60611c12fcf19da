"""The AWS emulator of the dev stack: a moto server in a child process on loopback.

A child process rather than moto's in-process thread: moto's SQS is Python too, and under
load (the end-to-end benchmark) it would share one interpreter lock with the receiver, the
fan-out and the deliver handlers. The child runs in its own session, so a Ctrl-C in the
terminal reaches only the dev stack, which still needs SQS while it finishes its in-flight
batches; and it exits by itself within a second when its parent is gone (a `kill -9` of the
dev stack leaves nothing behind). Its state (queues, messages) dies with it: the dev stack
re-enqueues on start what the database says was on the queues (see `hookline.local.devstack`).

Run as `python -m hookline.local.emulator --parent PID`: prints `port <n>` once listening.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

READY_PREFIX = "port "
_START_TIMEOUT_SECONDS = 30.0


class MotoProcess:
    """A moto server child process; `start()` returns its endpoint URL."""

    def __init__(self, log_path: Path | None = None) -> None:
        self.log_path = log_path
        self.endpoint_url: str | None = None
        self._process: subprocess.Popen[str] | None = None
        self._log: IO[str] | None = None

    @property
    def pid(self) -> int | None:
        """The child's process id while it runs."""
        return self._process.pid if self._process else None

    def start(self) -> str:
        """Start the server and wait until it answers; its endpoint URL."""
        self._log = open(self.log_path, "a") if self.log_path else None  # noqa: SIM115 - kept open while the child runs
        self._process = subprocess.Popen(
            [sys.executable, "-m", "hookline.local.emulator", "--parent", str(os.getpid())],
            stdout=subprocess.PIPE,
            stderr=self._log or subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # a terminal Ctrl-C must not stop SQS under in-flight batches
        )
        assert self._process.stdout is not None
        line = _read_line(self._process.stdout, _START_TIMEOUT_SECONDS)
        if not line.startswith(READY_PREFIX):
            self.stop()
            raise RuntimeError(
                f"the moto server did not start (said {line!r}); see {self.log_path}"
            )
        self.endpoint_url = f"http://127.0.0.1:{int(line[len(READY_PREFIX) :])}"
        wait_until_answering(self.endpoint_url)
        return self.endpoint_url

    def stop(self, timeout: float = 10.0) -> None:
        """Stop the child (SIGTERM, then SIGKILL after `timeout`)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if process is not None and process.stdout is not None:
            process.stdout.close()
        if self._log is not None:
            self._log.close()
            self._log = None


def wait_until_answering(endpoint_url: str, timeout: float = _START_TIMEOUT_SECONDS) -> None:
    """Wait until an AWS emulator at `endpoint_url` answers HTTP at all."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{endpoint_url}/moto-api/", timeout=2):  # noqa: S310 - loopback emulator
                return
        except urllib.error.HTTPError:
            return  # any HTTP answer means the server is up (LocalStack has no /moto-api)
        except (urllib.error.URLError, OSError) as err:
            if time.monotonic() > deadline:
                raise RuntimeError(f"no AWS emulator answers at {endpoint_url}") from err
            time.sleep(0.1)


def _read_line(stream: IO[str], timeout: float) -> str:
    found: list[str] = []
    reader = threading.Thread(target=lambda: found.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return found[0].strip() if found else ""


def _watch_parent(parent: int) -> None:
    """Exit as soon as the parent is gone (re-parented to init or a subreaper)."""
    while True:
        if os.getppid() != parent:
            os._exit(0)
        time.sleep(0.5)


def _speed_up_moto() -> None:
    """Remember which moto backend serves a host name, and answer without Nagle's delay.

    moto finds the backend of every request anew, under one global lock: for a host like
    `sqs.us-east-1.amazonaws.com` it lists and stats moto's ~200 package folders, then tries
    its URL patterns one by one. The answer for a host never changes, and the pollers send a
    steady stream of requests, so the lookup is cached: a third less CPU per SQS call here.
    """
    from functools import lru_cache

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler

    # Answers are written in more than one send: without TCP_NODELAY, Nagle's algorithm holds
    # the last part back until the client's delayed ACK (tens of milliseconds per call).
    MotoRequestHandler.disable_nagle_algorithm = True

    lookup = DomainDispatcherApplication.get_backend_for_host
    cached = lru_cache(maxsize=256)(lambda app, host: lookup(app, host))
    DomainDispatcherApplication.get_backend_for_host = lambda app, host: cached(app, host)  # type: ignore[method-assign,assignment]


def main(argv: list[str] | None = None) -> None:
    """Serve moto on a free loopback port until SIGTERM or the parent's death."""
    parser = argparse.ArgumentParser(description="moto server for hookline dev")
    parser.add_argument("--parent", type=int, required=True, help="exit when this pid is gone")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    from moto.server import ThreadedMotoServer

    # werkzeug logs every request, and the pollers long-poll all the time.
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    threading.Thread(target=_watch_parent, args=(args.parent,), daemon=True).start()
    _speed_up_moto()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=args.port, verbose=False)
    server.start()
    for sig in (signal.SIGTERM, signal.SIGINT):
        # The emulator's state dies with it anyway: no need to drain anything.
        signal.signal(sig, lambda *_: os._exit(0))
    print(f"{READY_PREFIX}{server.get_host_and_port()[1]}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
