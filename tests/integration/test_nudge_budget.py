"""The receiver's fan-out nudge costs a request little and never retries.

A loopback server stands in for the Lambda API: one that holds its answer (a slow API), one
that fails. The nudge must give up on its own, after one request, without waiting for it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from hookline.nudge import nudge_fanout
from hookline.settings import Settings

pytestmark = pytest.mark.integration


class FakeLambdaApi:
    """Counts Invoke requests; answers each with `status`, after `release` when holding."""

    def __init__(self, status: int, hold: bool) -> None:
        self.status = status
        self.hold = hold
        self.requests = 0
        self.answered = 0
        self.release = threading.Event()
        self._lock = threading.Lock()


@contextmanager
def lambda_api(status: int = 202, *, hold: bool = False) -> Iterator[tuple[FakeLambdaApi, str]]:
    api = FakeLambdaApi(status, hold)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            with api._lock:
                api.requests += 1
            if api.hold:
                api.release.wait(timeout=5)
            body = b"{}"
            try:
                self.send_response(api.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except OSError:  # the client gave up
                return
            with api._lock:
                api.answered += 1

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        api.release.set()
        server.shutdown()
        server.server_close()


def _settings(endpoint: str) -> Settings:
    return Settings(
        database_url="", aws_endpoint_url=endpoint, fanout_function_name="hookline-fanout"
    )


def test_a_slow_lambda_api_does_not_hold_the_request(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with lambda_api(hold=True) as (api, endpoint):
        # When the receiver nudges while the Lambda API holds its answer
        nudge_fanout(_settings(endpoint))
        # Then the nudge has given up before the API answered, after one request
        assert api.answered == 0
        assert api.requests == 1


def test_a_failing_lambda_api_is_tried_once(monkeypatch):
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with lambda_api(status=500) as (api, endpoint):
        # When the Lambda API fails the invoke
        nudge_fanout(_settings(endpoint))
        # Then the nudge is not retried (the schedule is the safety net) and does not raise
        assert api.requests == 1
