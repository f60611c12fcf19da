"""The client deliveries go out on: an `httpx.Client` that can post a webhook straight to its
pool (decision 0075). Built by `hookline.ssrf.guarded_client` around a `GuardedTransport`,
whose network backend is the SSRF guard at connect time."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpcore
import httpx

# httpx's own mapping of httpcore's errors to its own, and its response stream that keeps
# mapping them while the body is read: the ones `httpx.HTTPTransport` uses (pinned httpx).
from httpx._transports.default import ResponseStream, map_httpcore_exceptions

from hookline.errors import UnsafeURL
from hookline.postgres_text import storable_text


class GuardedClient(httpx.Client):
    """An `httpx.Client` on a guarded transport that can also post a webhook straight to it.

    `post_to_endpoint` is the deliverer's hot path: it skips what the client layer adds per
    request and a webhook never needs (URL and header merging, the cookie jar, auth and
    redirect handling, event hooks) and httpx's request model, and hands an httpcore request
    to the transport's pool, which was a third of the deliverer's CPU per attempt. The
    guard is untouched: the pool's network backend checks every address at connect time.
    Everything else (OAuth2 token fetches, the SNS verifier) uses the ordinary client API.
    """

    def __init__(
        self, transport: httpx.HTTPTransport, timeout: httpx.Timeout | float, *, allow_http: bool
    ) -> None:
        """A client on `transport`: no redirects, no env proxies, no cookies kept."""
        super().__init__(
            transport=transport,
            follow_redirects=False,
            trust_env=False,
            timeout=timeout,
            # One client serves every tenant's endpoints: a cookie set by one endpoint must
            # never ride along to another (or to the same host for another tenant). Keep none.
            cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
        )
        self.transport = transport
        self.allow_http = allow_http

    def post_to_endpoint(
        self, url: str, content: bytes, headers: dict[str, str], timeout: dict[str, float]
    ) -> httpx.Response:
        """POST `content` to `url` with exactly `headers` (plus Host, Content-Length and
        `Accept: */*` unless given), and return the response with its body unread: the
        caller closes it.

        `timeout` is httpx's per-request timeout extension (`connect`, `read`, `write`,
        `pool` seconds). No cookie is sent or kept, no redirect followed; nothing asks for a
        compressed answer. Raises as `httpx.Client.send` does (`httpx.HTTPError`,
        `httpx.InvalidURL`; a header that is not ASCII, `UnicodeEncodeError`), and
        `UnsafeURL` for plain http where it is not allowed or when the guard refuses the
        address."""
        answer = self._post(url, content, headers, timeout)
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            stream=ResponseStream(answer.stream),  # type: ignore[arg-type]
            extensions=answer.extensions,
        )

    def post_webhook(
        self, url: str, content: bytes, headers: dict[str, str], timeout: dict[str, float]
    ) -> WebhookAnswer:
        """`post_to_endpoint` without httpx's response model (decision 0078): the deliverer
        reads a status, two or three headers and a bounded excerpt, which the model's
        headers, stream wrapper and state cost more CPU to offer than reading them does.
        Raises as `post_to_endpoint` does, also while the body is read."""
        return WebhookAnswer(self._post(url, content, headers, timeout))

    def _post(
        self, url: str, content: bytes, headers: dict[str, str], timeout: dict[str, float]
    ) -> httpcore.Response:
        scheme, target, host = _target(url)
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
        with map_httpcore_exceptions():
            answer = self.transport._pool.handle_request(request)
        if not isinstance(answer.stream, Iterable):  # a sync pool's answer always is
            raise TypeError("expected a synchronous response stream")
        return answer


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
        """The body's chunks as they arrive (httpx's exceptions, as a response's stream)."""
        stream = self._answer.stream
        if not isinstance(stream, Iterable):  # checked when the answer came
            raise TypeError("expected a synchronous response stream")
        with map_httpcore_exceptions():
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


@lru_cache(maxsize=1024)
def _target(url: str) -> tuple[str, httpcore.URL, bytes]:
    """An endpoint URL's scheme, httpcore URL and Host header, parsed once (httpx.InvalidURL
    for one httpx cannot parse, as a request to it would raise)."""
    parsed = httpx.URL(url)
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
