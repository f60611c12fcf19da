"""What endpoint auth adds to one attempt (decision 0067), piece by piece, in-process:

* **signing** — `hookline.signing.sign` with one HMAC secret, one Ed25519 key, and two
  Ed25519 keys (a rotation's overlap), per message of `--body-bytes`;
* **OAuth2 token** — `TokenCache.token` when the token is cached (every attempt but one per
  lifetime), and when it is fetched from a loopback token server (one per lifetime per
  endpoint per container);
* **TLS client** — `ssl_context` for a client certificate and a private CA (a cache miss of
  the per-endpoint client: once per endpoint and TLS version per container), and
  `EndpointAuth.unseal` + `client` when that client is cached;
* **save** — `parse_tls` checking a certificate, its key and a CA bundle (an API write).

No database: the claim's extra columns are NULL for endpoints without auth. Each row is the
median of `--repeats` runs of `--n` operations.

    .venv/bin/python bench/endpoint_auth.py [--n 2000] [--repeats 5] [--body-bytes 1024]

This is a benchmark, not a test: it prints a table and never fails on a figure.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from common import machine_facts, print_table

from hookline.endpoint_auth.oauth2 import OAuth2Client, TokenCache
from hookline.endpoint_auth.tls import parse_tls, ssl_context
from hookline.signing import generate_secret, generate_signing_key, sign
from tests.support.endpoint_auth import TestCA


def per_op(fn: Callable[[], object], n: int, repeats: int) -> float:
    """Median seconds per call."""
    runs = []
    for _ in range(repeats):
        began = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - began) / n)
    return statistics.median(runs)


def token_server() -> tuple[ThreadingHTTPServer, str]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are two writes

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            body = json.dumps({"access_token": "t", "token_type": "Bearer", "expires_in": 3600})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.encode())

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/token"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--body-bytes", type=int, default=1024)
    args = parser.parse_args()
    n, repeats = args.n, args.repeats
    body = b"x" * args.body_bytes
    hmac_secret, key, other = generate_secret(), generate_signing_key(), generate_signing_key()
    rows: list[tuple[str, str]] = []

    def row(name: str, seconds: float) -> None:
        rows.append((name, f"{seconds * 1e6:,.1f}"))

    row("sign: HMAC v1, one secret", per_op(lambda: sign("m", 1, body, [hmac_secret]), n, repeats))
    row("sign: Ed25519 v1a, one key", per_op(lambda: sign("m", 1, body, [key]), n, repeats))
    row("sign: Ed25519 v1a, two keys", per_op(lambda: sign("m", 1, body, [key, other]), n, repeats))

    server, url = token_server()
    http = httpx.Client(timeout=5)
    client = OAuth2Client(url, "id", "secret")
    cached = TokenCache(http, timeout=httpx.Timeout(5))
    cached.token("ep", client)
    row("oauth2: cached token", per_op(lambda: cached.token("ep", client), n, repeats))
    # The token the server answers, refused each time (`rejected`): each call is a fetch.
    fetching = TokenCache(http, timeout=httpx.Timeout(5))
    row(
        "oauth2: token fetched (loopback server)",
        per_op(lambda: fetching.token("ep", client, rejected="t"), max(1, n // 20), repeats),
    )
    server.shutdown()

    ca = TestCA()
    issued = ca.issue("hookline-client", server=False)
    material = {"client_certificate": issued.certificate, "client_key": issued.key,
                "ca_bundle": ca.pem}  # fmt: skip
    parsed = parse_tls(material)
    few = max(1, n // 20)
    row("tls: ssl context built (client miss)", per_op(
        lambda: ssl_context(parsed.public, parsed.client_key), few, repeats))  # fmt: skip
    row("tls: certificate, key, CA checked at save", per_op(
        lambda: parse_tls(material), few, repeats))  # fmt: skip

    print(f"Endpoint auth, per operation ({machine_facts()}; body {args.body_bytes} B)")
    print_table(("operation", "µs per op"), rows)


if __name__ == "__main__":
    main()
