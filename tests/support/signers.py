"""Independent signers, written from each provider's documentation — never from the code
under test — so a test proves interoperability rather than self-consistency."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from typing import Any


def stripe_headers(secret: str, body: bytes, timestamp: int | None = None) -> dict[str, str]:
    """Stripe: HMAC-SHA256 over "{t}.{body}" keyed by the whole whsec_ string, hex."""
    t = int(time.time()) if timestamp is None else timestamp
    sig = hmac.new(secret.encode(), f"{t}.".encode() + body, hashlib.sha256).hexdigest()
    return {"Content-Type": "application/json", "Stripe-Signature": f"t={t},v1={sig}"}


def github_headers(secret: str, body: bytes, delivery: str, event: str = "push") -> dict[str, str]:
    """GitHub: X-Hub-Signature-256 = sha256=<hex HMAC of the body>."""
    sig = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {
        "Content-Type": "application/json",
        "X-Hub-Signature-256": f"sha256={sig}",
        "X-GitHub-Delivery": delivery,
        "X-GitHub-Event": event,
    }


def standard_headers(
    secret: str, body: bytes, msg_id: str, timestamp: int | None = None
) -> dict[str, str]:
    """Standard Webhooks: v1,<base64 HMAC-SHA256 of "{id}.{ts}.{body}">, decoded secret as key."""
    ts = int(time.time()) if timestamp is None else timestamp
    key = base64.b64decode(secret.removeprefix("whsec_"))
    sig = hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
    return {
        "Content-Type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(ts),
        "webhook-signature": "v1," + base64.b64encode(sig).decode(),
    }


def stripe_event(event_id: str, type: str = "payment_intent.succeeded", size: int = 0) -> bytes:
    """A realistic Stripe event body, padded to about `size` bytes."""
    doc: dict[str, Any] = {
        "id": event_id,
        "object": "event",
        "api_version": "2024-06-20",
        "created": int(time.time()),
        "type": type,
        "livemode": False,
        "pending_webhooks": 1,
        "request": {"id": "req_123", "idempotency_key": None},
        "data": {
            "object": {
                "id": "pi_3OxYz",
                "object": "payment_intent",
                "amount": 2000,
                "currency": "usd",
                "status": "succeeded",
                "metadata": {},
            }
        },
    }
    body = json.dumps(doc).encode()
    if size > len(body):
        doc["data"]["object"]["metadata"]["note"] = "x" * (size - len(body) - 12)
        body = json.dumps(doc).encode()
    return body


def verify_standard(
    secrets: list[str], headers: dict[str, str], body: bytes, tolerance: int = 300
) -> bool:
    """Standard Webhooks verification written from the spec: any `v1,` signature in the
    space-separated header must equal base64(HMAC-SHA256(key, "{id}.{ts}.{body}")) for one of
    the secrets, and the timestamp must be recent."""
    msg_id = headers["webhook-id"]
    ts = headers["webhook-timestamp"]
    if abs(time.time() - int(ts)) > tolerance:
        return False
    given = [
        s.split(",", 1)[1] for s in headers["webhook-signature"].split(" ") if s.startswith("v1,")
    ]
    for secret in secrets:
        key = base64.b64decode(secret.removeprefix("whsec_"))
        expected = base64.b64encode(
            hmac.new(key, f"{msg_id}.{ts}.".encode() + body, hashlib.sha256).digest()
        ).decode()
        if any(hmac.compare_digest(expected, g) for g in given):
            return True
    return False


def verify_ed25519(public_keys: list[str], headers: dict[str, str], body: bytes) -> list[str]:
    """Standard Webhooks `v1a` verification with PyNaCl (libsodium), independent of the code
    under test: each `v1a,<base64>` in the header is an Ed25519 signature of
    "{id}.{ts}.{body}"; returns the `whpk_` keys (of those given) that verify one of them."""
    from nacl.exceptions import BadSignatureError
    from nacl.signing import VerifyKey

    signed = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    given = [
        base64.b64decode(s.split(",", 1)[1])
        for s in headers["webhook-signature"].split(" ")
        if s.startswith("v1a,")
    ]
    verified = []
    for public in public_keys:
        key = VerifyKey(base64.b64decode(public.removeprefix("whpk_")))
        for sig in given:
            try:
                key.verify(signed, sig)
            except BadSignatureError:
                continue
            verified.append(public)
            break
    return verified
