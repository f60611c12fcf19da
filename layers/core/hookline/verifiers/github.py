"""GitHub: `X-Hub-Signature-256: sha256=<hex>` over the body."""

from __future__ import annotations

from typing import Any, ClassVar

from hookline.errors import BadRequest, VerificationFailed
from hookline.verifiers.base import (
    FORM_MEDIA_TYPE,
    Headers,
    Verifier,
    body_digest,
    check_json_or_form_content_type,
    decode_hex,
    header_value,
    keep_headers,
    media_type,
    parse_form,
    parse_json,
    require_header,
)

SIGNATURE_HEADER = "X-Hub-Signature-256"
SIGNATURE_PREFIX = "sha256="
EVENT_HEADER = "X-GitHub-Event"
DELIVERY_HEADER = "X-GitHub-Delivery"
HOOK_ID_HEADER = "X-GitHub-Hook-ID"


class GitHubVerifier(Verifier):
    """HMAC-SHA256 hex of the body; the event type is the event header plus the action.

    A webhook configured with content type `application/x-www-form-urlencoded` sends
    the JSON in a `payload` form field; the signature still covers the raw body.
    """

    scheme: ClassVar[str] = "github"
    requires_json: ClassVar[bool] = False

    def check_content_type(self, headers: Headers) -> None:
        """Accept the two content types GitHub can be configured to send."""
        check_json_or_form_content_type(headers)

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check `sha256=<hex>` against the body."""
        header = require_header(headers, SIGNATURE_HEADER)
        if not header.startswith(SIGNATURE_PREFIX):
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        decoded = decode_hex(header.removeprefix(SIGNATURE_PREFIX))
        if not decoded:
            raise VerificationFailed(f"malformed {SIGNATURE_HEADER} header")
        self.require_signature(body, [decoded])

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """The JSON body, or the JSON in the `payload` field of a form body."""
        if media_type(headers) == FORM_MEDIA_TYPE:
            form = parse_form(body)
            if "payload" not in form:
                raise BadRequest("form body has no payload field")
            return parse_json(form["payload"])
        return parse_json(body)

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """`X-GitHub-Event`, plus `.{action}` when the payload has one (`issues.opened`)."""
        event = header_value(headers, EVENT_HEADER) or self.scheme
        action = payload.get("action") if isinstance(payload, dict) else None
        if isinstance(action, str) and action:
            return f"{event}.{action}"
        return event

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The delivery id, which GitHub keeps when a delivery is redelivered."""
        return header_value(headers, DELIVERY_HEADER) or body_digest(body)

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """Event name, delivery id and hook id."""
        return keep_headers(headers, (EVENT_HEADER, DELIVERY_HEADER, HOOK_ID_HEADER))
