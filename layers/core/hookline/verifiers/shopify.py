"""Shopify: `X-Shopify-Hmac-Sha256: <base64>` over the body."""

from __future__ import annotations

from typing import Any, ClassVar

from hookline.errors import VerificationFailed
from hookline.verifiers.base import (
    Headers,
    Verifier,
    body_digest,
    decode_base64,
    header_value,
    keep_headers,
    require_header,
)

SIGNATURE_HEADER = "X-Shopify-Hmac-Sha256"
TOPIC_HEADER = "X-Shopify-Topic"
SHOP_HEADER = "X-Shopify-Shop-Domain"
WEBHOOK_ID_HEADER = "X-Shopify-Webhook-Id"
EVENT_ID_HEADER = "X-Shopify-Event-Id"
API_VERSION_HEADER = "X-Shopify-API-Version"


class ShopifyVerifier(Verifier):
    """HMAC-SHA256 base64 of the body, keyed by the app's client secret."""

    scheme: ClassVar[str] = "shopify"

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the base64 HMAC against the body."""
        decoded = decode_base64(require_header(headers, SIGNATURE_HEADER))
        if not decoded:
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        self.require_signature(body, [decoded])

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The topic (`orders/create`, …)."""
        return header_value(headers, TOPIC_HEADER) or self.scheme

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The webhook id, else the event id (one event can reach several webhooks)."""
        return header_value(headers, WEBHOOK_ID_HEADER, EVENT_ID_HEADER) or body_digest(body)

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """Topic, shop domain, webhook and event ids, API version."""
        return keep_headers(
            headers,
            (TOPIC_HEADER, SHOP_HEADER, WEBHOOK_ID_HEADER, EVENT_ID_HEADER, API_VERSION_HEADER),
        )
