"""The open-loop load bench's generator against a real loopback server that stalls: the
schedule must not wait for the server, and latency must count from each request's scheduled
time (no coordinated omission) — the property the bench's figures rest on."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench.openloop import run_step

pytestmark = pytest.mark.integration

RATE = 100  # requests 10 ms apart
STALL = range(30, 60)  # these wait until request 60 arrives: a 300 ms stall of the server


class StallingServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.released = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: StallingServer

    def do_POST(self) -> None:
        n = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["n"]
        if n == STALL.stop:
            self.server.released.set()
        elif n in STALL:
            self.server.released.wait(5)
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def stalling_server() -> Iterator[str]:
    server = StallingServer()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def request(n: int) -> bytes:
    body = json.dumps({"n": n}).encode()
    return f"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body


def test_a_server_stall_is_measured_from_the_schedule_not_hidden_by_the_generator(
    stalling_server: str,
) -> None:
    # Given a server that holds requests 30-59 until request 60 arrives (a 300 ms stall)
    # When the generator offers 100 requests at 100/s
    step = run_step("test", stalling_server, [request(n) for n in range(100)], RATE, 5, "t")

    # Then every request was sent and answered 200
    assert step.sent == 100
    assert step.statuses == {200: 100}
    # and the schedule did not wait for the stalled answers: request 60 was sent on time
    # (else the stall would never end before the 5 s timeout) and each stalled request took
    # a connection of its own
    assert step.connections >= len(STALL)
    assert step.elapsed < 2.0
    # and the stall shows in full, from each request's scheduled time: request n in the
    # stall waited (60 - n) x 10 ms, so ~21 of them 100 ms or more and the first ~300 ms —
    # a closed-loop generator on one connection would have recorded one slow request. At most
    # 60: a generator that waited out the stall would make every later request slow too (70);
    # a loaded machine makes a few outside it slow (37 in one CI run, with a bound of 35)
    slow = [ms for ms in step.latency_ms if ms >= 100]
    assert 15 <= len(slow) <= 60
    assert 250 <= max(step.latency_ms) < 1000
