"""A provider as data: where its signature is, what it signs, where its event id and type are.

Most providers sign with an HMAC over some bytes of the request. An `Entry` says which bytes
and how, and `EntryVerifier` checks a request against it, so adding such a provider is adding
one entry to `hookline.verifiers.providers` (decision 0037). What an entry cannot say (Ed25519,
ECDSA, Twilio's form signing, a signature inside the body) is a small class of its own that
still takes its headers, ids and types from an entry.
"""

from __future__ import annotations

import string
import time
from collections.abc import Mapping
from datetime import datetime
from typing import Any, ClassVar

from hookline.errors import VerificationFailed
from hookline.records import frozen
from hookline.verifiers.base import (
    Clock,
    Headers,
    SourceConfig,
    Verifier,
    any_match,
    body_digest,
    check_json_content_type,
    check_json_or_form_content_type,
    decode_base64,
    decode_hex,
    header_value,
    json_field,
    keep_headers,
    parse_json,
    require_header,
    try_parse_json,
)

SIGNED_FIELDS = ("body", "timestamp", "id", "url", "method")
WHSEC_PREFIX = "whsec_"


@frozen
class Entry:
    """One provider's inbound format. Only `scheme`, `title` and `docs` are required.

    * Signature: `header` holds `prefix` + the `encoding`d digest. With `signature_key` the
      header is a list of `key=value` pairs split by `pair_separator` (Stripe-like
      `t=…,v1=…`): signatures are the values of `signature_key`, the timestamp the value of
      `timestamp_key`. `check` is `hmac`, `token` (the header equals the secret) or `basic`
      (HTTP basic auth whose `user:password` is the secret).
    * Signed bytes: `signed` is a template of `{body}` `{timestamp}` `{id}` `{url}`
      `{method}`; the timestamp is `timestamp_header`'s (or `timestamp_key`'s) value as sent,
      in `timestamp_format` `unix`, `unix_ms` or `rfc3339`, checked against the tolerance.
    * Key: `key_encoding` is `text` (its UTF-8 bytes), `base64` (decoded) or `whsec`.
    * Routing: the dedupe key is `id_header`, else `id_field` (dotted JSON path), else the
      body digest; the type is `type_header`, else the first of `type_fields` present, else the
      first of `type_keys` present as a key of the payload, plus `.{action}` from
      `action_field`.
    """

    scheme: str
    title: str
    docs: str
    check: str = "hmac"
    header: str | None = None
    algorithm: str = "sha256"
    encoding: str = "hex"
    prefix: str = ""
    signature_key: str | None = None
    timestamp_key: str | None = None
    pair_separator: str = ","
    signed: str = "{body}"
    timestamp_header: str | None = None
    timestamp_format: str = "unix"
    key_encoding: str = "text"
    id_header: str | None = None
    id_field: str | None = None
    type_header: str | None = None
    type_fields: tuple[str, ...] = ()
    type_keys: tuple[str, ...] = ()
    action_field: str | None = None
    body: str = "json"
    handshake: str | None = None
    material: str = "shared secret"
    kept: tuple[str, ...] = ()
    notes: str = ""

    @property
    def signs_time(self) -> bool:
        """Whether the signature covers a timestamp (so the tolerance applies)."""
        return "timestamp" in template_fields(self.signed)

    def describe_signed(self) -> str:
        """What is signed, for the catalogue."""
        if self.check == "token":
            return f"no signature: {self.header} equals the secret"
        if self.check == "basic":
            return "no signature: HTTP basic auth user:password equals the secret"
        if self.check != "hmac":
            return self.notes
        return f"HMAC-{self.algorithm.upper()} {self.encoding} of `{self.signed}`"


def template_fields(template: str) -> list[str]:
    """The placeholders of a signed template, in order; ValueError for anything else."""
    names = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is None:
            continue
        if name not in SIGNED_FIELDS or spec or conversion:
            raise ValueError(f"unknown field {{{name}}} in signed template {template!r}")
        names.append(name)
    return names


def check_options(entry: Entry, options: Mapping[str, Any]) -> None:
    """An entry's source options: `verify_token` and `public_url`; ValueError says what is
    wrong (a Meta source without its verify token could never subscribe)."""
    unknown = sorted(set(options) - {"verify_token", "public_url", "catchup", "handshake_secret"})
    if unknown:
        raise ValueError(f"unknown {entry.scheme} option(s): {', '.join(unknown)}")
    token = options.get("verify_token")
    if token is not None and (not isinstance(token, str) or not token.strip()):
        raise ValueError("verify_token must be a non-empty string")
    if entry.handshake == "meta_subscribe" and not token:
        raise ValueError(f"a {entry.scheme} source needs a verify token (--verify-token)")
    url = options.get("public_url")
    if url is not None and (
        not isinstance(url, str) or not url.startswith(("https://", "http://"))
    ):
        raise ValueError("public_url must be the http(s) URL the provider posts to")


def unix_seconds(text: str, fmt: str) -> str:
    """A provider timestamp as unix seconds text (for `Verifier.check_timestamp`)."""
    if fmt == "unix":
        return text
    if fmt == "unix_ms":
        return text[:-3] if text.isascii() and text.isdigit() and len(text) > 3 else ""
    try:
        # RFC 3339 with up to nanoseconds (Twitch): keep microseconds, Python's limit.
        head, _, rest = text.partition(".")
        zone = rest.lstrip("0123456789") if rest else text[19:]
        fraction = rest[: len(rest) - len(zone)][:6] if rest else ""
        parsed = datetime.fromisoformat(
            head[:19] + (f".{fraction}" if fraction else "") + zone.replace("Z", "+00:00")
        )
    except ValueError:
        return ""
    return str(int(parsed.timestamp())) if parsed.tzinfo else ""


