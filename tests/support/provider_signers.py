"""Each registry provider's request, signed the way the provider documents it (the `docs` link
of its entry) or with its own SDK — never with Hookline's code — so the provider tests prove
interoperability. `SIGNED[scheme]` builds (headers, body) for a secret, a body and a time."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import nacl.signing
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from twilio.request_validator import RequestValidator

URL = "https://hooks.example.com/in/src_test"
# Token, basic-auth and clientState providers, and Mailgun (timestamp + token), do not sign the
# body: the catalogue says so (docs/providers.md).
UNSIGNED_BODY = frozenset({"microsoft_graph", "okta", "gitlab", "mailgun", "telegram", "postmark"})
JSON = {"Content-Type": "application/json"}


def hex_hmac(key: bytes, message: bytes, algorithm: str = "sha256") -> str:
    return hmac.new(key, message, algorithm).hexdigest()


def b64_hmac(key: bytes, message: bytes, algorithm: str = "sha256") -> str:
    return base64.b64encode(hmac.new(key, message, algorithm).digest()).decode()


def rfc3339(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%S.123456789Z")


@dataclass(frozen=True)
class Case:
    """A provider's test material: its secret, a wrong one, a body, how it signs."""

    scheme: str
    secret: str
    wrong: str
    body: bytes
    sign: Callable[[str, bytes, int], dict[str, str]]
    event_type: str
    dedupe_key: str | None = None  # None: the body digest
    timed: bool = False
    options: dict[str, str] | None = None


def _simple(header: str, prefix: str = "", algorithm: str = "sha256", b64: bool = False):
    def sign(secret: str, body: bytes, ts: int) -> dict[str, str]:
        f = b64_hmac if b64 else hex_hmac
        return {**JSON, header: prefix + f(secret.encode(), body, algorithm)}

    return sign


# Ed25519 (Discord, with PyNaCl as Discord's docs do) and ECDSA (SendGrid) key pairs.
DISCORD_KEY = nacl.signing.SigningKey(b"d" * 32)
DISCORD_PUBLIC = DISCORD_KEY.verify_key.encode().hex()
DISCORD_OTHER = nacl.signing.SigningKey(b"e" * 32).verify_key.encode().hex()
SENDGRID_KEY = ec.derive_private_key(12345678901234567890, ec.SECP256R1())
SENDGRID_OTHER = ec.derive_private_key(98765432109876543210, ec.SECP256R1())


def _spki(key: ec.EllipticCurvePrivateKey) -> str:
    der = key.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return base64.b64encode(der).decode()


def discord(secret: str, body: bytes, ts: int) -> dict[str, str]:
    """Discord: Ed25519 of timestamp + body; the app keeps the private key (here DISCORD_KEY)."""
    signed = DISCORD_KEY.sign(str(ts).encode() + body)
    return {
        **JSON,
        "X-Signature-Ed25519": signed.signature.hex(),
        "X-Signature-Timestamp": str(ts),
    }


def sendgrid(secret: str, body: bytes, ts: int) -> dict[str, str]:
    """SendGrid: ECDSA P-256/SHA-256 of timestamp + payload, base64 DER."""
    signature = SENDGRID_KEY.sign(str(ts).encode() + body, ec.ECDSA(hashes.SHA256()))
    return {
        **JSON,
        "X-Twilio-Email-Event-Webhook-Signature": base64.b64encode(signature).decode(),
        "X-Twilio-Email-Event-Webhook-Timestamp": str(ts),
    }


