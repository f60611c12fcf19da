"""Provider handshakes: the requests a provider sends to prove a URL before (and while) it
delivers events. Each is answered as its provider requires and never stored (decision 0038).

A handshake function gets the source's verifier and the request, and returns None when the
request is not its handshake (it is then an event, or a 405 for a GET). Where the provider
signs its handshake the signature is checked first (401 otherwise); where it carries a verify
token, a wrong token is HandshakeRefused (403) and the challenge is not echoed.
"""

from __future__ import annotations

import base64
import hmac
import json
import re
from collections.abc import Callable

from hookline.errors import HandshakeRefused, VerificationFailed
from hookline.verifiers.base import (
    HandshakeAnswer,
    Headers,
    RequestContext,
    Verifier,
    header_value,
    try_parse_json,
)
from hookline.verifiers.sns import sns_subscription

Handshake = Callable[[Verifier, Headers, bytes, RequestContext], HandshakeAnswer | None]

TEXT = "text/plain; charset=utf-8"
NOSNIFF = {"X-Content-Type-Options": "nosniff"}
# X answers its CRC with the HMAC of the token under the secret that also signs its events; a
# token that could be a JSON body would make the CRC a signing oracle for forged events.
CRC_TOKEN = re.compile(r"[A-Za-z0-9_\-=+/.]{1,256}")
MAX_ECHO = 1024


def _json(kind: str, document: object) -> HandshakeAnswer:
    return HandshakeAnswer(kind=kind, body=json.dumps(document))


def _echo(kind: str, value: str) -> HandshakeAnswer:
    if not value or len(value) > MAX_ECHO or not value.isprintable():
        raise HandshakeRefused(f"malformed {kind} challenge")
    return HandshakeAnswer(kind=kind, body=value, content_type=TEXT, headers=NOSNIFF)


def _payload(body: bytes) -> dict[str, object]:
    payload = try_parse_json(body)
    return payload if isinstance(payload, dict) else {}


def _signed(verifier: Verifier, headers: Headers, body: bytes) -> None:
    verifier.check_content_type(headers)
    verifier.check_signature(headers, body)


def _verify_token(verifier: Verifier, given: str) -> None:
    expected = verifier.config.options.get("verify_token")
    if not isinstance(expected, str) or not expected:
        raise HandshakeRefused("this source has no verify token: set one with --verify-token")
    if not hmac.compare_digest(given.encode("utf-8", "replace"), expected.encode()):
        raise HandshakeRefused("wrong verify token")


