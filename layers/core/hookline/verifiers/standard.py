"""Standard Webhooks (https://www.standardwebhooks.com/) and Svix, its origin."""

from __future__ import annotations

from typing import Any, ClassVar

from hookline.verifiers.base import (
    Headers,
    Verifier,
    decode_base64,
    json_field,
    keep_headers,
    require_header,
    signed_header_bytes,
)

WHSEC_PREFIX = "whsec_"


class StandardWebhooksVerifier(Verifier):
    """`webhook-signature: v1,<base64>[ v1,<base64>…]` over "{id}.{timestamp}.{body}".

    The secret is `whsec_<base64>` (the prefix is optional) and its decoded bytes are
    the HMAC-SHA256 key. Entries of other versions (`v1a`, …) are ignored.
    """

    scheme: ClassVar[str] = "standard"
    header_prefix: ClassVar[str] = "webhook"

    def key_from_secret(self, secret: str) -> bytes:
        """The base64-decoded part of `whsec_<base64>`; ValueError when it is not base64."""
        encoded = secret.strip().removeprefix(WHSEC_PREFIX)
        key = decode_base64(encoded)
        if not key:
            raise ValueError(f"a {self.scheme} secret must be {WHSEC_PREFIX} followed by base64")
        return key

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the timestamp's tolerance, then the v1 signatures over id, timestamp, body."""
        msg_id = signed_header_bytes(headers, f"{self.header_prefix}-id")
        timestamp = require_header(headers, f"{self.header_prefix}-timestamp")
        header = require_header(headers, f"{self.header_prefix}-signature")
        self.check_timestamp(timestamp)
        signatures: list[bytes] = []
        for entry in header.split():
            version, _, encoded = entry.partition(",")
            decoded = decode_base64(encoded) if version == "v1" else None
            if decoded:
                signatures.append(decoded)
        message = msg_id + f".{timestamp}.".encode() + body
        self.require_signature(message, signatures)

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The payload's `type`, or the scheme name when the sender sets none."""
        return json_field(payload, "type") or self.scheme

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The message id, which the sender keeps across retries of one message."""
        return require_header(headers, f"{self.header_prefix}-id")

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """The message id and timestamp."""
        prefix = self.header_prefix
        return keep_headers(headers, (f"{prefix}-id", f"{prefix}-timestamp"))


class SvixVerifier(StandardWebhooksVerifier):
    """Svix: Standard Webhooks with `svix-id`, `svix-timestamp` and `svix-signature`."""

    scheme: ClassVar[str] = "svix"
    header_prefix: ClassVar[str] = "svix"
