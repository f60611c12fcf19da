"""A loopback HTTP server playing AWS Lambda's Invoke API (`POST
/2015-03-31/functions/{FunctionName}/invocations`), recording each invocation and answering
as scripted: the function's result, its error (`X-Amz-Function-Error`), or an API error
(`x-amzn-ErrorType`) such as throttling, AccessDenied or ResourceNotFound. moto's Lambda
without Docker neither records invocations nor can fail one (decision 0057)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import unquote


@dataclass(frozen=True)
class Invocation:
    """One Invoke request as Lambda would see it."""

    function: str
    invocation_type: str | None
    payload: bytes


@dataclass(frozen=True)
class Answer:
    """How one invocation is answered."""

    status: int = 200
    body: Any = None  # the function's result (JSON), or an API error's body
    function_error: str | None = None  # "Unhandled": the function raised
    error_type: str | None = None  # an API error: x-amzn-ErrorType

    @staticmethod
    def result(value: Any) -> Answer:
        """The function returned `value`."""
        return Answer(200, value)

    @staticmethod
    def raised(error_type: str, message: str) -> Answer:
        """The function raised."""
        return Answer(200, {"errorType": error_type, "errorMessage": message}, "Unhandled")

    @staticmethod
    def api_error(status: int, code: str, message: str) -> Answer:
        """Lambda itself refused (throttled, denied, not found, ...)."""
        return Answer(status, {"Type": "User", "message": message}, error_type=code)


@dataclass
class FakeLambda:
    """The server's state: what was invoked, and the answers still to play (the last one
    repeats; none: the function returns {"ok": true})."""

    url: str = ""
    invocations: list[Invocation] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_answer(self) -> Answer:
        with self.lock:
            if not self.answers:
                return Answer.result({"ok": True})
            return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


@contextmanager
def running_fake_lambda() -> Iterator[FakeLambda]:
    """A fake Lambda API on a free loopback port, for `endpoint_url`."""
    fake = FakeLambda()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            parts = self.path.split("?")[0].split("/")
            if len(parts) != 5 or parts[2] != "functions" or parts[4] != "invocations":
                self._answer(404, {"message": "not the Invoke API"}, {})
                return
            with fake.lock:
                fake.invocations.append(
                    Invocation(unquote(parts[3]), self.headers.get("X-Amz-Invocation-Type"), body)
                )
            answer = fake.next_answer()
            headers = {}
            if answer.function_error:
                headers["X-Amz-Function-Error"] = answer.function_error
            if answer.error_type:
                headers["x-amzn-ErrorType"] = answer.error_type
            self._answer(answer.status, answer.body, headers)

        def _answer(self, status: int, body: Any, headers: dict[str, str]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
