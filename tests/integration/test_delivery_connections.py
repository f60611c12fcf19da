"""The deliverer's connections to an endpoint, against a real keep-alive server on loopback:
kept alive while other requests are busy, never reused once the server has closed them, and
no cookie kept (hookline.connection_pool, hookline.webhook_client; decisions 0075, 0112)."""

from __future__ import annotations

import http.server
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from hookline.guarded_http import guarded_client
from hookline.webhook_client import WebhookClient

pytestmark = pytest.mark.integration

TIMEOUT = {"connect": 5.0, "read": 5.0, "write": 5.0, "pool": 5.0}


@dataclass
class Server:
    """A keep-alive HTTP/1.1 server that counts the connections it accepted."""

    port: int = 0
    connections: int = 0
    cookies: list[str | None] = field(default_factory=list)  # each request's Cookie header
    release: threading.Event = field(default_factory=threading.Event)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            state.connections += 1

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            state.cookies.append(self.headers.get("cookie"))
            if self.path == "/held":
                state.release.wait(5)
            self.send_response(200)
            if self.path == "/sets-cookie":
                self.send_header("set-cookie", "session=tenant-a; Path=/")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")
            # /bye closes its connection without saying so (no Connection: close)
            self.close_connection = self.path == "/bye"

        def log_message(self, format: str, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.release.set()
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def client(max_keepalive: int = 20, max_connections: int = 10) -> WebhookClient:
    return WebhookClient(
        allow_private=True,
        allow_http=True,
        max_connections=max_connections,
        max_keepalive=max_keepalive,
    )


def post(http: WebhookClient, url: str) -> int:
    response = http.post_webhook(url, b"{}", {"content-type": "application/json"}, TIMEOUT)
    try:
        assert b"".join(response.iter_bytes()) == b"ok"
        return response.status_code
    finally:
        response.close()


def wait_until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 5
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_an_idle_connection_is_kept_alive_while_another_request_is_in_flight(server):
    # Given a client allowed one idle keep-alive connection, a request waiting for its answer
    http = client(max_keepalive=1)
    held = threading.Thread(target=post, args=(http, server.url("/held")))
    held.start()
    try:
        wait_until(lambda: server.connections == 1)
        # and a delivery answered meanwhile (on a second connection, now idle)
        assert post(http, server.url("/fast")) == 200
        # When the next delivery goes out
        assert post(http, server.url("/fast")) == 200
    finally:
        server.release.set()
        held.join(timeout=5)
    # Then it reused the idle connection: no third connection was opened
    # (httpcore 1.0.9 closed it, counting the busy connection as surplus keep-alive)
    assert server.connections == 2


def test_a_connection_the_endpoint_closed_is_not_reused(server):
    # Given a delivery whose endpoint closed the connection after answering, unannounced
    http = client()
    assert post(http, server.url("/bye")) == 200
    time.sleep(0.1)  # the server's close has arrived (well within a pool sweep)
    # When the next delivery goes out at once
    status = post(http, server.url("/fast"))
    # Then it went out on a new connection and was answered, not failed on the closed one
    assert status == 200 and server.connections == 2


def test_many_requests_at_once_keep_at_most_the_allowed_idle_connections(server):
    # Given a client allowed two idle connections, and four requests in flight at once
    http = client(max_keepalive=2)
    threads = [threading.Thread(target=post, args=(http, server.url("/held"))) for _ in range(4)]
    for thread in threads:
        thread.start()
    wait_until(lambda: server.connections == 4)
    # When they are answered
    server.release.set()
    for thread in threads:
        thread.join(timeout=5)
    # Then two connections stay open for reuse, and later deliveries open none
    for _ in range(3):
        assert post(http, server.url("/fast")) == 200
    assert server.connections == 4


def test_with_every_connection_busy_a_delivery_waits_for_one(server):
    # Given a client allowed one connection, busy with a request waiting for its answer
    http = client(max_connections=1)
    answers: list[int] = []
    held = threading.Thread(target=lambda: answers.append(post(http, server.url("/held"))))
    held.start()
    wait_until(lambda: server.connections == 1)
    # When another delivery goes out, and the first is answered meanwhile
    later = threading.Thread(target=lambda: answers.append(post(http, server.url("/fast"))))
    later.start()
    time.sleep(0.1)
    server.release.set()
    held.join(timeout=5)
    later.join(timeout=5)
    # Then both were answered, on the one connection
    assert answers == [200, 200] and server.connections == 1


def test_a_cookie_an_endpoint_sets_is_never_sent_back(server):
    # Given a delivery whose endpoint answered with Set-Cookie
    http = client()
    assert post(http, server.url("/sets-cookie")) == 200
    # When a later delivery goes to the same host
    assert post(http, server.url("/fast")) == 200
    # Then it does not carry the cookie
    assert server.cookies == [None, None]


def test_the_guarded_httpx_client_keeps_no_cookie_either(server):
    # Given the httpx client of token fetches and notifications, answered with Set-Cookie
    with guarded_client(allow_private=True, allow_http=True, timeout=5) as http:
        http.post(server.url("/sets-cookie"), content=b"{}")
        # When it calls the same host again
        http.post(server.url("/fast"), content=b"{}")
        # Then the second request carries no cookie, and the client kept none
        assert server.cookies == [None, None]
        assert not http.cookies
