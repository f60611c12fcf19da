"""`hookline demo`: Hookline's whole job, shown on the dev stack in half a minute.

Plays the three parties around Hookline: **Stripe** (signs and sends webhooks over HTTP to
the dev stack's front, retries one, and one request arrives with a forged signature), the
**operator** (creates a tenant, a Stripe source and an endpoint, as `hookline tenants add` …
would), and a **subscriber** (a small HTTP server here, which fails its first request and
checks the Standard Webhooks signature of every request, as a real subscriber should).
Then it prints what happened to each request and each delivery, attempt by attempt.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TextIO

import httpx

from hookline.db import Database, reset_database
from hookline.management import endpoint_service, source_service, tenant_service
from hookline.management.access import OPERATOR, Caller
from hookline.repositories import deliveries as delivery_repo
from hookline.repositories import devstack as devstack_repo
from hookline.settings import get_settings
from hookline_dev.local.devstate import BackgroundDevStack, DevState, find_running

FINAL_STATES = ("delivered", "failed", "dead")


# -- Stripe's side ---------------------------------------------------------------------------


def stripe_signature(secret: str, body: bytes, timestamp: int) -> str:
    """The `Stripe-Signature` header Stripe sends: HMAC-SHA256 of "{t}.{body}", hex, keyed by
    the whole `whsec_` string."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return f"t={timestamp},v1={digest.hexdigest()}"


def stripe_event(event_id: str, type: str, amount: int) -> bytes:
    """A small but realistic Stripe event."""
    return json.dumps(
        {
            "id": event_id,
            "object": "event",
            "type": type,
            "created": int(time.time()),
            "livemode": False,
            "data": {"object": {"object": type.split(".")[0], "amount": amount, "currency": "eur"}},
        }
    ).encode()


# -- the subscriber's side ---------------------------------------------------------------------


def verify_standard_webhook(secret: str, headers: dict[str, str], body: bytes) -> bool:
    """What a subscriber does with each request: recompute `v1,<base64 HMAC-SHA256 of
    "{webhook-id}.{webhook-timestamp}.{body}">` with the decoded `whsec_` secret and compare
    it, in constant time, with every signature in `webhook-signature`."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{headers.get('webhook-id')}.{headers.get('webhook-timestamp')}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    given = [s.split(",", 1)[1] for s in headers.get("webhook-signature", "").split() if "," in s]
    return any(hmac.compare_digest(expected, g) for g in given)


@dataclass
class SubscriberRequest:
    """One request the subscriber received, and what it answered."""

    at: float
    webhook_id: str
    event_type: str
    status: int
    signature_valid: bool


@dataclass
class Subscriber:
    """A subscriber on 127.0.0.1 that fails its first `fail_first` requests with 503."""

    secret: str = ""  # learnt when the endpoint is created
    fail_first: int = 1
    received: list[SubscriberRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, headers: dict[str, str], body: bytes) -> int:
        """Record a request; the status code to answer."""
        with self.lock:
            status = 503 if len(self.received) < self.fail_first else 200
            try:
                event_type = str(json.loads(body).get("type", "?"))
            except ValueError:
                event_type = "?"
            self.received.append(
                SubscriberRequest(
                    time.time(),
                    headers.get("webhook-id", "?"),
                    event_type,
                    status,
                    verify_standard_webhook(self.secret, headers, body) if self.secret else False,
                )
            )
            return status


@contextmanager
def serving(subscriber: Subscriber) -> Iterator[str]:
    """Serve the subscriber on a free port; yields its webhook URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status = subscriber.answer(headers, body)
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/webhooks/stripe"
    finally:
        server.shutdown()
        server.server_close()


# -- the demo ----------------------------------------------------------------------------------


@dataclass
class Sent:
    """One request Stripe sent, and Hookline's answer."""

    label: str
    status: int
    body: dict[str, Any]


def run_demo(state_dir: Path, out: TextIO, *, timeout: float | None = None) -> int:
    """Run the demo against the dev stack of `state_dir` (started for it if none runs)."""
    state = find_running(state_dir)
    background: BackgroundDevStack | None = None
    if state is None:
        say(out, "No dev stack is running: starting one for the demo (it stops afterwards)…")
        background = BackgroundDevStack(state_dir)
        state = background.start()
    try:
        return _demo(state, out, timeout, keeps_running=background is None)
    finally:
        if background is not None:
            background.stop()


