"""A generic HMAC scheme for senders without a verifier of their own."""

from __future__ import annotations

import string
import time
from collections.abc import Mapping
from typing import Any, ClassVar

from hookline.errors import VerificationFailed
from hookline.records import frozen
from hookline.verifiers.base import (
    Clock,
    Headers,
    SourceConfig,
    Verifier,
    body_digest,
    check_json_content_type,
    decode_base64,
    decode_hex,
    header_value,
    json_field,
    keep_headers,
    parse_json,
    require_header,
    signed_header_bytes,
    try_parse_json,
)

ALGORITHMS = ("sha1", "sha256", "sha512")
ENCODINGS = ("hex", "base64")
TEMPLATE_FIELDS = ("body", "timestamp", "id")
STRING_OPTIONS = (
    "header",
    "algorithm",
    "encoding",
    "prefix",
    "timestamp_header",
    "signed_template",
    "id_header",
    "type_header",
    "type_field",
)


@frozen
class HmacOptions:
    """How one sender signs: where the signature is, how it is computed and encoded.

    `signed_template` names what is signed, from `{body}` (exactly once), `{timestamp}`
    (the value of `timestamp_header`) and `{id}` (the value of `id_header`); it defaults
    to "{timestamp}.{body}" with a timestamp header and "{body}" without.
    """

    header: str
    algorithm: str = "sha256"
    encoding: str = "hex"
    prefix: str = ""
    timestamp_header: str | None = None
    signed_template: str = "{body}"
    id_header: str | None = None
    type_header: str | None = None
    type_field: str | None = None
    require_json: bool = True

    @classmethod
    def from_mapping(cls, options: Mapping[str, Any]) -> HmacOptions:
        """Validate a source's options; ValueError says what is wrong with them."""
        unknown = sorted(set(options) - {*STRING_OPTIONS, "require_json"})
        if unknown:
            raise ValueError(f"unknown hmac option(s): {', '.join(unknown)}")
        for name in STRING_OPTIONS:
            value = options.get(name)
            if value is not None and not isinstance(value, str):
                raise ValueError(f"hmac option {name} must be a string")
        require_json = options.get("require_json", True)
        if not isinstance(require_json, bool):
            raise ValueError("hmac option require_json must be true or false")
        header = (options.get("header") or "").strip()
        if not header:
            raise ValueError("hmac option header (the signature header's name) is required")
        algorithm = (options.get("algorithm") or "sha256").lower()
        if algorithm not in ALGORITHMS:
            raise ValueError(f"hmac algorithm must be one of {', '.join(ALGORITHMS)}")
        encoding = (options.get("encoding") or "hex").lower()
        if encoding not in ENCODINGS:
            raise ValueError(f"hmac encoding must be one of {', '.join(ENCODINGS)}")
        if options.get("type_header") and options.get("type_field"):
            raise ValueError("set hmac type_header or type_field, not both")
        timestamp_header = options.get("timestamp_header") or None
        default_template = "{timestamp}.{body}" if timestamp_header else "{body}"
        template = options.get("signed_template") or default_template
        fields = template_fields(template)
        if fields.count("body") != 1:
            raise ValueError("hmac signed_template must contain {body} exactly once")
        if timestamp_header and "timestamp" not in fields:
            # A timestamp that is checked but not signed could simply be replaced.
            raise ValueError("hmac signed_template must include {timestamp} with timestamp_header")
        if "timestamp" in fields and not timestamp_header:
            raise ValueError("hmac signed_template uses {timestamp}, which needs timestamp_header")
        if "id" in fields and not options.get("id_header"):
            raise ValueError("hmac signed_template uses {id}, which needs id_header")
        return cls(
            header=header,
            algorithm=algorithm,
            encoding=encoding,
            prefix=options.get("prefix") or "",
            timestamp_header=timestamp_header,
            signed_template=template,
            id_header=options.get("id_header") or None,
            type_header=options.get("type_header") or None,
            type_field=options.get("type_field") or None,
            require_json=require_json,
        )


def template_fields(template: str) -> list[str]:
    """The placeholders of a signed template, in order; ValueError for anything else."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as err:
        raise ValueError(f"hmac signed_template is malformed: {err}") from None
    fields = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if name not in TEMPLATE_FIELDS or spec or conversion:
            allowed = ", ".join(f"{{{f}}}" for f in TEMPLATE_FIELDS)
            raise ValueError(f"hmac signed_template may only use {allowed}")
        fields.append(name)
    return fields


class HmacVerifier(Verifier):
    """An HMAC over the body (optionally with a timestamp and id) in a configured header."""

    scheme: ClassVar[str] = "hmac"

    def __init__(self, config: SourceConfig, clock: Clock = time.time) -> None:
        self.options = HmacOptions.from_mapping(config.options)
        self.signs_id = "id" in template_fields(self.options.signed_template)
        super().__init__(config, clock)

    def check_content_type(self, headers: Headers) -> None:
        """Refuse a non-JSON content type unless the source accepts any body."""
        if self.options.require_json:
            check_json_content_type(headers)

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """The JSON body; when JSON is not required, None for a body that is not JSON."""
        return parse_json(body) if self.options.require_json else try_parse_json(body)

    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Check the timestamp's tolerance if any, then the signature over the template."""
        opts = self.options
        header = require_header(headers, opts.header)
        if not header.startswith(opts.prefix):
            raise VerificationFailed(f"malformed {opts.header} header")
        encoded = header.removeprefix(opts.prefix)
        decoded = decode_hex(encoded) if opts.encoding == "hex" else decode_base64(encoded)
        if not decoded:
            raise VerificationFailed(f"malformed {opts.header} header")
        values = {"body": body}
        if opts.timestamp_header:
            timestamp = require_header(headers, opts.timestamp_header)
            self.check_timestamp(timestamp)
            values["timestamp"] = timestamp.encode()
        if opts.id_header and self.signs_id:
            values["id"] = signed_header_bytes(headers, opts.id_header)
        self.require_signature(self.signed_content(values), [decoded], opts.algorithm)

    def signed_content(self, values: Mapping[str, bytes]) -> bytes:
        """The template filled in with raw bytes (the body is never decoded)."""
        out = bytearray()
        for literal, name, _, _ in string.Formatter().parse(self.options.signed_template):
            out += literal.encode()
            if name is not None:
                out += values[name]
        return bytes(out)

    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The configured type header or JSON field, else the scheme name."""
        opts = self.options
        if opts.type_header:
            return header_value(headers, opts.type_header) or self.scheme
        if opts.type_field:
            return json_field(payload, opts.type_field) or self.scheme
        return self.scheme

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The configured id header, else the body digest."""
        opts = self.options
        found = header_value(headers, opts.id_header) if opts.id_header else None
        return found or body_digest(body)

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """The configured id, type and timestamp headers."""
        opts = self.options
        names = (opts.id_header, opts.type_header, opts.timestamp_header)
        return keep_headers(headers, [n for n in names if n])
