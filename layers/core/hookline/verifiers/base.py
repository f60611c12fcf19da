"""The interface every inbound signature scheme implements, and the checks they share."""

from __future__ import annotations

import abc
import base64
import binascii
import hashlib
import hmac
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import field
from typing import Any, ClassVar, TypeVar, overload
from urllib.parse import parse_qs

from hookline.errors import BadRequest, UnsupportedMediaType, VerificationFailed
from hookline.records import frozen

JSON_MEDIA_TYPE = "application/json"
FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"

# ASCII digits only (str.isdigit also accepts "²" and other digits int() refuses), and
# short enough that the comparison with a float clock cannot overflow.
_UNIX_SECONDS = re.compile(r"-?[0-9]{1,15}")
_T = TypeVar("_T")


class Headers(Mapping[str, str]):
    """Case-insensitive, read-only view of request headers (HTTP header names are)."""

    def __init__(self, raw: Mapping[str, str] | None = None) -> None:
        self._items: dict[str, str] = {k.lower(): v for k, v in (raw or {}).items()}

    def __getitem__(self, key: str) -> str:
        return self._items[key.lower()]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and key.lower() in self._items

    @overload
    def get(self, key: str, /) -> str | None: ...

    @overload
    def get(self, key: str, /, default: str | _T) -> str | _T: ...

    def get(self, key: str, /, default: object = None) -> object:
        """The header's value, or `default`: one lookup (Mapping's raises and catches
        KeyError for every absent header)."""
        return self._items.get(key.lower(), default)


@frozen
class SourceConfig:
    """What a verifier needs to know about one source. Secrets are plain strings here.

    A source has one secret, or two while it is being rotated: a request signed with
    either passes.
    """

    secrets: Sequence[str]
    tolerance_seconds: int = 300
    options: Mapping[str, Any] = field(default_factory=dict)


@frozen
class VerifiedRequest:
    """What a verifier learned from a request whose signature checked out."""

    event_type: str
    dedupe_key: str
    payload: Any | None  # parsed JSON, when the body is JSON
    kept_headers: Mapping[str, str]  # provider headers worth storing with the event


Clock = Callable[[], float]


@frozen
class RequestContext:
    """What a verifier may need beyond headers and body: the method, the query parameters,
    and the URL the provider posted to (the source's `public_url` when set, since a provider
    that signs its URL signs the one it was given, not the one a proxy forwards)."""

    method: str = "POST"
    query: Mapping[str, str] = field(default_factory=dict)
    url: str | None = None
    # Gives the SSRF-guarded httpx.Client, for SNS certificates and confirmations: built at
    # the first call, so that only SNS sources pay for httpx (decision 0083).
    http: Callable[[], Any] | None = None


@frozen
class HandshakeAnswer:
    """The answer to a provider's handshake: never stored as an event."""

    kind: str
    body: str
    content_type: str = "application/json"
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    adopt_secret: str | None = None  # the provider's secret the source takes (Asana), once


