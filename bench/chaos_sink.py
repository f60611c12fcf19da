"""The chaos run's subscribers: one loopback server for every endpoint, each misbehaving by
its profile (5xx, timeouts, 429 + Retry-After, 410, slow behind a cap), recording every
request it received for the audit (bench/chaos_harness.py)."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import Counter
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from tests.support.signers import verify_standard

if TYPE_CHECKING:
    from bench.chaos_harness import ChaosOptions


@dataclass(frozen=True)
class Profile:
    """How an endpoint misbehaves: per request, one draw decides its answer."""

    name: str
    p5xx: float = 0.0
    p_timeout: float = 0.0
    p429: float = 0.0
    gone: bool = False
    delay: float = 0.0


FLAKY = Profile("5xx 30%", p5xx=0.3)
TIMEOUTS = Profile("timeouts 10% + 5xx 10%", p5xx=0.1, p_timeout=0.1)
THROTTLED = Profile("429+Retry-After 20% + 5xx 10%", p5xx=0.1, p429=0.2)


def profile_for(index: int, options: ChaosOptions) -> Profile:
    """Endpoint 0 answers 410 (and gets disabled), endpoint 1 is slow with a cap, the rest
    cycle through flaky, timing-out and throttling."""
    if index == 0:
        return Profile("410 Gone", gone=True)
    if index == 1:
        return Profile(
            f"slow {options.slow_delay}s, cap {options.slow_cap}", delay=options.slow_delay
        )
    return (FLAKY, FLAKY, TIMEOUTS, THROTTLED)[index % 4]


@dataclass(frozen=True)
class Hit:
    """One request a subscriber received."""

    endpoint: int
    webhook_id: str
    n: int  # the event's number in the run (from the body); -1 if unreadable
    status: int  # what was answered (0: held past the client's timeout)
    signed: bool  # the signature verified with the endpoint's secret
    signature: str  # the webhook-signature header, for the secret-leak scan


class _QuietServer(ThreadingHTTPServer):
    """Connections reset by a killed deliverer are expected here, not worth a traceback."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass


class ChaosSink:
    """One loopback server for every endpoint (`/ep/<index>`), answering by profile."""

    def __init__(self, seed: int, options: ChaosOptions) -> None:
        self.seed = seed
        self.options = options
        self.profiles: dict[int, Profile] = {}
        self.secrets: dict[int, str] = {}
        self.hits: list[Hit] = []
        self.served: Counter[str] = Counter()
        self.in_flight: Counter[int] = Counter()
        self.max_in_flight: Counter[int] = Counter()
        self._seen: Counter[str] = Counter()
        self._lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                sink._serve(self)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.port}/ep/{index}"

    def _draw(self, webhook_id: str, nth: int) -> float:
        digest = hashlib.sha256(f"{self.seed}:{webhook_id}:{nth}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64

    def _serve(self, request: BaseHTTPRequestHandler) -> None:
        length = int(request.headers.get("Content-Length", 0))
        body = request.rfile.read(length)
        headers = {k.lower(): v for k, v in request.headers.items()}
        try:
            index = int(request.path.rsplit("/", 1)[1])
        except ValueError:
            index = -1
        webhook_id = headers.get("webhook-id", "")
        try:
            n = int(json.loads(body)["n"])
        except (ValueError, KeyError, TypeError):
            n = -1
        profile = self.profiles.get(index, Profile("unknown"))
        if len(body) < length:
            # The sender died mid-request (a SIGKILLed deliver process): nothing to answer.
            with self._lock:
                self.served["torn"] += 1
            return
        signed = index in self.secrets and verify_standard([self.secrets[index]], headers, body)
        with self._lock:
            nth = self._seen[webhook_id]
            self._seen[webhook_id] += 1
            self.in_flight[index] += 1
            self.max_in_flight[index] = max(self.max_in_flight[index], self.in_flight[index])
        draw = self._draw(webhook_id, nth)
        extra: dict[str, str] = {}
        delay = profile.delay
        if profile.gone:
            status, kind = 410, "410"
        elif draw < profile.p_timeout:
            status, kind, delay = 0, "timeout", self.options.timeout_delay
        elif draw < profile.p_timeout + profile.p429:
            status, kind, extra = 429, "429", {"Retry-After": "1"}
        elif draw < profile.p_timeout + profile.p429 + profile.p5xx:
            status, kind = (500, 502, 503)[nth % 3], "5xx"
        else:
            status, kind = 200, "2xx"
        try:
            if delay:
                time.sleep(delay)
            answer = status or 200  # a held request's answer comes too late to count
            payload = b'{"ok": true}' if answer < 300 else b'{"error": "chaos"}'
            request.send_response(answer)
            for k, v in extra.items():
                request.send_header(k, v)
            request.send_header("Content-Type", "application/json")
            request.send_header("Content-Length", str(len(payload)))
            request.end_headers()
            request.wfile.write(payload)
        except OSError:
            pass  # the deliverer gave up (timeout) or its process was killed
        finally:
            with self._lock:
                self.in_flight[index] -= 1
                self.served[kind] += 1
                self.hits.append(
                    Hit(index, webhook_id, n, status, signed, headers.get("webhook-signature", ""))
                )

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
