"""Outbound signing in the Standard Webhooks format.

Every delivery attempt carries `webhook-id` (stable across retries, so receivers
can dedupe), `webhook-timestamp` (seconds, fresh per attempt) and
`webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
keyed with the base64-decoded part of a `whsec_` secret. While a secret is
being rotated, every active secret signs and the signatures are joined with
spaces; a receiver accepts the message if any one verifies.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from secrets import token_bytes

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret
SECRET_BYTES = 32
# The specification asks for keys of 24 to 64 bytes; Svix-issued secrets are 24.
MIN_SECRET_BYTES = 24
MAX_SECRET_BYTES = 64


def generate_secret() -> str:
    """A new endpoint signing secret: `whsec_` + base64 of 32 random bytes."""
    return SECRET_PREFIX + base64.b64encode(token_bytes(SECRET_BYTES)).decode("ascii")


def secret_key(secret: str) -> bytes:
    """The HMAC key of a `whsec_` secret: its base64 part, decoded.

    Raises ValueError for a malformed secret. The message never repeats the
    secret, since errors end up in logs.
    """
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(f"signing secret must start with {SECRET_PREFIX!r}")
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("signing secret is not valid base64 after the prefix") from None
    if not MIN_SECRET_BYTES <= len(key) <= MAX_SECRET_BYTES:
        raise ValueError(
            f"signing secret must decode to {MIN_SECRET_BYTES} to {MAX_SECRET_BYTES} bytes"
        )
    return key


def signature(msg_id: str, timestamp: int, body: bytes, secret: str) -> str:
    """One `v1,<base64>` signature of the message under one secret."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def sign(msg_id: str, timestamp: int, body: bytes, secrets: Sequence[str]) -> dict[str, str]:
    """The Standard Webhooks headers for one attempt, signed by every active secret.

    `secrets` holds the current secret and, during a rotation, the previous
    ones; order is kept, duplicates sign once.
    """
    if not msg_id:
        raise ValueError("message id must not be empty")
    if timestamp < 0:
        raise ValueError("timestamp must be seconds since the epoch")
    if isinstance(secrets, str):
        # A lone string is a Sequence[str] too; signing per character would be silent nonsense.
        raise TypeError("secrets must be a sequence of secrets, not one string")
    active = list(dict.fromkeys(secrets))
    if not active:
        raise ValueError("at least one signing secret is required")
    return {
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": " ".join(signature(msg_id, timestamp, body, s) for s in active),
    }
