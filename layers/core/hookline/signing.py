"""Outbound signing in the Standard Webhooks format.

Every delivery attempt carries `webhook-id` (stable across retries, so receivers
can dedupe), `webhook-timestamp` (seconds, fresh per attempt) and
`webhook-signature`: `v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`,
keyed with the base64-decoded part of a `whsec_` secret. While a secret is
being rotated, every active secret signs and the signatures are joined with
spaces; a receiver accepts the message if any one verifies.

An endpoint signed with Ed25519 (the specification's asymmetric scheme) holds
`whsk_<base64 of the 32-byte private key>` keys instead, and each signs
`v1a,<base64 Ed25519 signature of the same "{id}.{timestamp}.{body}">`; the
receiver verifies with the `whpk_<base64 of the 32-byte public key>` key.
Rotation is the same: during the overlap both keys sign (decision 0067).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Sequence
from secrets import token_bytes
from typing import TYPE_CHECKING

# Ed25519 (`v1a`) loads cryptography's asymmetric half when a key is used: most endpoints sign
# with HMAC, and deliver's cold start need not pay for it (decision 0048).
if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

SECRET_PREFIX = "whsec_"  # noqa: S105 - the format's prefix, not a secret
SECRET_BYTES = 32
# The specification asks for keys of 24 to 64 bytes; Svix-issued secrets are 24.
MIN_SECRET_BYTES = 24
MAX_SECRET_BYTES = 64
PRIVATE_KEY_PREFIX = "whsk_"
PUBLIC_KEY_PREFIX = "whpk_"


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


def generate_signing_key() -> str:
    """A new Ed25519 signing key: `whsk_` + base64 of its 32 private bytes."""
    return PRIVATE_KEY_PREFIX + base64.b64encode(token_bytes(32)).decode("ascii")


def _ed25519_key(secret: str) -> Ed25519PrivateKey:
    try:
        raw = base64.b64decode(secret[len(PRIVATE_KEY_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("signing key is not valid base64 after the prefix") from None
    if len(raw) != 32:
        raise ValueError("an Ed25519 signing key must decode to 32 bytes")
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    return Ed25519PrivateKey.from_private_bytes(raw)


def public_key(secret: str) -> str:
    """The `whpk_` public key of a `whsk_` signing key (what receivers verify with)."""
    if not secret.startswith(PRIVATE_KEY_PREFIX):
        raise ValueError(f"signing key must start with {PRIVATE_KEY_PREFIX!r}")
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = _ed25519_key(secret).public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
    return PUBLIC_KEY_PREFIX + base64.b64encode(raw).decode("ascii")


def signature(msg_id: str, timestamp: int, body: bytes, secret: str) -> str:
    """One signature of the message under one secret: `v1,<base64 HMAC>` for a `whsec_`
    secret, `v1a,<base64 Ed25519>` for a `whsk_` key."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    if secret.startswith(PRIVATE_KEY_PREFIX):
        return "v1a," + base64.b64encode(_ed25519_key(secret).sign(signed)).decode("ascii")
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
