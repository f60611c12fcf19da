"""The client webhooks go out on: httpcore's connection pool (with the cheaper bookkeeping of
`hookline.connection_pool`) behind the SSRF guard's network backend, without httpx.

The deliverer sends a POST with exactly its headers and reads a status, a few headers and a
bounded excerpt (decisions 0075 and 0078): httpx's client layer, request and response models
were never on that path, and importing them cost deliver's cold start ~20 ms (decision 0112).
What needs the ordinary client API (OAuth2 token fetches, notifications, provider APIs) uses
`hookline.guarded_http`, which loads httpx when it is first built.
"""

from __future__ import annotations

import ipaddress
import re
import ssl
from collections.abc import Iterable, Iterator
from functools import lru_cache
from types import TracebackType

import httpcore

from hookline.connection_pool import DeliveryPool
from hookline.errors import UnsafeURL
from hookline.postgres_text import storable_text
from hookline.ssrf import MAX_URL_LENGTH, GuardedNetworkBackend, Resolver, system_resolver

# What a failed send raises besides `UnsafeURL` and `InvalidEndpointURL`: httpcore's errors,
# named as httpx names its own (`ConnectError`, `ReadError`, `RemoteProtocolError`, ...).
TIMEOUTS = httpcore.TimeoutException
HTTP_ERRORS = (
    httpcore.TimeoutException, httpcore.NetworkError, httpcore.ProtocolError,
    httpcore.UnsupportedProtocol, httpcore.ProxyError, httpcore.ConnectionNotAvailable,
)  # fmt: skip

# httpx's defaults, which the deliverer has always run with.
MAX_CONNECTIONS, MAX_KEEPALIVE, KEEPALIVE_EXPIRY = 100, 20, 5.0


class InvalidEndpointURL(ValueError):
    """An endpoint URL the client cannot send to (only one stored before today's checks)."""


def default_ssl_context() -> ssl.SSLContext:
    """The public CAs httpx trusts (certifi's bundle), as `httpx.create_ssl_context` builds
    them with the environment ignored."""
    import certifi

    return ssl.create_default_context(cafile=certifi.where())


class WebhookClient:
    """SSRF-guarded connections to endpoints, kept alive between messages; thread-safe.

    No redirect is followed, no proxy is read from the environment, no cookie is sent or kept:
    a request carries exactly the headers it is given, plus Host, Content-Length and
    `Accept: */*` unless given.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        allow_http: bool,
        resolve: Resolver = system_resolver,
        ssl_context: ssl.SSLContext | None = None,
        max_connections: int = MAX_CONNECTIONS,
        max_keepalive: int = MAX_KEEPALIVE,
    ) -> None:
        """A pool whose every connection goes through the guard; `ssl_context` defaults to
        the public CAs (an endpoint with mutual TLS brings its own)."""
        self.allow_http = allow_http
        self._pool = DeliveryPool(
            ssl_context=ssl_context if ssl_context is not None else default_ssl_context(),
            max_connections=max_connections,
            max_keepalive_connections=max_keepalive,
            keepalive_expiry=KEEPALIVE_EXPIRY,
            retries=0,
            network_backend=GuardedNetworkBackend(allow_private=allow_private, resolve=resolve),
        )

    def post_webhook(
        self, url: str, content: bytes, headers: dict[str, str], timeout: dict[str, float]
    ) -> WebhookAnswer:
        """POST `content` to `url` and return the answer with its body unread: the caller
        closes it. `timeout` holds `connect`, `read`, `write` and `pool` seconds.

        Raises `UnsafeURL` for plain http where it is not allowed or when the guard refuses
        the address, `InvalidEndpointURL`, one of `HTTP_ERRORS` (also while the body is
        read), and `UnicodeEncodeError` for a header that is not ASCII."""
        scheme, target, host = request_target(url)
        if scheme != "https" and not self.allow_http:
            raise UnsafeURL("endpoint URL must use https")
        raw = [(b"Host", host)]
        accept = True
        for name, value in headers.items():
            raw.append((name.encode("ascii"), value.encode("ascii")))
            accept = accept and name.lower() != "accept"
        if accept:
            raw.append((b"Accept", b"*/*"))
        raw.append((b"Content-Length", str(len(content)).encode()))
        request = httpcore.Request(
            b"POST", target, headers=raw, content=content, extensions={"timeout": timeout}
        )
        answer = self._pool.handle_request(request)
        if not isinstance(answer.stream, Iterable):  # a sync pool's answer always is
            raise TypeError("expected a synchronous response stream")
        return WebhookAnswer(answer)

    def close(self) -> None:
        """Close every connection."""
        self._pool.close()

    def __enter__(self) -> WebhookClient:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()


class WebhookAnswer:
    """An endpoint's answer as the deliverer reads it: the status, the headers (decoded as
    httpx decodes them: ASCII, else UTF-8, else ISO-8859-1) and the body, read as it
    arrives. The caller closes it."""

    __slots__ = ("_answer", "raw_headers", "status_code")

    def __init__(self, answer: httpcore.Response) -> None:
        self._answer = answer
        self.status_code = answer.status
        self.raw_headers: list[tuple[bytes, bytes]] = answer.headers

    def header_items(self) -> list[tuple[str, str]]:
        """Every header as (lower-cased name, value), in the order received."""
        encoding = _header_encoding(self.raw_headers)
        return [(k.decode(encoding).lower(), v.decode(encoding)) for k, v in self.raw_headers]

    def header(self, name: str) -> str | None:
        """A header's value (several joined with ", ", as httpx does), or None."""
        wanted = name.encode("ascii").lower()
        values = [v for k, v in self.raw_headers if k.lower() == wanted]
        if not values:
            return None
        encoding = _header_encoding(self.raw_headers)
        return ", ".join(v.decode(encoding) for v in values)

    def iter_bytes(self) -> Iterator[bytes]:
        """The body's chunks as they arrive (raising one of `HTTP_ERRORS` on a failed read)."""
        stream = self._answer.stream
        if not isinstance(stream, Iterable):  # checked when the answer came
            raise TypeError("expected a synchronous response stream")
        yield from stream

    def close(self) -> None:
        """Hand the connection back to the pool (or close it, if the body was not read)."""
        self._answer.close()