def _demo(state: DevState, out: TextIO, timeout: float | None, *, keeps_running: bool) -> int:
    # The services below read the process-wide settings: take the stack's (its database, and
    # the key that seals secrets at rest), as `hookline dev --print-env` would give a shell.
    os.environ.update(state.env())
    reset_database()
    settings = get_settings()
    config = settings.config
    retry_after = config.retry_schedule_seconds[1] if len(config.retry_schedule_seconds) > 1 else 0
    wait_limit = timeout or retry_after * (1 + config.retry_jitter) + 60
    db = Database(state.database_url, max_size=2, timeout=5)
    subscriber = Subscriber()
    try:
        with serving(subscriber) as subscriber_url, httpx.Client(timeout=10) as http:
            say(out, f"Hookline demo — Stripe webhooks through the dev stack at {state.url}\n")
            say(
                out,
                "1. The operator sets things up (what `hookline tenants/sources/endpoints add` do)",
            )
            operator = Caller("demo", OPERATOR)
            tenant = tenant_service.create_tenant(
                db, config, operator, name="demo-shop", group=None
            )
            stripe_secret = "whsec_" + secrets.token_urlsafe(24)
            source = source_service.create_source(
                db, operator, {"tenant_id": tenant["id"], "scheme": "stripe",
                               "secret": stripe_secret, "name": "stripe"},
            )  # fmt: skip
            endpoint = endpoint_service.create_endpoint(
                db, settings, operator, {"tenant_id": tenant["id"], "url": subscriber_url,
                                         "description": "the demo's subscriber"},
            )  # fmt: skip
            subscriber.secret = endpoint["secret"]
            inbound = f"{state.url}{source['path']}"
            say(
                out,
                f"   tenant    {tenant['name']} ({tenant['id']}), tenant group {tenant['group']}",
            )
            say(out, f"   source    Stripe ({source['id']}): Stripe is told to POST to {inbound}")
            say(out, f"   endpoint  {subscriber_url} ({endpoint['id']})")
            say(out, "             run by this demo; it fails its first request (503)\n")

            say(out, "2. Stripe sends four requests")
            sent = send_stripe_requests(http, inbound, stripe_secret, out)
            accepted = {
                s.body["id"]: s.label
                for s in sent
                if s.status == 200 and not s.body.get("duplicate")
            }

            say(out, "\n3. Hookline fans out and delivers, signed, to the subscriber")
            say(out, f"   (retry schedule: {_schedule(config.retry_schedule_seconds)})")
            deliveries = wait_for_deliveries(db, list(accepted), wait_limit)
            delivered = report_deliveries(db, accepted, deliveries, out)

            say(out, "\n4. What the subscriber saw")
            say(out, "   (a retry carries the same webhook-id: subscribers dedupe on it)")
            for r in subscriber.received:
                check = "signature valid" if r.signature_valid else "SIGNATURE INVALID"
                what = f"{r.event_type:<26} answered {r.status}  {check}"
                say(out, f"   {_clock(r.at)}  webhook-id {r.webhook_id}  {what}")

            retried = sum(1 for d in deliveries.values() for x in d if x["attempt_count"] > 1)
            rejected = sum(1 for s in sent if s.status == 401)
            duplicates = sum(1 for s in sent if s.status == 200 and s.body.get("duplicate"))
            say(
                out,
                f"\nSummary: accepted {len(accepted)} · rejected {rejected} (401) · "
                f"deduplicated {duplicates} · retried {retried} · delivered {delivered} "
                f"of {sum(len(d) for d in deliveries.values())}",
            )
            if keeps_running:
                say(out, f"Look around: eval \"$(.venv/bin/hookline dev --print-env)\"; "
                         f"hookline events list --tenant {tenant['id']}")  # fmt: skip
            else:
                say(out, "Keep a stack running with `make run` in another terminal, then look "
                         "around with `hookline events list` (see docs/local.md).")  # fmt: skip
            all_valid = all(r.signature_valid for r in subscriber.received)
            ok = delivered == len(accepted) and rejected == 1 and duplicates == 1 and all_valid
            return 0 if ok else 1
    finally:
        db.close()


