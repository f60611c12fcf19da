"""Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>…]`."""

from __future__ import annotations

from typing import Any, ClassVar

from hookline.errors import VerificationFailed
from hookline.verifiers.base import (
    Headers,
    Verifier,
    body_digest,
    decode_hex,
    json_field,
    require_header,
)

SIGNATURE_HEADER = "Stripe-Signature"


class StripeVerifier(Verifier):
    """HMAC-SHA256 hex over "{t}.{body}", keyed by the whole `whsec_…` string.

    Stripe lists one `v1` per active secret while a secret is being rolled; `v0` (test
    mode's legacy scheme) and unknown keys are ignored.
    """

    scheme: ClassVar[str] = "stripe"

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the timestamp's tolerance, then the v1 signatures over "{t}.{body}"."""
        header = require_header(headers, SIGNATURE_HEADER)
        timestamps: list[str] = []
        signatures: list[bytes] = []
        for item in filter(None, (part.strip() for part in header.split(","))):
            key, sep, value = item.partition("=")
            if not sep:
                raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
            if key == "t":
                timestamps.append(value.strip())
            elif key == "v1":
                decoded = decode_hex(value)
                if decoded:
                    signatures.append(decoded)
        # Two timestamps would leave it ambiguous which one the signature covers.
        if len(timestamps) != 1:
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        self.check_timestamp(timestamps[0])
        self.require_signature(f"{timestamps[0]}.".encode() + body, signatures)

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The event's `type` (`invoice.paid`, …)."""
        return json_field(payload, "type") or self.scheme

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The event's `id` (`evt_…`), which Stripe keeps across retries."""
        return json_field(payload, "id") or body_digest(body)
