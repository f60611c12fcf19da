"""The providers an entry cannot describe alone: public-key signatures (Discord's Ed25519,
SendGrid's ECDSA), Twilio's URL + sorted form parameters, Mailgun's signature inside the body,
Microsoft Graph's clientState. Each still takes its names, ids and types from its entry."""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any
from urllib.parse import parse_qs, urlsplit

from cryptography.exceptions import InvalidSignature

from hookline.errors import BadRequest, VerificationFailed
from hookline.verifiers.base import (
    FORM_MEDIA_TYPE,
    Headers,
    decode_base64,
    decode_hex,
    json_field,
    media_type,
    parse_json,
    require_header,
    signed_header_bytes,
)
from hookline.verifiers.entry import EntryVerifier

# Discord shows "This interaction failed" unless it is answered within 3 s with a response:
# Hookline defers (the subscriber follows up with the interaction token), per interaction type.
DISCORD_DEFERRALS = {2: 5, 3: 6, 5: 5}  # command, component, modal → deferred message/update


class Ed25519Verifier(EntryVerifier):
    """Ed25519 over timestamp + body, checked with the app's public key (hex)."""

    def key_from_secret(self, secret: str) -> bytes:
        """The 32-byte public key; ValueError (fit to show) for anything else."""
        key = decode_hex(secret)
        if key is None or len(key) != 32:
            raise ValueError(
                f"a {self.scheme} source takes the application's Ed25519 public key: "
                "64 hex characters (not a shared secret)"
            )
        return key

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """The timestamp's tolerance, then the signature under one of the public keys."""
        entry = self.entry
        signature = decode_hex(require_header(headers, entry.header or ""))
        timestamp = signed_header_bytes(headers, entry.timestamp_header or "")
        self.check_timestamp(timestamp.decode())
        if signature is None or len(signature) != 64:
            raise VerificationFailed(f"malformed {entry.header} header")
        # Public-key schemes load cryptography's asymmetric half when one is used: most
        # sources are HMAC, and the receiver's cold start need not pay for this (decision 0048).
        from cryptography.hazmat.primitives.asymmetric import ed25519

        for key in self.keys:
            try:
                ed25519.Ed25519PublicKey.from_public_bytes(key).verify(signature, timestamp + body)
                return
            except InvalidSignature:
                continue
        raise VerificationFailed("signature does not match")

    def accepted_answer(self, payload: Any | None) -> str | None:
        """Discord's deferred response to an interaction (type 5 for a command or a modal,
        6 for a component); autocomplete (type 4) gets no choices."""
        kind = payload.get("type") if isinstance(payload, dict) else None
        if kind == 4:
            return json.dumps({"type": 8, "data": {"choices": []}})
        deferral = DISCORD_DEFERRALS.get(kind) if isinstance(kind, int) else None
        return json.dumps({"type": deferral}) if deferral else None


class EcdsaVerifier(EntryVerifier):
    """ECDSA P-256 with SHA-256 over timestamp + body (SendGrid's signed Event Webhook), the
    public key given as base64 DER (SubjectPublicKeyInfo), as SendGrid shows it."""

    def key_from_secret(self, secret: str) -> bytes:
        """The DER public key; ValueError (fit to show) unless it is an EC P-256 key."""
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        der = decode_base64(secret)
        try:
            key = serialization.load_der_public_key(der or b"")
        except ValueError:
            key = None
        if not isinstance(key, ec.EllipticCurvePublicKey) or key.curve.name != "secp256r1":
            raise ValueError(
                f"a {self.scheme} source takes the verification key SendGrid shows: a base64 "
                "ECDSA P-256 public key (not a shared secret)"
            )
        return der or b""

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """The timestamp's tolerance, then the DER signature under one of the keys."""
        entry = self.entry
        signature = decode_base64(require_header(headers, entry.header or ""))
        timestamp = signed_header_bytes(headers, entry.timestamp_header or "")
        self.check_timestamp(timestamp.decode())
        if not signature:
            raise VerificationFailed(f"malformed {entry.header} header")
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec

        for der in self.keys:
            key = serialization.load_der_public_key(der)
            assert isinstance(key, ec.EllipticCurvePublicKey)
            try:
                key.verify(signature, timestamp + body, ec.ECDSA(hashes.SHA256()))
                return
            except InvalidSignature:
                continue
        raise VerificationFailed("signature does not match")


class TwilioVerifier(EntryVerifier):
    """`X-Twilio-Signature`: base64 HMAC-SHA1 of the URL Twilio posted to followed by the
    form's parameters, sorted by name, each name then value. A JSON body is signed through
    the URL's `bodySHA256` parameter, which must be the body's SHA-256."""

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """The signature over URL + sorted parameters (or URL with bodySHA256)."""
        signature = decode_base64(require_header(headers, self.entry.header or ""))
        if not signature:
            raise VerificationFailed("malformed X-Twilio-Signature header")
        url = self.context.url
        if not url:
            raise VerificationFailed("the request URL this provider signs is unknown")
        message = url.encode("utf-8", "replace")
        if media_type(headers) == FORM_MEDIA_TYPE:
            try:
                fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
            except (UnicodeDecodeError, ValueError):
                raise VerificationFailed("body is not a form") from None
            for name in sorted(fields):
                for value in sorted(set(fields[name])):
                    message += (name + value).encode()
        else:
            declared = parse_qs(urlsplit(url).query).get("bodySHA256", [""])[0]
            if not hmac.compare_digest(
                declared.encode(), hashlib.sha256(body).hexdigest().encode()
            ):
                raise VerificationFailed("bodySHA256 does not match the body")
        self.require_signature(message, [signature], "sha1")

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """A form's fields (first value of each), or the JSON body."""
        if media_type(headers) == FORM_MEDIA_TYPE:
            fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
            return {name: values[0] for name, values in fields.items()}
        return parse_json(body)


class MailgunVerifier(EntryVerifier):
    """Mailgun signs inside the JSON body: `signature.signature` is the hex HMAC-SHA256 of
    `signature.timestamp` + `signature.token` under the webhook signing key."""

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """The timestamp's tolerance, then the HMAC of timestamp + token."""
        try:
            payload = parse_json(body)
        except BadRequest:
            raise VerificationFailed("no signature in the body") from None
        timestamp = json_field(payload, "signature.timestamp")
        token = json_field(payload, "signature.token")
        signature = decode_hex(json_field(payload, "signature.signature") or "")
        if not (timestamp and token and signature):
            raise VerificationFailed("no signature in the body")
        self.check_timestamp(timestamp)
        self.require_signature((timestamp + token).encode(), [signature])


class ClientStateVerifier(EntryVerifier):
    """Microsoft Graph change notifications: every notification in `value` carries the
    `clientState` the subscription was created with (the source's secret)."""

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Each item's clientState equals a secret (constant time)."""
        try:
            payload = parse_json(body)
        except BadRequest:
            raise VerificationFailed("no clientState in the body") from None
        items = payload.get("value") if isinstance(payload, dict) else None
        if not isinstance(items, list) or not items:
            raise VerificationFailed("no notifications in the body")
        for item in items:
            state = item.get("clientState") if isinstance(item, dict) else None
            if not isinstance(state, str):
                raise VerificationFailed("a notification without clientState")
            self.require_equal_secret(state.encode("utf-8", "replace"))
