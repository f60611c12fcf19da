"""The SSRF-guarded httpx client: for what fetches a URL a tenant or an operator gave, other
than a webhook (OAuth2 tokens, chat notifications, provider APIs, SNS certificates).
Webhooks go out on `hookline.webhook_client`, which does not load httpx (decision 0112);
both connect through `hookline.ssrf.GuardedNetworkBackend`."""

from __future__ import annotations

import ssl
from http.cookiejar import CookieJar, DefaultCookiePolicy

import httpx

from hookline.connection_pool import DeliveryPool
from hookline.errors import UnsafeURL
from hookline.ssrf import GuardedNetworkBackend, Resolver, system_resolver

# httpx's own defaults (httpx.Limits has none of its own).
_DEFAULT_LIMITS = httpx.Limits(max_connections=100, max_keepalive_connections=20)


class GuardedTransport(httpx.HTTPTransport):
    """`httpx.HTTPTransport` whose connections go through `GuardedNetworkBackend`.

    Proxies are not supported: through a proxy the peer is the proxy, and the
    check would say nothing about the endpoint.
    """

    def __init__(
        self,
        *,
        allow_private: bool,
        allow_http: bool,
        resolve: Resolver = system_resolver,
        verify: ssl.SSLContext | bool = True,
        limits: httpx.Limits | None = None,
        retries: int = 0,
    ) -> None:
        """Build the transport; `verify` as in httpx (True, False or an SSL context)."""
        limits = limits if limits is not None else _DEFAULT_LIMITS
        # One SSL context for both pools: httpx returns a context passed to it as is.
        ssl_context = httpx.create_ssl_context(verify=verify, trust_env=False)
        super().__init__(verify=ssl_context, trust_env=False, limits=limits, retries=retries)
        self._allow_http = allow_http
        # httpx builds its pool without a way to pass a network backend; build the
        # same pool with ours (and its cheaper bookkeeping, hookline.connection_pool).
        # Pinned httpx version; tests/integration/test_ssrf_connect.py fails if this stops
        # taking effect.
        self._pool = DeliveryPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            retries=retries,
            network_backend=GuardedNetworkBackend(allow_private=allow_private, resolve=resolve),
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Refuse plain http unless allowed, then send through the guarded pool."""
        if request.url.scheme != "https" and not self._allow_http:
            raise UnsafeURL("endpoint URL must use https")
        return super().handle_request(request)


def guarded_client(
    *,
    allow_private: bool,
    allow_http: bool,
    timeout: httpx.Timeout | float = 10.0,
    resolve: Resolver = system_resolver,
    verify: ssl.SSLContext | bool = True,
) -> httpx.Client:
    """An `httpx.Client` on the guarded transport: no redirects, no env proxies, no cookies.

    `trust_env=False` matters: with it on, httpx would mount proxy transports
    from HTTPS_PROXY and friends, and those would bypass the guard.
    Connect-time refusals raise `UnsafeURL`, which is not an `httpx.HTTPError`;
    the caller catches both.
    """
    transport = GuardedTransport(
        allow_private=allow_private, allow_http=allow_http, resolve=resolve, verify=verify
    )
    return httpx.Client(
        transport=transport,
        follow_redirects=False,
        trust_env=False,
        timeout=timeout,
        # One client serves every tenant: a cookie set by one URL must never ride along to
        # another (or to the same host for another tenant). Keep none.
        cookies=CookieJar(policy=DefaultCookiePolicy(allowed_domains=[])),
    )