def twilio_form(secret: str, body: bytes, ts: int) -> dict[str, str]:
    """Twilio, with the twilio SDK's own RequestValidator."""
    from urllib.parse import parse_qsl

    params = dict(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
    return {
        "Content-Type": "application/x-www-form-urlencoded",
        "X-Twilio-Signature": RequestValidator(secret).compute_signature(URL, params),
        "I-Twilio-Idempotency-Token": "idem-1",
    }


def mailgun_body(secret: str, ts: int, token: str = "t" * 50) -> bytes:
    """Mailgun: the signature travels in the body, HMAC-SHA256 hex of timestamp + token."""
    sig = hex_hmac(secret.encode(), f"{ts}{token}".encode())
    return json.dumps(
        {
            "signature": {"timestamp": str(ts), "token": token, "signature": sig},
            "event-data": {"id": "mg-ev-1", "event": "delivered"},
        }
    ).encode()


CASES: list[Case] = [
    Case(
        "zoom",
        "zoom-secret",
        "other",
        b'{"event":"meeting.started","payload":{}}',
        lambda s, b, t: {
            **JSON,
            "x-zm-request-timestamp": str(t),
            "x-zm-signature": "v0=" + hex_hmac(s.encode(), f"v0:{t}:".encode() + b),
        },
        "meeting.started",
        timed=True,
    ),
    Case(
        "meta",
        "app-secret",
        "other",
        b'{"object":"page","entry":[]}',
        _simple("X-Hub-Signature-256", "sha256="),
        "page",
        options={"verify_token": "vt-1"},
    ),
    Case(
        "x",
        "consumer-secret",
        "other",
        b'{"for_user_id":"1","tweet_create_events":[]}',
        _simple("x-twitter-webhooks-signature", "sha256=", b64=True),
        "tweet_create_events",
    ),
    Case(
        "microsoft_graph",
        "client-state-1",
        "other",
        b'{"value":[{"clientState":"client-state-1","changeType":"created"}]}',
        lambda s, b, t: dict(JSON),
        "created",
    ),
    Case(
        "dropbox",
        "dbx-secret",
        "other",
        b'{"list_folder":{"accounts":["a"]}}',
        _simple("X-Dropbox-Signature"),
        "list_folder",
    ),
    Case(
        "okta",
        "okta-auth-value",
        "other",
        b'{"eventType":"com.okta.event_hook","data":{"events":[{"uuid":"u1",'
        b'"eventType":"user.session.start"}]}}',
        lambda s, b, t: {**JSON, "Authorization": s},
        "user.session.start",
        "u1",
    ),
    Case(
        "twitch",
        "twitch-secret-123",
        "other-secret-12",
        b'{"subscription":{"type":"channel.follow"},"event":{}}',
        lambda s, b, t: {
            **JSON,
            "Twitch-Eventsub-Message-Id": "m-1",
            "Twitch-Eventsub-Message-Timestamp": rfc3339(t),
            "Twitch-Eventsub-Message-Type": "notification",
            "Twitch-Eventsub-Subscription-Type": "channel.follow",
            "Twitch-Eventsub-Message-Signature": "sha256="
            + hex_hmac(s.encode(), b"m-1" + rfc3339(t).encode() + b),
        },
        "channel.follow",
        "m-1",
        timed=True,
    ),
    Case(
        "asana",
        "b537207f20cbfa02357cf448134da559",
        "other",
        b'{"events":[{"action":"changed","resource":{"resource_type":"task"}}]}',
        _simple("X-Hook-Signature"),
        "task.changed",
    ),
    Case(
        "twilio",
        "auth-token-1",
        "other",
        b"MessageSid=SM1&MessageStatus=delivered&To=%2B15551234567",
        twilio_form,
        "delivered",
        "idem-1",
        options={"public_url": URL},
    ),
    Case(
        "discord",
        DISCORD_PUBLIC,
        DISCORD_OTHER,
        b'{"id":"i-1","type":2}',
        discord,
        "2",
        "i-1",
        timed=True,
    ),
    Case(
        "sendgrid",
        _spki(SENDGRID_KEY),
        _spki(SENDGRID_OTHER),
        b'[{"event":"delivered","sg_event_id":"s1"}]\r\n',
        sendgrid,
        "delivered",
        timed=True,
    ),
    Case(
        "paddle",
        "pdl_ntfset_secret",
        "other",
        b'{"event_id":"evt_01","event_type":"transaction.completed"}',
        lambda s, b, t: {
            **JSON,
            "Paddle-Signature": f"ts={t};h1=" + hex_hmac(s.encode(), f"{t}:".encode() + b),
        },
        "transaction.completed",
        "evt_01",
        timed=True,
    ),
    Case(
        "square",
        "sq-signature-key",
        "other",
        b'{"event_id":"sq-1","type":"payment.updated"}',
        lambda s, b, t: {
            **JSON,
            "x-square-hmacsha256-signature": b64_hmac(s.encode(), URL.encode() + b),
        },
        "payment.updated",
        "sq-1",
        options={"public_url": URL},
    ),
    Case(
        "intercom",
        "ic-secret",
        "other",
        b'{"type":"notification_event","id":"notif_1","topic":"conversation.user.created"}',
        _simple("X-Hub-Signature", "sha1=", "sha1"),
        "conversation.user.created",
        "notif_1",
    ),
    Case(
        "linear",
        "lin-secret",
        "other",
        b'{"action":"create","type":"Issue","data":{}}',
        lambda s, b, t: {
            **_simple("Linear-Signature")(s, b, t),
            "Linear-Delivery": "del-1",
            "Linear-Event": "Issue",
        },
        "Issue.create",
        "del-1",
    ),
    Case(
        "hubspot",
        "hs-client-secret",
        "other",
        b'[{"eventId":1001,"subscriptionType":"contact.creation"}]',
        lambda s, b, t: {
            **JSON,
            "X-HubSpot-Request-Timestamp": str(t * 1000),
            "X-HubSpot-Signature-v3": b64_hmac(
                s.encode(), b"POST" + URL.encode() + b + str(t * 1000).encode()
            ),
        },
        "contact.creation",
        "1001",
        timed=True,
        options={"public_url": URL},
    ),
    Case(
        "gitlab",
        "gl-token",
        "other",
        b'{"object_kind":"merge_request","object_attributes":{"action":"open"}}',
        lambda s, b, t: {**JSON, "X-Gitlab-Token": s, "X-Gitlab-Event-UUID": "uuid-1"},
        "merge_request.open",
        "uuid-1",
    ),
    Case(
        "bitbucket",
        "bb-secret",
        "other",
        b'{"repository":{}}',
        lambda s, b, t: {
            **_simple("X-Hub-Signature", "sha256=")(s, b, t),
            "X-Event-Key": "repo:push",
            "X-Request-UUID": "req-1",
        },
        "repo:push",
        "req-1",
    ),
    Case(
        "mailgun",
        "mg-key",
        "other",
        b"",
        lambda s, b, t: dict(JSON),
        "delivered",
        "mg-ev-1",
        timed=True,
    ),
    Case(
        "typeform",
        "tf-secret",
        "other",
        b'{"event_id":"01TF","event_type":"form_response"}',
        _simple("Typeform-Signature", "sha256=", b64=True),
        "form_response",
        "01TF",
    ),
    Case(
        "zendesk",
        "zd-secret",
        "other",
        b'{"type":"zen:event-type:ticket.created","id":"zd-1"}',
        lambda s, b, t: {
            **JSON,
            "X-Zendesk-Webhook-Signature-Timestamp": rfc3339(t).split(".")[0] + "Z",
            "X-Zendesk-Webhook-Signature": b64_hmac(
                s.encode(), (rfc3339(t).split(".")[0] + "Z").encode() + b
            ),
        },
        "zen:event-type:ticket.created",
        "zd-1",
        timed=True,
    ),
    Case(
        "calendly",
        "cal-key",
        "other",
        b'{"event":"invitee.created","payload":{"uri":"https://api.calendly.com/x/1"}}',
        lambda s, b, t: {
            **JSON,
            "Calendly-Webhook-Signature": f"t={t},v1=" + hex_hmac(s.encode(), f"{t}.".encode() + b),
        },
        "invitee.created",
        "https://api.calendly.com/x/1",
        timed=True,
    ),
    Case(
        "woocommerce",
        "wc-secret",
        "other",
        b'{"id":77}',
        lambda s, b, t: {
            **_simple("X-WC-Webhook-Signature", b64=True)(s, b, t),
            "X-WC-Webhook-Topic": "order.created",
            "X-WC-Webhook-Delivery-ID": "wc-d-1",
        },
        "order.created",
        "wc-d-1",
    ),
    Case(
        "sentry",
        "sentry-client-secret",
        "other",
        b'{"action":"created","data":{}}',
        lambda s, b, t: {
            **_simple("Sentry-Hook-Signature")(s, b, t),
            "Sentry-Hook-Resource": "issue",
            "Request-ID": "r-1",
        },
        "issue.created",
        "r-1",
    ),
    Case(
        "vercel",
        "vc-secret",
        "other",
        b'{"id":"vc-1","type":"deployment.succeeded"}',
        _simple("x-vercel-signature", algorithm="sha1"),
        "deployment.succeeded",
        "vc-1",
    ),
    Case(
        "pagerduty",
        "pd-secret",
        "other",
        b'{"event":{"id":"pd-1","event_type":"incident.triggered"}}',
        lambda s, b, t: {
            **JSON,
            "X-PagerDuty-Signature": "v1=" + "0" * 64 + ",v1=" + hex_hmac(s.encode(), b),
        },
        "incident.triggered",
        "pd-1",
    ),
    Case(
        "coinbase_commerce",
        "cc-secret",
        "other",
        b'{"id":1,"event":{"id":"cc-1","type":"charge:confirmed"}}',
        _simple("X-CC-Webhook-Signature"),
        "charge:confirmed",
        "cc-1",
    ),
    Case(
        "lemonsqueezy",
        "ls-secret",
        "other",
        b'{"meta":{"event_name":"order_created"}}',
        _simple("X-Signature"),
        "order_created",
    ),
    Case(
        "docusign",
        "ds-key",
        "other",
        b'{"event":"envelope-completed"}',
        _simple("X-DocuSign-Signature-1", b64=True),
        "envelope-completed",
    ),
    Case(
        "mux",
        "mux-secret",
        "other",
        b'{"id":"mux-1","type":"video.asset.ready"}',
        lambda s, b, t: {
            **JSON,
            "Mux-Signature": f"t={t},v1=" + hex_hmac(s.encode(), f"{t}.".encode() + b),
        },
        "video.asset.ready",
        "mux-1",
        timed=True,
    ),
    Case(
        "airtable",
        base64.b64encode(b"airtable-mac-key").decode(),
        base64.b64encode(b"other").decode(),
        b'{"base":{"id":"app1"},"webhook":{"id":"ach1"}}',
        lambda s, b, t: {
            **JSON,
            "X-Airtable-Content-MAC": "hmac-sha256=" + hex_hmac(base64.b64decode(s), b),
        },
        "ach1",
    ),
    Case(
        "telegram",
        "tg-secret-token",
        "other",
        b'{"update_id":42,"message":{"text":"hi"}}',
        lambda s, b, t: {**JSON, "X-Telegram-Bot-Api-Secret-Token": s},
        "message",
        "42",
    ),
    Case(
        "postmark",
        "hookuser:hookpass",
        "hookuser:other",
        b'{"RecordType":"Bounce","MessageID":"pm-1"}',
        lambda s, b, t: {**JSON, "Authorization": "Basic " + base64.b64encode(s.encode()).decode()},
        "Bounce",
        "pm-1",
    ),
]


def body_of(case: Case, secret: str, ts: int) -> bytes:
    """The body a case sends (Mailgun and Graph carry their proof inside it)."""
    if case.scheme == "mailgun":
        return mailgun_body(secret, ts)
    if case.scheme == "microsoft_graph":
        return case.body.replace(b"client-state-1", secret.encode())
    return case.body


def digest(body: bytes) -> str:
    return "sha256:" + hashlib.sha256(body).hexdigest()