def send_stripe_requests(http: httpx.Client, url: str, secret: str, out: TextIO) -> list[Sent]:
    """The four requests, each printed with Hookline's answer."""
    now = int(time.time())
    paid = stripe_event("evt_demo_" + secrets.token_hex(6), "payment_intent.succeeded", 2000)
    refund = stripe_event("evt_demo_" + secrets.token_hex(6), "charge.refunded", 500)
    forged = stripe_event("evt_demo_" + secrets.token_hex(6), "payout.paid", 1_000_000)
    wrong = "whsec_not_the_secret"
    plan = [
        ("payment_intent.succeeded", paid, stripe_signature(secret, paid, now)),
        ("charge.refunded", refund, stripe_signature(secret, refund, now)),
        ("payment_intent.succeeded again (Stripe retries)", paid,
         stripe_signature(secret, paid, now + 1)),
        ("payout.paid with a forged signature", forged, stripe_signature(wrong, forged, now)),
    ]  # fmt: skip
    sent = []
    for label, body, signature in plan:
        response = http.post(
            url,
            content=body,
            headers={"Content-Type": "application/json", "Stripe-Signature": signature},
        )
        answer = response.json()
        sent.append(Sent(label, response.status_code, answer))
        if response.status_code == 200 and answer.get("duplicate"):
            meaning = f"deduplicated: same id {answer['id']}, stored once, not delivered again"
        elif response.status_code == 200:
            meaning = f"accepted: stored as {answer['id']}"
        else:
            meaning = f"rejected: {answer.get('detail', answer)} — nothing stored"
        say(out, f"   {label:<49} → {response.status_code}  {meaning}")
    return sent


def wait_for_deliveries(
    db: Database, event_ids: list[str], limit: float
) -> dict[str, list[dict[str, Any]]]:
    """Poll until every delivery of the events is finished (or `limit` seconds pass)."""
    deadline = time.monotonic() + limit
    while True:
        with db.connection() as conn:
            found = {e: devstack_repo.event_deliveries(conn, e) for e in event_ids}
        done = all(d and all(x["state"] in FINAL_STATES for x in d) for d in found.values())
        if done or time.monotonic() > deadline:
            return found
        time.sleep(0.25)


def report_deliveries(
    db: Database,
    accepted: dict[str, str],
    deliveries: dict[str, list[dict[str, Any]]],
    out: TextIO,
) -> int:
    """Print each delivery with its attempts; the number delivered."""
    delivered = 0
    for event_id, label in accepted.items():
        for d in deliveries.get(event_id) or []:
            with db.connection() as conn:
                attempts = delivery_repo.list_attempts(conn, d["id"])
            n = len(attempts)
            say(out, f"   {event_id} ({label}) → {d['state']} after {n} attempt{'s' * (n != 1)}")
            for i, a in enumerate(attempts, 1):
                result = str(a["status_code"]) if a["status_code"] else (a["error_class"] or "?")
                at = _clock(a["attempted_at"].timestamp())
                say(out, f"       attempt {i}  {at}  {result}  ({a['duration_ms']} ms)")
            delivered += d["state"] == "delivered"
        if not deliveries.get(event_id):
            say(out, f"   {event_id} ({label}) → not fanned out yet")
    return delivered


def say(out: TextIO, text: str) -> None:
    """Print a line of the demo at once."""
    out.write(text + "\n")
    out.flush()


def _clock(epoch: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(epoch)) + f".{int(epoch * 1000) % 1000:03d}"


def _schedule(seconds: tuple[float, ...]) -> str:
    def one(s: float) -> str:
        if s == 0:
            return "immediately"
        if s < 60:
            return f"{s:g} s"
        if s < 3600:
            return f"{s / 60:g} min"
        return f"{s / 3600:g} h"

    shown = ", ".join(one(s) for s in seconds[:4])
    return shown + (", …" if len(seconds) > 4 else "")