class Verifier(abc.ABC):
    """One inbound scheme. `verify` raises a domain error or returns what it learned.

    Order of checks, so that a caller never learns anything about a payload it could
    not sign: content type (415), signature and timestamp (401), then payload (400).

    The constructor validates the configuration and raises ValueError with a message
    fit to show whoever is saving the source; it never quotes a secret.
    """

    scheme: ClassVar[str]
    requires_json: ClassVar[bool] = True
    handshake_name: ClassVar[str | None] = None  # a name in hookline.verifiers.handshakes
    context: RequestContext = RequestContext()

    def __init__(self, config: SourceConfig, clock: Clock = time.time) -> None:
        # A bare string is a Sequence[str] too: each character would become a secret.
        if isinstance(config.secrets, (str, bytes)):
            raise ValueError("secrets must be a list of strings, not one string")
        if not config.secrets:
            raise ValueError("a source needs at least one secret")
        if any(not isinstance(s, str) or not s.strip() for s in config.secrets):
            raise ValueError("a secret must be a non-empty string")
        if config.tolerance_seconds < 0:
            raise ValueError("tolerance_seconds must not be negative")
        self.config = config
        self.clock = clock
        self.keys: tuple[bytes, ...] = tuple(self.key_from_secret(s) for s in config.secrets)

    def verify(
        self, headers: Mapping[str, str], body: bytes, context: RequestContext | None = None
    ) -> VerifiedRequest:
        """Check the request; return its type, dedupe key and parsed payload."""
        hdrs = headers if isinstance(headers, Headers) else Headers(headers)
        if context is not None:
            self.context = context
        self.check_content_type(hdrs)
        self.check_signature(hdrs, body)
        payload = self.parse_payload(hdrs, body)
        return VerifiedRequest(
            event_type=self.event_type(hdrs, payload),
            dedupe_key=self.dedupe_key(hdrs, payload, body),
            payload=payload,
            kept_headers=self.kept_headers(hdrs),
        )

    @abc.abstractmethod
    def check_signature(self, headers: Headers, body: bytes) -> None:
        """Raise VerificationFailed unless a configured secret signed this body."""

    @abc.abstractmethod
    def event_type(self, headers: Headers, payload: Any | None) -> str:
        """The provider's event type, used by endpoint filters."""

    def accepted_answer(self, payload: Any | None) -> str | None:
        """The body a provider needs in the answer to an accepted event, when it is not
        Hookline's `{"id", "duplicate"}` (Discord waits for an interaction response)."""
        return None

    def key_from_secret(self, secret: str) -> bytes:
        """The HMAC key a secret stands for: its UTF-8 bytes unless the scheme says otherwise."""
        return secret.encode("utf-8")

    def check_content_type(self, headers: Headers) -> None:
        """Raise UnsupportedMediaType when the scheme cannot accept the declared body type."""
        if self.requires_json:
            check_json_content_type(headers)

    def parse_payload(self, headers: Headers, body: bytes) -> Any | None:
        """The payload of a verified body: JSON (BadRequest if not) or None if optional."""
        return parse_json(body) if self.requires_json else try_parse_json(body)

    def dedupe_key(self, headers: Headers, payload: Any | None, body: bytes) -> str:
        """The provider's delivery/event id where it has one, else sha256 of the body."""
        return body_digest(body)

    def kept_headers(self, headers: Headers) -> dict[str, str]:
        """Provider headers stored with the event (never signature headers)."""
        return {}

    def check_timestamp(self, timestamp: str | None) -> int:
        """Parse a unix timestamp and enforce the tolerance in both directions."""
        text = (timestamp or "").strip()
        if not _UNIX_SECONDS.fullmatch(text):
            raise VerificationFailed("missing or malformed timestamp")
        ts = int(text)
        if abs(self.clock() - ts) > self.config.tolerance_seconds:
            raise VerificationFailed("timestamp outside the tolerance")
        return ts

    def require_signature(
        self, message: bytes, signatures: Sequence[bytes], algorithm: str = "sha256"
    ) -> None:
        """Raise VerificationFailed unless one signature is the HMAC of message under a key."""
        if not signatures:
            raise VerificationFailed("no usable signature in the signature header")
        expected = [hmac_digest(key, message, algorithm) for key in self.keys]
        if not any_match(expected, signatures):
            raise VerificationFailed("signature does not match")


def hmac_digest(key: bytes, message: bytes, algorithm: str = "sha256") -> bytes:
    """HMAC of message under key."""
    return hmac.new(key, message, algorithm).digest()


def any_match(expected: Sequence[bytes], given: Sequence[bytes]) -> bool:
    """Constant-time: does any given signature equal any expected one?

    Every pair is compared, so the time taken does not depend on which one matched.
    """
    matched = False
    for exp in expected:
        for sig in given:
            matched |= hmac.compare_digest(exp, sig)
    return matched


