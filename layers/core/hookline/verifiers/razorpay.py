"""Razorpay: `X-Razorpay-Signature: <hex>` over the body."""

from __future__ import annotations

from typing import Any, ClassVar

from hookline.errors import VerificationFailed
from hookline.verifiers.base import (
    Headers,
    Verifier,
    body_digest,
    decode_hex,
    header_value,
    json_field,
    keep_headers,
    require_header,
)

SIGNATURE_HEADER = "X-Razorpay-Signature"
EVENT_ID_HEADER = "X-Razorpay-Event-Id"


class RazorpayVerifier(Verifier):
    """HMAC-SHA256 hex of the body, keyed by the webhook secret set in the dashboard."""

    scheme: ClassVar[str] = "razorpay"

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the hex HMAC against the body."""
        decoded = decode_hex(require_header(headers, SIGNATURE_HEADER))
        if not decoded:
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        self.require_signature(body, [decoded])

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The payload's `event` (`payment.captured`, …)."""
        return json_field(payload, "event") or self.scheme

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The event id header, which Razorpay keeps across retries."""
        return header_value(headers, EVENT_ID_HEADER) or body_digest(body)

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """The event id."""
        return keep_headers(headers, (EVENT_ID_HEADER,))
