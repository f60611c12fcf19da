"""Fake provider APIs on loopback, written from the providers' documentation: Stripe's
`GET /v1/events` and GitHub's hook deliveries API. Each records the requests it served."""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


@dataclass
class Served:
    """One request the fake answered."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


@dataclass
class FakeStripe:
    """Stripe's events list: newest first, `created[gt]`, `types[]`, `limit`,
    `starting_after`, `has_more`; Bearer authentication with one API key."""

    api_key: str = "sk_test_fake"
    events: list[dict[str, Any]] = field(default_factory=list)
    fail_with: int | None = None  # answer every request with this status

    def add(self, event_id: str, created: int, type: str = "invoice.paid") -> dict[str, Any]:
        """An event in the account, as the API renders it."""
        event = {
            "id": event_id,
            "object": "event",
            "api_version": "2024-06-20",
            "created": created,
            "type": type,
            "livemode": False,
            "pending_webhooks": 1,
            "data": {"object": {"id": f"in_{event_id}", "object": "invoice"}},
        }
        self.events.append(event)
        return event

    def answer(self, served: Served) -> tuple[int, dict[str, str], Any]:
        if self.fail_with:
            return self.fail_with, {}, {"error": {"message": "unavailable"}}
        if served.headers.get("authorization") != f"Bearer {self.api_key}":
            return 401, {}, {"error": {"type": "invalid_request_error"}}
        if served.method != "GET" or served.path != "/v1/events":
            return 404, {}, {"error": {"message": "no such route"}}
        q = served.query
        gt = int(q.get("created[gt]", ["0"])[0])
        limit = min(100, int(q.get("limit", ["10"])[0]))
        types = q.get("types[]")
        listed = sorted(
            (e for e in self.events if e["created"] > gt and (not types or e["type"] in types)),
            key=lambda e: (e["created"], e["id"]),
            reverse=True,
        )
        if "starting_after" in q:
            ids = [e["id"] for e in listed]
            listed = listed[ids.index(q["starting_after"][0]) + 1 :]
        page = listed[:limit]
        body = {
            "object": "list",
            "url": "/v1/events",
            "has_more": len(listed) > limit,
            "data": page,
        }
        return 200, {}, body


@dataclass
class FakeGitHub:
    """A repository hook's deliveries: newest first, `per_page`, `cursor` with a Link header;
    `POST …/deliveries/{id}/attempts` records a redelivery request and answers 202."""

    token: str = "ghp_fake"
    owner: str = "acme"
    repo: str = "shop"
    hook_id: int = 42
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    redelivered: list[int] = field(default_factory=list)
    base_url: str = ""
    _ids: Iterator[int] = field(default_factory=lambda: itertools.count(1000))

    @property
    def hook_path(self) -> str:
        return f"/repos/{self.owner}/{self.repo}/hooks/{self.hook_id}"

    def add(self, guid: str, status_code: int, at: datetime, event: str = "push") -> int:
        """A delivery GitHub made; its id."""
        delivery_id = next(self._ids)
        self.deliveries.append(
            {
                "id": delivery_id,
                "guid": guid,
                "delivered_at": at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "redelivery": False,
                "duration": 0.1,
                "status": "OK" if 200 <= status_code < 300 else "Invalid HTTP Response: 503",
                "status_code": status_code,
                "event": event,
                "action": None,
                "installation_id": None,
                "repository_id": 1,
            }
        )
        return delivery_id

    def answer(self, served: Served) -> tuple[int, dict[str, str], Any]:
        if served.headers.get("authorization") != f"Bearer {self.token}":
            return 401, {}, {"message": "Bad credentials"}
        if served.method == "GET" and served.path == f"{self.hook_path}/deliveries":
            per_page = min(100, int(served.query.get("per_page", ["30"])[0]))
            listed = sorted(self.deliveries, key=lambda d: d["id"], reverse=True)
            if "cursor" in served.query:
                start = int(served.query["cursor"][0])
                listed = [d for d in listed if d["id"] <= start]
            page, rest = listed[:per_page], listed[per_page:]
            headers = {}
            if rest:
                url = (
                    f"{self.base_url}{self.hook_path}/deliveries"
                    f"?per_page={per_page}&cursor={rest[0]['id']}"
                )
                headers["Link"] = f'<{url}>; rel="next"'
            return 200, headers, page
        prefix = f"{self.hook_path}/deliveries/"
        if served.method == "POST" and served.path.startswith(prefix):
            delivery_id = int(served.path[len(prefix) :].removesuffix("/attempts"))
            if not any(d["id"] == delivery_id for d in self.deliveries):
                return 404, {}, {"message": "Not Found"}
            self.redelivered.append(delivery_id)
            return 202, {}, {}
        return 404, {}, {"message": "Not Found"}


class ProviderServer:
    """One HTTP server playing Stripe and GitHub (by path)."""

    def __init__(self) -> None:
        self.stripe = FakeStripe()
        self.github = FakeGitHub()
        self.served: list[Served] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length", 0))
                if length:
                    self.rfile.read(length)
                served = Served(
                    self.command,
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                )
                with fake._lock:
                    fake.served.append(served)
                    provider = fake.stripe if parts.path.startswith("/v1/") else fake.github
                    status, headers, doc = provider.answer(served)
                payload = json.dumps(doc).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = _handle
            do_POST = _handle

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.github.base_url = self.url
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def requests(self, method: str, path_prefix: str) -> list[Served]:
        """What was asked of one route."""
        with self._lock:
            return [s for s in self.served if s.method == method and s.path.startswith(path_prefix)]


@contextmanager
def running_providers() -> Iterator[ProviderServer]:
    """A fake Stripe and GitHub on a free loopback port."""
    server = ProviderServer()
    server._thread.start()
    try:
        yield server
    finally:
        server.server.shutdown()
        server.server.server_close()