def body_digest(body: bytes) -> str:
    """sha256 of the body: the dedupe key of last resort."""
    return "sha256:" + hashlib.sha256(body).hexdigest()


def require_header(headers: Headers, name: str) -> str:
    """The stripped value of a header, or VerificationFailed when it is missing or empty."""
    value = headers.get(name, "").strip()
    if not value:
        raise VerificationFailed(f"missing {name} header")
    return value


def signed_header_bytes(headers: Headers, name: str) -> bytes:
    """A required header that is part of the signed message, as the UTF-8 bytes a sender
    signed. Text no sender could have signed (a lone surrogate) is VerificationFailed, not a
    crash."""
    try:
        return require_header(headers, name).encode()
    except UnicodeEncodeError:
        raise VerificationFailed(f"malformed {name} header") from None


def header_value(headers: Headers, *names: str) -> str | None:
    """The first of the named headers that is present and not blank."""
    for name in names:
        value = headers.get(name, "").strip()
        if value:
            return value
    return None


def keep_headers(headers: Headers, names: Iterable[str]) -> dict[str, str]:
    """The named headers that are present, under their lower-case names."""
    return {name.lower(): headers[name] for name in names if name in headers}


def decode_hex(text: str) -> bytes | None:
    """Bytes of a hex string in either case, or None when it is not hex."""
    try:
        return binascii.unhexlify(text.strip())
    except (binascii.Error, ValueError):
        return None


def decode_base64(text: str) -> bytes | None:
    """Bytes of a base64 string (standard or URL-safe, padding optional), or None."""
    compact = text.strip().translate(str.maketrans("-_", "+/"))
    try:
        return base64.b64decode(compact + "=" * (-len(compact) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None


def media_type(headers: Headers) -> str | None:
    """The declared media type, lower-cased and without parameters; None when absent."""
    ctype = headers.get("content-type")
    if ctype is None:
        return None
    return ctype.split(";", 1)[0].strip().lower()


def check_json_content_type(headers: Headers) -> None:
    """Refuse a body declared as something other than JSON (415). A missing type passes."""
    media = media_type(headers)
    if media is None:
        return
    if media != JSON_MEDIA_TYPE and not media.endswith("+json"):
        raise UnsupportedMediaType(f"expected {JSON_MEDIA_TYPE}, got {media or 'nothing'}")


def check_json_or_form_content_type(headers: Headers) -> None:
    """Refuse a body declared as neither JSON nor a URL-encoded form (415)."""
    media = media_type(headers)
    if media == FORM_MEDIA_TYPE:
        return
    try:
        check_json_content_type(headers)
    except UnsupportedMediaType:
        raise UnsupportedMediaType(
            f"expected {JSON_MEDIA_TYPE} or {FORM_MEDIA_TYPE}, got {media or 'nothing'}"
        ) from None


def parse_json(body: bytes | str) -> Any:
    """Parse a JSON body or raise BadRequest."""
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError) as err:
        raise BadRequest("body is not valid JSON") from err


def try_parse_json(body: bytes) -> Any | None:
    """Parse a JSON body, or None when it is not JSON."""
    try:
        return json.loads(body)
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None


def parse_form(body: bytes) -> dict[str, str]:
    """Fields of a URL-encoded form body (first value of each), or BadRequest."""
    try:
        fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
    except (UnicodeDecodeError, ValueError) as err:
        raise BadRequest("body is not a valid form") from err
    return {name: values[0] for name, values in fields.items()}


def json_field(payload: Any, path: str) -> str | None:
    """Read a dotted path (`data.object.id`, `value.0.changeType`) from parsed JSON; None when
    absent or not scalar. A numeric part indexes a list."""
    node = payload
    for part in path.split("."):
        if isinstance(node, list) and part.isascii() and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    if isinstance(node, (str, int, float)) and not isinstance(node, bool):
        return str(node)
    return None
