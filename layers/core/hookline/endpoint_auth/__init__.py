"""How the deliverer authenticates to an https endpoint beyond its signature: an OAuth2 bearer
token (`oauth2`), a client certificate and a private CA (`tls`); and the reconciler's warning
before a client certificate expires (`expiry`). Decision 0067.

`EndpointAuth` is the deliverer's one collaborator for both: inside the claim's connection it
unseals what an endpoint needs (`unseal`), and for the attempt it gives the client to send
with (`client`) and the `Authorization` header (`authorize`).
"""

from __future__ import annotations

import ssl
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hookline.db import Connection
from hookline.records import frozen
from hookline.secretbox import reveal
from hookline.settings import Settings
from hookline.webhook_client import WebhookClient

# OAuth2 and mutual TLS load when an endpoint uses them: most endpoints use neither, and
# deliver's cold start need not pay for them (decision 0048), nor for httpx, which fetches
# the tokens (decision 0112).
if TYPE_CHECKING:
    import httpx

    from hookline.endpoint_auth.oauth2 import OAuth2Client, TokenCache
    from hookline.endpoint_auth.tls import TlsClients
    from hookline.repositories.deliveries import Job


@frozen
class EndpointCredentials:
    """What one attempt needs of an endpoint's auth, revealed: the OAuth2 client, and the TLS
    client's version (with the key only when that client is not built yet)."""

    oauth2: OAuth2Client | None = None
    tls: dict[str, Any] | None = None
    tls_version: str | None = None
    tls_key: str | None = None


NONE = EndpointCredentials()


class EndpointAuth:
    """Tokens and TLS clients per endpoint, kept for the life of this container."""

    def __init__(
        self,
        http: WebhookClient,
        build_client: Callable[[ssl.SSLContext], WebhookClient],
        *,
        token_client: Callable[[], httpx.Client],
        token_timeout: tuple[float, float],
    ) -> None:
        """`http` is the shared SSRF-guarded client (it sends to endpoints without TLS
        material); `build_client` makes one around an SSL context; `token_client` makes the
        guarded httpx client tokens are fetched with, and `token_timeout` is their (whole,
        connect) seconds."""
        self.http = http
        self._build_client = build_client
        self._token_client = token_client
        self._token_timeout = token_timeout
        self._lock = threading.Lock()
        self._tokens: TokenCache | None = None
        self._clients: TlsClients | None = None

    @property
    def tokens(self) -> TokenCache:
        """The OAuth2 tokens, kept per endpoint (built for the first OAuth2 endpoint)."""
        with self._lock:
            if self._tokens is None:
                import httpx

                from hookline.endpoint_auth.oauth2 import TokenCache

                total, connect = self._token_timeout
                timeout = httpx.Timeout(total, connect=connect)
                self._tokens = TokenCache(self._token_client(), timeout=timeout)
            return self._tokens

    @property
    def clients(self) -> TlsClients:
        """The mutual-TLS clients per endpoint (built for the first endpoint with TLS)."""
        with self._lock:
            if self._clients is None:
                from hookline.endpoint_auth.tls import TlsClients

                self._clients = TlsClients(self._build_client)
            return self._clients

    def unseal(self, conn: Connection, job: Job) -> EndpointCredentials:
        """Reveal the endpoint's client secret, and its TLS key unless its client is built."""
        auth, auth_secret, tls, tls_key = job.auth, job.auth_secret, job.tls, job.tls_key
        if auth is None and tls is None:
            return NONE
        oauth2 = None
        if auth is not None and auth_secret is not None:
            from hookline.endpoint_auth.oauth2 import OAuth2Client

            oauth2 = OAuth2Client(
                auth["token_url"], auth["client_id"], reveal(conn, auth_secret),
                auth.get("scope"), auth.get("audience"),
            )  # fmt: skip
        if tls is None:
            return EndpointCredentials(oauth2)
        version = self.clients.version(tls, tls_key)
        needed = tls_key is not None and self.clients.cached(job.endpoint_id, version) is None
        key = reveal(conn, tls_key) if needed and tls_key is not None else None
        return EndpointCredentials(oauth2, tls, version, key)

    def client(self, endpoint_id: str, credentials: EndpointCredentials) -> WebhookClient:
        """The client to send with: the endpoint's own TLS client, or the shared one."""
        if credentials.tls is None or credentials.tls_version is None:
            return self.http
        return self.clients.client(
            endpoint_id, credentials.tls_version, credentials.tls, credentials.tls_key
        )

    def authorize(
        self,
        endpoint_id: str,
        credentials: EndpointCredentials,
        headers: dict[str, str],
        rejected: str | None = None,
    ) -> dict[str, str]:
        """The attempt's headers with `Authorization: Bearer <token>` for an OAuth2 endpoint
        (replacing a custom Authorization header; a new token when `rejected` is the header
        the endpoint just refused). Raises EndpointAuthFailed when no token can be had."""
        if credentials.oauth2 is None:
            return headers
        refused = None if rejected is None else rejected.removeprefix("Bearer ")
        token = self.tokens.token(endpoint_id, credentials.oauth2, rejected=refused)
        sent = {k: v for k, v in headers.items() if k.lower() != "authorization"}
        sent["authorization"] = f"Bearer {token}"
        return sent


def endpoint_auth_for(http: WebhookClient, settings: Settings, options: Any) -> EndpointAuth:
    """The deliverer's EndpointAuth: TLS clients and the token client guarded like the shared
    one, tokens fetched within the attempt's timeouts (`options` is the deliverer's
    DeliveryOptions)."""

    def build(context: ssl.SSLContext) -> WebhookClient:
        return WebhookClient(
            allow_private=settings.allow_private_targets,
            allow_http=settings.allow_http_targets,
            ssl_context=context,
        )

    def token_client() -> httpx.Client:
        from hookline.guarded_http import guarded_client

        return guarded_client(
            allow_private=settings.allow_private_targets,
            allow_http=settings.allow_http_targets,
            timeout=settings.config.deliver_timeout_seconds,
        )

    timeout = (options.timeout_seconds, options.connect_timeout_seconds)
    return EndpointAuth(http, build, token_client=token_client, token_timeout=timeout)
