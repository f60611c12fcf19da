"""The client deliveries go out on: an `httpx.Client` that can post a webhook straight to its
pool (decision 0075). Built by `hookline.ssrf.guarded_client` around a `GuardedTransport`,
whose network backend is the SSRF guard at connect time."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpcore
import httpx

# httpx's own mapping of httpcore's errors to its own, and its response stream that keeps
# mapping them while the body is read: the ones `httpx.HTTPTransport` uses (pinned httpx).
from httpx._transports.default import ResponseStream, map_httpcore_exceptions

from hookline.errors import UnsafeURL


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
        return httpx.Response(
            answer.status,
            headers=answer.headers,
            stream=ResponseStream(answer.stream),
            extensions=answer.extensions,
        )


@lru_cache(maxsize=1024)
def _target(url: str) -> tuple[str, httpcore.URL, bytes]:
    """An endpoint URL's scheme, httpcore URL and Host header, parsed once (httpx.InvalidURL
    for one httpx cannot parse, as a request to it would raise)."""
    parsed = httpx.URL(url)
    target = httpcore.URL(
        scheme=parsed.raw_scheme, host=parsed.raw_host, port=parsed.port, target=parsed.raw_path
    )
    return parsed.scheme, target, parsed.netloc