def _header_encoding(raw: list[tuple[bytes, bytes]]) -> str:
    for encoding in ("ascii", "utf-8"):
        try:
            for key, value in raw:
                key.decode(encoding)
                value.decode(encoding)
        except UnicodeDecodeError:
            continue
        return encoding
    return "iso-8859-1"


# A URL read here as httpx reads it, without httpx: lower-case scheme, an ASCII host name or
# dotted IPv4 address, a port, and a path and query that need no percent-encoding, no dot
# segments and no user info. Endpoint URLs are saved as httpx writes them (hookline.ssrf),
# so every one a check of today saved is such; any other goes through httpx itself.
# tests/unit/test_webhook_url.py compares the two on many URLs.
_SAFE = r"A-Za-z0-9\-._~!$&'()*+,;=:@"
_PLAIN_URL = re.compile(
    r"(https?)://([A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*)(?::([0-9]{1,5}))?"
    rf"((?:/(?:[{_SAFE}]|%[0-9A-Fa-f]{{2}})*)*)"
    rf"(\?(?:[{_SAFE}/?]|%[0-9A-Fa-f]{{2}})*)?"
    r"(?:#[!-~]*)?",
    re.ASCII,
)
_DOT_SEGMENT = re.compile(r"/\.\.?(?=/|$)")
_IPV4_STYLE = re.compile(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+", re.ASCII)
_DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=1024)
def request_target(url: str) -> tuple[str, httpcore.URL, bytes]:
    """An endpoint URL's scheme, httpcore URL and Host header, parsed once."""
    plain = _PLAIN_URL.fullmatch(url) if len(url) <= MAX_URL_LENGTH else None
    if plain is None or _DOT_SEGMENT.search(plain[4]):
        return _target_by_httpx(url)
    scheme, host, port_text, path, query = plain.groups()
    host = host.lower()
    if _IPV4_STYLE.fullmatch(host):
        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return _target_by_httpx(url)  # httpx refuses it, and says why
    port = None if port_text is None else int(port_text)
    if port == _DEFAULT_PORTS[scheme]:
        port = None
    netloc = host if port is None else f"{host}:{port}"
    target = (path or "/") + (query or "")
    return (
        scheme,
        httpcore.URL(scheme=scheme, host=host, port=port, target=target),
        netloc.encode("ascii"),
    )


def _target_by_httpx(url: str) -> tuple[str, httpcore.URL, bytes]:
    import httpx  # a URL saved before today's checks, at most once per container

    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        raise InvalidEndpointURL("endpoint URL is malformed") from None
    target = httpcore.URL(
        scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port, target=parsed.raw_path
    )
    return parsed.scheme, target, parsed.netloc


# Response headers kept per attempt (the delivery page shows them): bounded in number and
# size; a Set-Cookie value (the endpoint's session) is withheld.
MAX_RESPONSE_HEADERS, MAX_HEADER_NAME, MAX_HEADER_VALUE = 32, 64, 256


def response_headers(items: Iterable[tuple[str, str]]) -> dict[str, str]:
    """An answer's (name, value) headers as stored: the first MAX_RESPONSE_HEADERS names,
    each cut."""
    kept: dict[str, str] = {}
    for name, value in items:
        key = storable_text(name.lower(), MAX_HEADER_NAME)
        if key in kept:
            continue
        if len(kept) >= MAX_RESPONSE_HEADERS:
            break
        kept[key] = "•••" if key == "set-cookie" else storable_text(value, MAX_HEADER_VALUE)
    return kept
