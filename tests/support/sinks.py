"""Real HTTP subscribers on loopback, each path with its own programmed behaviour."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Received:
    """One request as the subscriber saw it."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Behaviour:
    """How one path answers: a list of statuses played in order (the last one repeats),
    an optional delay, and extra headers."""

    statuses: list[int] = field(default_factory=lambda: [200])
    delay: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None  # None: a small JSON answer
    served: int = 0
    in_flight: int = 0
    max_in_flight: int = 0

    def next_status(self) -> int:
        status = self.statuses[min(self.served, len(self.statuses) - 1)]
        self.served += 1
        return status


class _Server(ThreadingHTTPServer):
    # A deliver batch opens up to ten connections at once: past socketserver's backlog of 5,
    # a connect waits for the kernel's SYN retry (1 s), longer than the tests' timeouts.
    request_queue_size = 64


class Sink:
    """A threaded HTTP server recording every request."""

    def __init__(self) -> None:
        self.received: list[Received] = []
        self.behaviours: dict[str, Behaviour] = {}
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                if len(body) < length:
                    # The sender went away mid-request (a deliverer killed between its
                    # headers and its body): a server never sees that request whole, so it
                    # is neither answered nor counted as received.
                    self.close_connection = True
                    return
                with sink._lock:
                    behaviour = sink.behaviours.setdefault(self.path, Behaviour())
                    behaviour.in_flight += 1
                    behaviour.max_in_flight = max(behaviour.max_in_flight, behaviour.in_flight)
                    status = behaviour.next_status()
                    sink.received.append(
                        Received(
                            self.path,
                            {k.lower(): v for k, v in self.headers.items()},
                            body,
                            time.time(),
                        )
                    )
                try:
                    if behaviour.delay:
                        time.sleep(behaviour.delay)
                    payload = b'{"ok": true}' if status < 300 else b'{"error": "nope"}'
                    if behaviour.body is not None:
                        payload = behaviour.body
                    self.send_response(status)
                    for k, v in behaviour.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)
                finally:
                    with sink._lock:
                        behaviour.in_flight -= 1

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        """The URL of a path on this sink."""
        return f"http://127.0.0.1:{self.port}{path}"

    def behave(self, path: str, **kwargs: object) -> Behaviour:
        """Program how `path` answers."""
        behaviour = Behaviour(**kwargs)  # type: ignore[arg-type]
        with self._lock:
            self.behaviours[path] = behaviour
        return behaviour

    def requests(self, path: str | None = None) -> list[Received]:
        """What was received (at one path)."""
        with self._lock:
            return [r for r in self.received if path is None or r.path == path]

    def start(self) -> Sink:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@contextmanager
def running_sink() -> Iterator[Sink]:
    sink = Sink().start()
    try:
        yield sink
    finally:
        sink.stop()