def slack_url_verification(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Slack Events API `url_verification`: signed; answer the challenge."""
    payload = _payload(body)
    if context.method != "POST" or payload.get("type") != "url_verification":
        return None
    _signed(verifier, headers, body)
    challenge = payload.get("challenge")
    if not isinstance(challenge, str) or not challenge:
        raise HandshakeRefused("url_verification without a challenge")
    return _json("url_verification", {"challenge": challenge})


def discord_ping(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Discord interactions PING (type 1): signed (Ed25519); answer PONG."""
    if context.method != "POST" or _payload(body).get("type") != 1:
        return None
    _signed(verifier, headers, body)
    return _json("ping", {"type": 1})


def zoom_url_validation(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Zoom `endpoint.url_validation`: signed; answer plainToken and its HMAC (hex).

    Unsigned, it would be an oracle: the HMAC of any chosen token is a Zoom signature."""
    payload = _payload(body)
    if context.method != "POST" or payload.get("event") != "endpoint.url_validation":
        return None
    _signed(verifier, headers, body)
    inner = payload.get("payload")
    token = inner.get("plainToken") if isinstance(inner, dict) else None
    if not isinstance(token, str) or not token:
        raise HandshakeRefused("endpoint.url_validation without a plainToken")
    encrypted = hmac.new(verifier.keys[0], token.encode(), "sha256").hexdigest()
    return _json("endpoint.url_validation", {"plainToken": token, "encryptedToken": encrypted})


def meta_subscribe(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Meta (Facebook, Instagram, WhatsApp) `GET ?hub.mode=subscribe`: the verify token."""
    query = context.query
    if context.method != "GET" or query.get("hub.mode") != "subscribe":
        return None
    _verify_token(verifier, query.get("hub.verify_token", ""))
    return _echo("subscribe", query.get("hub.challenge", ""))


def x_crc(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """X (Twitter) CRC `GET ?crc_token=`: `sha256=` + base64 HMAC of the token."""
    token = context.query.get("crc_token")
    if context.method != "GET" or token is None:
        return None
    if not CRC_TOKEN.fullmatch(token):
        raise HandshakeRefused("malformed crc_token")
    digest = hmac.new(verifier.keys[0], token.encode(), "sha256").digest()
    return _json("crc", {"response_token": "sha256=" + base64.b64encode(digest).decode()})


def graph_validation(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Microsoft Graph subscription validation `?validationToken=`: echo it as text/plain."""
    token = context.query.get("validationToken")
    if token is None:
        return None
    return _echo("validation", token)


def dropbox_challenge(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Dropbox `GET ?challenge=`: echo it as text/plain, not sniffable."""
    challenge = context.query.get("challenge")
    if context.method != "GET" or challenge is None:
        return None
    return _echo("challenge", challenge)


def okta_verification(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Okta event hook one-time verification: `GET` with `x-okta-verification-challenge`,
    carrying the hook's Authorization secret; answer `{"verification": …}`."""
    challenge = header_value(headers, "x-okta-verification-challenge")
    if context.method != "GET" or challenge is None:
        return None
    try:
        verifier.check_signature(headers, body)
    except VerificationFailed:
        raise HandshakeRefused("wrong or missing Authorization on the verification") from None
    if len(challenge) > MAX_ECHO:
        raise HandshakeRefused("malformed verification challenge")
    return _json("verification", {"verification": challenge})


def twitch_verification(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Twitch EventSub `webhook_callback_verification`: signed; echo the challenge."""
    kind = header_value(headers, "Twitch-Eventsub-Message-Type")
    if context.method != "POST" or kind != "webhook_callback_verification":
        return None
    _signed(verifier, headers, body)
    challenge = _payload(body).get("challenge")
    return _echo("webhook_callback_verification", challenge if isinstance(challenge, str) else "")


ADOPTED = "handshake_secret"  # the option marking a source whose secret came by handshake


def asana_hook_secret(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """Asana's `X-Hook-Secret` handshake: echo it, and it becomes the source's secret — once.

    It is unsigned by nature, so a source takes it only while it has not taken one: a second
    handshake (anyone who learnt the URL) is refused rather than replacing the secret."""
    secret = header_value(headers, "X-Hook-Secret")
    if context.method != "POST" or secret is None:
        return None
    if verifier.config.options.get(ADOPTED):
        raise HandshakeRefused(
            "this source already took its Asana secret: create a new source for a new webhook"
        )
    if len(secret) > MAX_ECHO or not secret.isprintable():
        raise HandshakeRefused("malformed X-Hook-Secret")
    return HandshakeAnswer(
        kind="hook_secret",
        body="",
        content_type=TEXT,
        headers={"X-Hook-Secret": secret},
        adopt_secret=secret,
    )


HANDSHAKES: dict[str, Handshake] = {
    "slack_url_verification": slack_url_verification,
    "discord_ping": discord_ping,
    "zoom_url_validation": zoom_url_validation,
    "meta_subscribe": meta_subscribe,
    "x_crc": x_crc,
    "graph_validation": graph_validation,
    "dropbox_challenge": dropbox_challenge,
    "okta_verification": okta_verification,
    "twitch_verification": twitch_verification,
    "asana_hook_secret": asana_hook_secret,
    "sns_subscription": sns_subscription,
}
DESCRIPTIONS = {
    "slack_url_verification": "POST url_verification → the challenge",
    "discord_ping": "POST PING (type 1) → PONG",
    "zoom_url_validation": "POST endpoint.url_validation → plainToken + encryptedToken",
    "meta_subscribe": "GET hub.mode=subscribe + verify token → hub.challenge",
    "x_crc": "GET crc_token → response_token",
    "graph_validation": "?validationToken → echoed as text/plain",
    "dropbox_challenge": "GET challenge → echoed as text/plain",
    "okta_verification": "GET x-okta-verification-challenge → verification",
    "twitch_verification": "POST webhook_callback_verification → the challenge",
    "asana_hook_secret": "POST X-Hook-Secret → echoed; it becomes the source's secret, once",
    "sns_subscription": "POST SubscriptionConfirmation → verified, SubscribeURL fetched on SNS",
}


def answer_handshake(
    verifier: Verifier, headers: Headers, body: bytes, context: RequestContext
) -> HandshakeAnswer | None:
    """The answer to the request if it is its scheme's handshake, else None."""
    name = verifier.handshake_name
    if name is None:
        return None
    verifier.context = context
    return HANDSHAKES[name](verifier, headers, body, context)