class EntryVerifier(Verifier):
    """Verifies a request against its class's `entry`."""

    entry: ClassVar[Entry]

    def __init__(self, config: SourceConfig, clock: Clock = time.time) -> None:
        template_fields(self.entry.signed)
        check_options(self.entry, config.options)
        super().__init__(config, clock)

    def key_from_secret(self, secret: str) -> bytes:
        """The key the entry's `secret` encoding says the secret stands for."""
        kind = self.entry.key_encoding
        if kind == "text":
            return secret.encode("utf-8")
        decoded = decode_base64(secret.strip().removeprefix(WHSEC_PREFIX))
        if not decoded:
            raise ValueError(f"a {self.scheme} secret must be base64 ({self.entry.material})")
        return decoded

    def check_content_type(self, headers: Headers) -> None:
        """JSON, or JSON or a form, or anything, as the entry says."""
        if self.entry.body == "json":
            check_json_content_type(headers)
        elif self.entry.body == "json_or_form":
            check_json_or_form_content_type(headers)

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """The JSON payload (BadRequest if the entry requires JSON and it is not)."""
        return parse_json(body) if self.entry.body == "json" else try_parse_json(body)

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the entry's token, basic auth or HMAC (with its timestamp's tolerance)."""
        entry = self.entry
        if entry.check == "token":
            given = require_header(headers, entry.header or "").encode("utf-8", "replace")
            self.require_equal_secret(given)
            return
        if entry.check == "basic":
            self.check_basic(require_header(headers, "Authorization"))
            return
        signatures, timestamp = self.signatures_and_timestamp(headers)
        values: dict[str, bytes] = {"body": body}
        fields = template_fields(entry.signed)
        if "timestamp" in fields:
            if timestamp is None:
                raise VerificationFailed("missing or malformed timestamp")
            self.check_timestamp(unix_seconds(timestamp, entry.timestamp_format))
            values["timestamp"] = timestamp.encode()
        if "id" in fields:
            values["id"] = require_header(headers, entry.id_header or "").encode("utf-8", "replace")
        if "url" in fields or "method" in fields:
            context = self.context
            if not context.url:
                raise VerificationFailed("the request URL this provider signs is unknown")
            values["url"] = context.url.encode("utf-8", "replace")
            values["method"] = context.method.encode()
        self.require_signature(fill(entry.signed, values), signatures, entry.algorithm)

    def signatures_and_timestamp(self, headers: Headers) -> tuple[list[bytes], str | None]:
        """The decoded signatures in the signature header, and the timestamp sent with them."""
        entry = self.entry
        name = entry.header or ""
        raw = require_header(headers, name)
        timestamp = (
            header_value(headers, entry.timestamp_header) if entry.timestamp_header else None
        )
        encoded: list[str] = []
        if entry.signature_key:
            for item in filter(None, (part.strip() for part in raw.split(entry.pair_separator))):
                key, _, value = item.partition("=")
                if key == entry.signature_key:
                    encoded.append(value)
                elif key == entry.timestamp_key:
                    if timestamp is not None:
                        raise VerificationFailed(f"malformed {name} header")
                    timestamp = value.strip()
        else:
            if not raw.startswith(entry.prefix):
                raise VerificationFailed(f"malformed {name} header")
            encoded.append(raw.removeprefix(entry.prefix))
        decode = decode_hex if entry.encoding == "hex" else decode_base64
        signatures = [d for d in (decode(e) for e in encoded) if d]
        return signatures, timestamp

    def require_equal_secret(self, given: bytes) -> None:
        """Constant time: does `given` equal one of the source's secrets?"""
        if not any_match(list(self.keys), [given]):
            raise VerificationFailed("token does not match")

    def check_basic(self, authorization: str) -> None:
        """HTTP basic auth whose `user:password` is one of the secrets."""
        scheme, _, encoded = authorization.partition(" ")
        decoded = decode_base64(encoded) if scheme.lower() == "basic" else None
        if not decoded:
            raise VerificationFailed("malformed Authorization header")
        self.require_equal_secret(decoded)

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The entry's type header, field or key, plus the action; else the scheme name."""
        entry = self.entry
        found = header_value(headers, entry.type_header) if entry.type_header else None
        for path in entry.type_fields:
            found = found or json_field(payload, path)
        if not found and isinstance(payload, dict):
            found = next((k for k in entry.type_keys if k in payload), None)
        action = json_field(payload, entry.action_field) if entry.action_field else None
        kind = found or self.scheme
        return f"{kind}.{action}" if action else kind

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The provider's delivery or event id, else the body digest."""
        entry = self.entry
        found = header_value(headers, entry.id_header) if entry.id_header else None
        if not found and entry.id_field:
            found = json_field(payload, entry.id_field)
        return found or body_digest(body)

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """The id, type and timestamp headers, and the entry's other kept headers."""
        entry = self.entry
        names = (entry.id_header, entry.type_header, entry.timestamp_header, *entry.kept)
        return keep_headers(headers, [n for n in names if n])


def fill(template: str, values: Mapping[str, bytes]) -> bytes:
    """A signed template filled in with raw bytes (the body is never decoded)."""
    out = bytearray()
    for literal, name, _, _ in string.Formatter().parse(template):
        out += literal.encode()
        if name is not None:
            out += values[name]
    return bytes(out)


def verifier_class(entry: Entry, base: type[EntryVerifier] = EntryVerifier) -> type[Verifier]:
    """A verifier class for one entry."""
    name = "".join(part.title() for part in entry.scheme.split("_")) + "Verifier"
    attributes = {"scheme": entry.scheme, "entry": entry, "handshake_name": entry.handshake}
    return type(name, (base,), attributes)
