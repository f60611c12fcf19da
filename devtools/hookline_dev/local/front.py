"""The dev stack's HTTP front: what API Gateway (REST, v1) does in front of the receiver.

Each request becomes the proxy event API Gateway would build (`build_rest_event`: headers
and multi-value headers with repeats kept, the body base64-encoded because the stack declares
every media type binary, path parameters, request context) and the receiver handler's answer
goes back as API Gateway would write it. The routes are the stack's (infra/components/api.py):
`POST /in/{source_id}` (the receiver) and `ANY /v1/{proxy+}` (the management API function),
each to its own handler; anything else gets API Gateway's own
`403 Missing Authentication Token`. Also as on AWS: a body over 10 MB is refused with 413
before the function runs, and a handler that crashes is a `502 Internal server error`.

Where AWS asks `/v1` callers for SigV4, the front screens `/v1` requests itself
(`hookline_dev.local.guard`: its own Host, no foreign Origin, JSON bodies, a key unless
same-origin), so a web page cannot drive the stack (decision 0030).

Like API Gateway, the front tells the function how the request arrived: `X-Forwarded-Proto`,
`X-Forwarded-Port` and `X-Forwarded-For` (a tunnel's own, such as ngrok's `https`, are kept),
the `Host` the caller used, and a request path without a stage, since the front has none. So
providers that sign the URL (Twilio, ...) verify on `hookline dev` without a `public_url`.

`GET /_hookline/health` is the front's own (not the receiver's): the dev stack's liveness.

The server is the standard library's `ThreadingHTTPServer` (a thread per connection, HTTP/1.1
keep-alive): no dependency, and at the end-to-end benchmark's rates its own cost is small
next to the receiver's (see docs/decisions/0009-local-dev-stack.md).

Requests are handled concurrently. Both handlers are Powertools `APIGatewayRestResolver` apps,
which keep the event being resolved on a class attribute: the dev stack makes that state per
thread first (`hookline_dev.local.powertools.isolate_resolver_state`); where it cannot, the front
is built with `one_at_a_time=True` and invokes its handlers under one lock, like a single
receiver container (on AWS a container runs one invocation at a time).
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from hookline_dev.local.apigw import (
    LocalContext,
    build_http_event,
    build_rest_event,
    match_resource,
)
from hookline_dev.local.devstate import HEALTH_PATH
from hookline_dev.local.guard import ApiGuard, Refused

logger = logging.getLogger("hookline.local")

ApiHandler = Callable[[dict[str, Any], Any], dict[str, Any]]
"""A Lambda handler for API Gateway REST proxy events."""

MAX_PAYLOAD_BYTES = 10 * 1024 * 1024  # API Gateway's payload quota
# GET too on /in: the providers that handshake with GET (decision 0038).
ROUTES = {"/in/{source_id}": frozenset({"POST", "GET"}), "/v1/{proxy+}": None}  # None: ANY method
FUNCTION_NAMES = {"/in/{source_id}": "hookline-receiver", "/v1/{proxy+}": "hookline-api"}
# The console function's pages (hookline.console): routed when the front is given `console`.
CONSOLE_RESOURCES = ("/console", "/console/{proxy+}", "/portal", "/portal/{proxy+}")
ROUTES.update({resource: frozenset({"GET", "POST"}) for resource in CONSOLE_RESOURCES})
FUNCTION_NAMES.update({resource: "hookline-console" for resource in CONSOLE_RESOURCES})
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length"})


@dataclass
class FrontStats:
    """Requests served, by outcome class."""

    requests: int = 0
    accepted: int = 0  # 2xx from the receiver
    rejected: int = 0  # 4xx
    errors: int = 0  # 5xx (including 502 for a crashed handler)


class LocalFront:
    """A threaded HTTP server on 127.0.0.1 that invokes the handlers as API Gateway would."""

    def __init__(
        self,
        handler: ApiHandler,
        *,
        handlers: Mapping[str, ApiHandler] | None = None,
        port: int = 8080,
        timeout_seconds: float = 10.0,
        health: Callable[[], dict[str, Any]] | None = None,
        one_at_a_time: bool = True,
        operator_key: str | None = None,
        ingress: str = "rest",
        console: ApiHandler | None = None,
    ) -> None:
        """Bind 127.0.0.1:`port` (0 picks a free port); nothing is served until `start()`.

        `handler` serves every route unless `handlers` names another for a resource
        (`"/v1/{proxy+}"`: the management API function). `one_at_a_time` serialises the
        invocations (needed unless the handlers are safe to run concurrently in one process).
        `operator_key` is the key the API function takes from the stack's operator; the front
        adds it to same-origin `/v1` requests (`hookline_dev.local.guard`).
        `ingress` is the front door being imitated for `/in` (`infrastructure.ingress`,
        decision 0035): `rest` sends payload format 1.0, `http` and `function_url` 2.0 (for `/in`
        and `/v1`; the console's pages stay 1.0 until the console function is deployed).
        `console` serves the operator console and the tenant portal (`CONSOLE_RESOURCES`);
        without it those paths get API Gateway's 403, as routes the stack does not have.
        """
        self.ingress = ingress
        self.handlers = {resource: handler for resource in ROUTES}
        self.handlers.update(handlers or {})
        for resource in CONSOLE_RESOURCES:
            self.handlers[resource] = console or _no_route
        self.timeout_seconds = timeout_seconds
        # One invocation at a time, unless told the handlers may overlap (module docstring).
        self._invoking: threading.Lock | contextlib.nullcontext[None] = (
            threading.Lock() if one_at_a_time else contextlib.nullcontext()
        )
        self.health = health or (lambda: {"status": "ok"})
        self.stats = FrontStats()
        self._lock = threading.Lock()
        self._in_flight = 0
        self._idle = threading.Condition(self._lock)
        self.server = _Server(("127.0.0.1", port), _handler_class(self))
        self.port = int(self.server.server_address[1])
        self.guard = ApiGuard(self.port, operator_key)
        self._thread = threading.Thread(
            target=self.server.serve_forever, name="http-front", daemon=True
        )

    @property
    def url(self) -> str:
        """The front's base URL."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Serve in a background thread."""
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting requests and wait (up to `timeout`) for those being handled."""
        self.server.shutdown()
        self.server.server_close()
        deadline = time.monotonic() + timeout
        with self._idle:
            while self._in_flight and time.monotonic() < deadline:
                self._idle.wait(max(0.0, deadline - time.monotonic()))

    def invoke(
        self,
        method: str,
        path: str,
        query: str,
        headers: list[tuple[str, str]],
        body: bytes,
    ) -> tuple[int, list[tuple[str, str]], bytes]:
        """One request through API Gateway's rules and the handler: status, headers, body."""
        resource, _ = match_resource(path)
        if resource not in ROUTES or not _method_allowed(resource, method):
            return _api_gateway_error(403, "Missing Authentication Token")
        if len(body) > MAX_PAYLOAD_BYTES:
            return _api_gateway_error(413, "Request Too Long")
        if resource == "/v1/{proxy+}":
            try:
                headers = self.guard.screen(method, headers, body)
            except Refused as refused:
                kind = "ForbiddenException" if refused.status == 403 else None
                return _api_gateway_error(refused.status, refused.message, kind)
        headers = forwarded(headers, self.port)
        if resource in ("/in/{source_id}", "/v1/{proxy+}") and self.ingress != "rest":
            function_url = self.ingress == "function_url"
            event = build_http_event(
                method, path, headers, body, query=query, function_url=function_url
            )
        else:
            event = build_rest_event(method, path, headers, body, query=query, stage_in_path=False)
        context = LocalContext(
            function_name=FUNCTION_NAMES[resource], timeout_seconds=self.timeout_seconds
        )
        request_id = str(event["requestContext"]["requestId"])
        try:
            with self._invoking:
                response = self.handlers[resource](event, context)
            status, out_headers, out_body = _proxy_response(response)
        except Exception:
            # API Gateway answers a failed Lambda integration with 502 and nothing else.
            logger.exception("%s failed: 502 to the caller", FUNCTION_NAMES[resource])
            status, out_headers, out_body = _api_gateway_error(502, "Internal server error")
        out_headers.append(("x-amzn-RequestId", request_id))
        return status, out_headers, out_body

    def _count(self, status: int) -> None:
        with self._lock:
            self.stats.requests += 1
            if status < 300:
                self.stats.accepted += 1
            elif status < 500:
                self.stats.rejected += 1
            else:
                self.stats.errors += 1

    def _enter(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _leave(self) -> None:
        with self._idle:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.notify_all()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # an idle keep-alive connection must not block shutdown
    request_queue_size = 128  # the listen backlog: bursts of new connections from a benchmark


def _handler_class(front: LocalFront) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "hookline-dev"
        disable_nagle_algorithm = True  # headers and body are two sends on a kept-alive socket

        def _serve(self) -> None:
            front._enter()
            try:
                path, _, query = self.path.partition("?")
                if path == HEALTH_PATH and self.command == "GET":
                    payload = json.dumps(front.health()).encode()
                    self._write(200, [("Content-Type", "application/json")], payload)
                    return
                body = self._read_body()
                if body is None:
                    return
                headers = [(k, v) for k, v in self.headers.items()]
                status, out_headers, out_body = front.invoke(
                    self.command, path, query, headers, body
                )
                front._count(status)
                self._write(status, out_headers, out_body)
            finally:
                front._leave()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _serve

        def do_HEAD(self) -> None:
            self._write(*_api_gateway_error(403, "Missing Authentication Token"), head=True)

        def _read_body(self) -> bytes | None:
            if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
                return self._read_chunked()
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                self._write(*_api_gateway_error(400, "Bad Request"))
                return None
            if length > MAX_PAYLOAD_BYTES:
                self.close_connection = True  # the body is not read: the connection is done
                self._write(*_api_gateway_error(413, "Request Too Long"))
                return None
            return self.rfile.read(length) if length > 0 else b""

        def _read_chunked(self) -> bytes | None:
            chunks: list[bytes] = []
            size = 0
            while True:
                line = self.rfile.readline(1024).split(b";", 1)[0].strip()
                try:
                    length = int(line, 16)
                except ValueError:
                    self.close_connection = True
                    self._write(*_api_gateway_error(400, "Bad Request"))
                    return None
                if length == 0:
                    while self.rfile.readline(1024).strip():  # trailers
                        pass
                    return b"".join(chunks)
                size += length
                if size > MAX_PAYLOAD_BYTES:
                    self.close_connection = True
                    self._write(*_api_gateway_error(413, "Request Too Long"))
                    return None
                chunks.append(self.rfile.read(length))
                self.rfile.readline(1024)  # the CRLF after each chunk

        def _write(
            self, status: int, headers: list[tuple[str, str]], body: bytes, head: bool = False
        ) -> None:
            try:
                self.send_response(status)
                for name, value in headers:
                    if name.lower() not in _HOP_BY_HOP:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                if not head:
                    self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                self.close_connection = True  # the caller went away

        def log_message(self, format: str, *args: object) -> None:
            pass  # access logs would drown the structured logs; the receiver logs each request

    return Handler


def _no_route(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """API Gateway's answer for a path it has no route for."""
    status, headers, body = _api_gateway_error(403, "Missing Authentication Token")
    return {"statusCode": status, "headers": dict(headers), "body": body.decode()}


def _method_allowed(resource: str, method: str) -> bool:
    allowed = ROUTES[resource]
    return allowed is None or method.upper() in allowed


def forwarded(headers: list[tuple[str, str]], port: int) -> list[tuple[str, str]]:
    """`headers` with what API Gateway adds: X-Forwarded-Proto (`http`: the front's own
    scheme), X-Forwarded-Port and X-Forwarded-For (the caller, appended). A tunnel in front of
    the front (ngrok, cloudflared) has set its own proto and port: those are kept."""
    names = {name.lower() for name, _ in headers}
    out = [(n, v) for n, v in headers if n.lower() != "x-forwarded-for"]
    chain = [v for n, v in headers if n.lower() == "x-forwarded-for"]
    if "x-forwarded-proto" not in names:
        out.append(("X-Forwarded-Proto", "http"))
    if "x-forwarded-port" not in names:
        out.append(("X-Forwarded-Port", str(port)))
    out.append(("X-Forwarded-For", ", ".join([*chain, "127.0.0.1"])))
    return out


def _proxy_response(response: dict[str, Any]) -> tuple[int, list[tuple[str, str]], bytes]:
    """Status, headers and body of a Lambda proxy integration response, as API Gateway reads
    it: `headers` and `multiValueHeaders` merged (multi-value wins for a name in both)."""
    status = int(response["statusCode"])
    multi = {
        k.lower(): (k, [str(v) for v in vs])
        for k, vs in (response.get("multiValueHeaders") or {}).items()
    }
    headers: list[tuple[str, str]] = [
        (k, str(v)) for k, v in (response.get("headers") or {}).items() if k.lower() not in multi
    ]
    for name, values in multi.values():
        headers += [(name, v) for v in values]
    raw = response.get("body") or ""
    body = base64.b64decode(raw) if response.get("isBase64Encoded") else str(raw).encode()
    return status, headers, body


def _api_gateway_error(
    status: int, message: str, error_type: str | None = None
) -> tuple[int, list[tuple[str, str]], bytes]:
    """An error API Gateway itself answers (no function runs)."""
    kind = error_type or _ERROR_TYPES[status]
    headers = [("Content-Type", "application/json"), ("x-amzn-ErrorType", kind)]
    return status, headers, json.dumps({"message": message}).encode()


_ERROR_TYPES = {
    400: "BadRequestException",
    403: "MissingAuthenticationTokenException",
    413: "RequestTooLongException",
    415: "UnsupportedMediaTypeException",
    502: "InternalServerErrorException",
}
