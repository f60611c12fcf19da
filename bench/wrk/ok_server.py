"""The load bench's baseline: a loopback HTTP/1.1 server that reads each POST's body and
answers 200 with a small JSON body, nothing else.

It is the same server class as the dev stack's front (the standard library's
`ThreadingHTTPServer`, a thread per connection, keep-alive, the same listen backlog), so wrk
against it measures the ceiling of the load tool plus Python HTTP serving on this machine:
what the front would do if the receiver cost nothing. Prints its port, serves until stdin
closes.
"""

from __future__ import annotations

import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

BODY = b'{"id": "evt_baseline", "duplicate": false}'


class Server(ThreadingHTTPServer):
    """As the front's server: daemon threads, a backlog of 128."""

    daemon_threads = True
    request_queue_size = 128

    def handle_error(self, request: object, client_address: object) -> None:
        """wrk drops its connections mid-request when its time is up: not worth a trace."""


class Handler(BaseHTTPRequestHandler):
    """Read the body, answer 200 (HTTP/1.1, TCP_NODELAY, no access log: as the front)."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as the front: headers and body are two sends

    def do_POST(self) -> None:
        """Answer any POST with 200 and a small JSON body."""
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(BODY)))
        self.end_headers()
        self.wfile.write(BODY)

    def log_message(self, format: str, *args: object) -> None:
        """No access log."""


def main() -> None:
    """Serve on a free loopback port until stdin closes."""
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
