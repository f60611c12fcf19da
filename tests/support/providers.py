"""Each inbound provider's signer, written from its documentation with plain hmac, hashlib and
base64 (never by the code under test), and one table of providers: the verifier unit tests
and the coverage-guided verifier fuzzer (tests/fuzz/verifiers.py) share them."""

from __future__ import annotations

import base64
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from hookline.verifiers import SourceConfig, Verifier
from hookline.verifiers.schemes import SCHEMES

NOW = 1_700_000_000
TOLERANCE = 300
JSON_TYPE = {"Content-Type": "application/json"}
FORM_TYPE = {"Content-Type": "application/x-www-form-urlencoded"}
BODY = b'{"id": "evt_1", "type": "thing.happened", "event": "thing.happened"}'


# --- signers, written from each provider's documentation -----------------------------


def hmac_hex(key: bytes, message: bytes, digest: str = "sha256") -> str:
    return hmac.new(key, message, digest).hexdigest()


def hmac_b64(key: bytes, message: bytes, digest: str = "sha256") -> str:
    return base64.b64encode(hmac.new(key, message, digest).digest()).decode()


def whsec(raw_key: bytes) -> str:
    return "whsec_" + base64.b64encode(raw_key).decode()


def standard_signature(secret: str, msg_id: str, timestamp: int, body: bytes) -> str:
    """Standard Webhooks: v1,base64(HMAC-SHA256(b64decode(secret), "id.ts.body"))."""
    key = base64.b64decode(secret.removeprefix("whsec_"))
    return "v1," + hmac_b64(key, f"{msg_id}.{timestamp}.".encode() + body)


