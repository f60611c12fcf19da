"""The AWS emulator of the dev stack: moto in a child process on loopback.

A child process rather than moto's in-process thread: moto's SQS is Python too, and under
load (the end-to-end benchmark) it would share one interpreter lock with the receiver, the
fan-out and the deliver handlers. The child runs in its own session, so a Ctrl-C in the
terminal reaches only the dev stack, which still needs SQS while it finishes its in-flight
batches; and it exits by itself within a second when its parent is gone (a `kill -9` of the
dev stack leaves nothing behind). Its state (queues, messages) dies with it: the dev stack
re-enqueues on start what the database says was on the queues (see `hookline_dev.local.devstack`).
moto's WSGI app is served by a small keep-alive server here rather than werkzeug's development
server, which closes every connection (see `KeepAliveWSGIServer`).

Run as `python -m hookline_dev.local.emulator --parent PID`: prints `port <n>` once listening.
"""

from __future__ import annotations

import argparse
import io
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any

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
            [sys.executable, "-m", "hookline_dev.local.emulator", "--parent", str(os.getpid())],
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


def _cache_backend_lookups() -> None:
    """Remember which moto backend serves a host name.

    moto finds the backend of every request anew, under one global lock: for a host like
    `sqs.us-east-1.amazonaws.com` it lists and stats moto's ~200 package folders, then tries
    its URL patterns one by one. The answer for a host never changes, and the pollers send a
    steady stream of requests, so the lookup is cached: a third less CPU per SQS call here.
    """
    from functools import lru_cache

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    lookup = DomainDispatcherApplication.get_backend_for_host
    cached = lru_cache(maxsize=256)(lambda app, host: lookup(app, host))
    DomainDispatcherApplication.get_backend_for_host = lambda app, host: cached(app, host)  # type: ignore[method-assign,assignment]


def make_sqs_thread_safe() -> None:
    """Serialise moto's SQS queue changes, as SQS itself would never lose a message.

    moto 5's queue model is not thread-safe, and its server answers each connection on its own
    thread: DeleteMessage rebuilds a queue's message list and assigns it back, so a message
    sent meanwhile is silently dropped (the load bench lost a few per run; the reconciler
    re-sent them 15 minutes later), and ReceiveMessage can trip over a set another thread is
    changing. Here every send, delete and receive pass takes one lock; a long poll waits on
    a condition of that lock (released while it waits), so a waiting receiver blocks no one.
    Idempotent.
    """
    from moto.sqs import models

    if getattr(models.Queue, "_hookline_serialised", False):
        return
    lock = threading.RLock()
    arrived = threading.Condition(lock)
    add_message = models.Queue.add_message
    delete_message = models.Queue.delete_message
    receive_message = models.SQSBackend.receive_message

    def add(self: Any, message: Any) -> None:
        with arrived:
            add_message(self, message)
            arrived.notify_all()

    def delete(self: Any, receipt_handle: str) -> None:
        with lock:
            delete_message(self, receipt_handle)

    def receive(
        self: Any,
        queue_name: str,
        count: int,
        wait_seconds_timeout: int,
        visibility_timeout: int,
        message_attribute_names: list[str] | None = None,
    ) -> Any:
        until = time.monotonic() + wait_seconds_timeout
        with arrived:
            while True:  # one pass of moto's own receive per wake-up, never its own wait
                found = receive_message(
                    self, queue_name, count, 0, visibility_timeout, message_attribute_names
                )
                left = until - time.monotonic()
                if found or left <= 0:
                    return found
                # Woken by a send; at least twice a second for delays and visibility ending.
                arrived.wait(min(left, 0.5))

    models.Queue.add_message = add  # type: ignore[method-assign]
    models.Queue.delete_message = delete  # type: ignore[method-assign]
    models.SQSBackend.receive_message = receive  # type: ignore[method-assign]
    models.Queue._hookline_serialised = True  # type: ignore[attr-defined]


class KeepAliveWSGIServer(ThreadingHTTPServer):
    """A threaded HTTP/1.1 server with keep-alive for a WSGI app (moto's).

    moto's own server (werkzeug's development server) answers every request with
    `Connection: close` and then lingers 10 ms draining the socket: each SQS call costs a TCP
    connection, a new server thread, and on the client a connect and a DNS lookup. The pollers
    make a steady stream of calls, so connections are kept alive here instead: one thread per
    connection (a long poll blocks only its own), bodies read whole and answered with a
    Content-Length.
    """

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: Callable[..., Iterable[bytes]]) -> None:
        """Bind `address`; `app` is the WSGI application."""
        self.app = app
        super().__init__(address, _WSGIHandler)


class _WSGIHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # an answer is two sends on a kept-alive socket
    server: KeepAliveWSGIServer

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length > 0 else b""
        path, _, query = self.path.partition("?")
        host, port = self.server.server_address[:2]
        environ: dict[str, Any] = {
            "REQUEST_METHOD": self.command,
            "SCRIPT_NAME": "",
            "PATH_INFO": urllib.parse.unquote(path, "latin-1"),
            "QUERY_STRING": query,
            "RAW_URI": self.path,
            "REQUEST_URI": self.path,
            "SERVER_NAME": str(host),
            "SERVER_PORT": str(port),
            "SERVER_PROTOCOL": self.request_version,
            "REMOTE_ADDR": self.client_address[0],
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": True,
            "wsgi.multiprocess": False,
            "wsgi.run_once": False,
        }
        for name, value in self.headers.items():
            key = "HTTP_" + name.upper().replace("-", "_")
            if key not in ("HTTP_CONTENT_TYPE", "HTTP_CONTENT_LENGTH"):
                environ[key] = f"{environ[key]},{value}" if key in environ else value
        answer: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]], exc: Any = None) -> Any:
            answer[:] = [status, headers]
            return lambda data: None  # moto never uses the legacy write()

        result = self.server.app(environ, start_response)
        try:
            payload = b"".join(result)
        finally:
            close = getattr(result, "close", None)
            if close is not None:
                close()
        status, headers = answer
        code, _, reason = status.partition(" ")
        self.send_response(int(code), reason)
        for name, value in headers:
            if name.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = _serve

    def log_message(self, format: str, *args: object) -> None:
        pass


def main(argv: list[str] | None = None) -> None:
    """Serve moto on a free loopback port until SIGTERM or the parent's death."""
    parser = argparse.ArgumentParser(description="moto server for hookline dev")
    parser.add_argument("--parent", type=int, required=True, help="exit when this pid is gone")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app

    threading.Thread(target=_watch_parent, args=(args.parent,), daemon=True).start()
    _cache_backend_lookups()
    make_sqs_thread_safe()
    server = KeepAliveWSGIServer(
        ("127.0.0.1", args.port), DomainDispatcherApplication(create_backend_app)
    )
    for sig in (signal.SIGTERM, signal.SIGINT):
        # The emulator's state dies with it anyway: no need to drain anything.
        signal.signal(sig, lambda *_: os._exit(0))
    print(f"{READY_PREFIX}{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
