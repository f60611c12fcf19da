"""Slack: `X-Slack-Signature: v0=<hex>` over "v0:{timestamp}:{body}"."""

from __future__ import annotations

from typing import Any, ClassVar

from hookline.errors import VerificationFailed
from hookline.verifiers.base import (
    FORM_MEDIA_TYPE,
    Headers,
    Verifier,
    body_digest,
    check_json_or_form_content_type,
    decode_hex,
    json_field,
    media_type,
    parse_form,
    parse_json,
    require_header,
)

SIGNATURE_HEADER = "X-Slack-Signature"
TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
SIGNATURE_PREFIX = "v0="


class SlackVerifier(Verifier):
    """HMAC-SHA256 hex keyed by the app's signing secret, with a timestamp tolerance.

    The Events API posts JSON; interactivity posts a form whose `payload` field is
    JSON; slash commands post a plain form, kept as a dict of its fields.
    """

    scheme: ClassVar[str] = "slack"
    requires_json: ClassVar[bool] = False
    handshake_name: ClassVar[str | None] = "slack_url_verification"

    def check_content_type(self, headers: Headers) -> None:
        """Accept JSON and URL-encoded forms, the two bodies Slack sends."""
        check_json_or_form_content_type(headers)

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the timestamp's tolerance, then `v0=<hex>` over "v0:{ts}:{body}"."""
        header = require_header(headers, SIGNATURE_HEADER)
        timestamp = require_header(headers, TIMESTAMP_HEADER)
        if not header.startswith(SIGNATURE_PREFIX):
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        decoded = decode_hex(header.removeprefix(SIGNATURE_PREFIX))
        if not decoded:
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        self.check_timestamp(timestamp)
        self.require_signature(f"v0:{timestamp}:".encode() + body, [decoded])

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """The JSON body; for a form, its `payload` field as JSON, else its fields."""
        if media_type(headers) == FORM_MEDIA_TYPE:
            form = parse_form(body)
            return parse_json(form["payload"]) if "payload" in form else form
        return parse_json(body)

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The inner event's type (`message`), else the payload's (`block_actions`)."""
        return json_field(payload, "event.type") or json_field(payload, "type") or self.scheme

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The Events API `event_id`, which Slack keeps across retries; else the digest."""
        return json_field(payload, "event_id") or body_digest(body)