def stripe_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Stripe: hex HMAC-SHA256 of "t.body" keyed by the whole whsec_ string."""
    return hmac_hex(secret.encode(), f"{timestamp}.".encode() + body)


def slack_signature(secret: str, timestamp: int, body: bytes) -> str:
    """Slack: v0= + hex HMAC-SHA256 of "v0:ts:body" keyed by the signing secret."""
    return "v0=" + hmac_hex(secret.encode(), f"v0:{timestamp}:".encode() + body)


MSG_ID = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W"


def sign_standard(prefix: str) -> Callable[[str, bytes, int], dict[str, str]]:
    def sign(secret: str, body: bytes, at: int) -> dict[str, str]:
        return {
            **JSON_TYPE,
            f"{prefix}-id": MSG_ID,
            f"{prefix}-timestamp": str(at),
            f"{prefix}-signature": standard_signature(secret, MSG_ID, at, body),
        }

    return sign


def sign_stripe(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {**JSON_TYPE, "Stripe-Signature": f"t={at},v1={stripe_signature(secret, at, body)}"}


def sign_github(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {
        **JSON_TYPE,
        "X-GitHub-Event": "issues",
        "X-GitHub-Delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
        "X-GitHub-Hook-ID": "292430182",
        "X-Hub-Signature-256": "sha256=" + hmac_hex(secret.encode(), body),
    }


def sign_shopify(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {
        **JSON_TYPE,
        "X-Shopify-Topic": "orders/create",
        "X-Shopify-Shop-Domain": "example.myshopify.com",
        "X-Shopify-Webhook-Id": "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043",
        "X-Shopify-Event-Id": "98880550-7158-44d4-b7cd-2c97c8a091b5",
        "X-Shopify-Hmac-Sha256": hmac_b64(secret.encode(), body),
    }


def sign_slack(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {
        **JSON_TYPE,
        "X-Slack-Request-Timestamp": str(at),
        "X-Slack-Signature": slack_signature(secret, at, body),
    }


def sign_razorpay(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {
        **JSON_TYPE,
        "X-Razorpay-Event-Id": "Jbq2nPR8xqUS5Q",
        "X-Razorpay-Signature": hmac_hex(secret.encode(), body),
    }


# A generic sender that signs "{timestamp}.{body}" with sha256, hex, behind "sha256=".
TIMED_HMAC = {
    "header": "X-Acme-Signature",
    "prefix": "sha256=",
    "timestamp_header": "X-Acme-Timestamp",
    "signed_template": "{timestamp}.{body}",
    "id_header": "X-Acme-Delivery",
    "type_field": "type",
}


def sign_timed_hmac(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {
        **JSON_TYPE,
        "X-Acme-Timestamp": str(at),
        "X-Acme-Delivery": "dlv_42",
        "X-Acme-Signature": "sha256=" + hmac_hex(secret.encode(), f"{at}.".encode() + body),
    }


# A generic sender that signs the body alone with sha1, base64, and names the type in a header.
PLAIN_HMAC = {
    "header": "X-Legacy-Signature",
    "algorithm": "sha1",
    "encoding": "base64",
    "type_header": "X-Legacy-Event",
}


def sign_plain_hmac(secret: str, body: bytes, at: int) -> dict[str, str]:
    return {
        **JSON_TYPE,
        "X-Legacy-Event": "order.shipped",
        "X-Legacy-Signature": hmac_b64(secret.encode(), body, "sha1"),
    }


# --- one table of providers for the behaviour they all share -------------------------


@dataclass(frozen=True)
class Provider:
    """A scheme, its current and previous secrets, and how its sender signs a request."""

    name: str
    scheme: str
    secret: str
    old_secret: str
    sign: Callable[[str, bytes, int], dict[str, str]]
    signature_header: str
    timestamp_header: str | None = None  # a header of its own; Stripe's is inside the signature
    signs_time: bool = False
    options: Mapping[str, Any] = field(default_factory=dict)

    def verifier(self, *secrets: str) -> Verifier:
        config = SourceConfig(
            secrets=list(secrets or (self.secret,)),
            tolerance_seconds=TOLERANCE,
            options=self.options,
        )
        return SCHEMES[self.scheme](config, clock=lambda: NOW)


PROVIDERS = [
    Provider(
        "standard",
        "standard",
        whsec(b"standard-current-key-0123456789ab"),
        whsec(b"standard-previous-key-9876543210"),
        sign_standard("webhook"),
        "webhook-signature",
        "webhook-timestamp",
        signs_time=True,
    ),
    Provider(
        "svix",
        "svix",
        whsec(b"svix-current-key-0123456789abcdef"),
        whsec(b"svix-previous-key-fedcba98765432"),
        sign_standard("svix"),
        "svix-signature",
        "svix-timestamp",
        signs_time=True,
    ),
    Provider(
        "stripe",
        "stripe",
        "whsec_stripeCurrent0123456789abcdef",
        "whsec_stripePrevious9876543210fedcb",
        sign_stripe,
        "Stripe-Signature",
        signs_time=True,
    ),
    Provider("github", "github", "gh-current", "gh-previous", sign_github, "X-Hub-Signature-256"),
    Provider(
        "shopify",
        "shopify",
        "shpss_current",
        "shpss_previous",
        sign_shopify,
        "X-Shopify-Hmac-Sha256",
    ),
    Provider(
        "slack",
        "slack",
        "8f742231b10e8888abcd99yyyzzz85a5",
        "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
        sign_slack,
        "X-Slack-Signature",
        "X-Slack-Request-Timestamp",
        signs_time=True,
    ),
    Provider(
        "razorpay",
        "razorpay",
        "rzp-current",
        "rzp-previous",
        sign_razorpay,
        "X-Razorpay-Signature",
    ),
    Provider(
        "hmac-timed",
        "hmac",
        "acme-current",
        "acme-previous",
        sign_timed_hmac,
        "X-Acme-Signature",
        "X-Acme-Timestamp",
        signs_time=True,
        options=TIMED_HMAC,
    ),
    Provider(
        "hmac-plain",
        "hmac",
        "legacy-current",
        "legacy-previous",
        sign_plain_hmac,
        "X-Legacy-Signature",
        options=PLAIN_HMAC,
    ),
]
TIMED = [p for p in PROVIDERS if p.signs_time]
WITH_TIMESTAMP_HEADER = [p for p in PROVIDERS if p.timestamp_header]
