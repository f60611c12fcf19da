"""OAuth2 client credentials (RFC 6749 section 4.4) for endpoints that want a bearer token.

The token is fetched through the deliverer's SSRF-guarded client (the token URL is a URL a
tenant supplied), with the client authenticating by HTTP Basic, the one method RFC 6749 says
every authorization server supports. Tokens are kept per container, per endpoint and
credentials, until shortly before they expire; a 401 from the endpoint asks for a new one
once. A token endpoint that fails or answers garbage raises `EndpointAuthFailed`, which the
deliverer records as the attempt's reason (decision 0067).
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx

from hookline.errors import BadRequest, EndpointAuthFailed, UnsafeURL
from hookline.records import frozen
from hookline.ssrf import check_url

GRANT = "oauth2_client_credentials"
ANSWER_LIMIT_BYTES = 64 * 1024
DEFAULT_LIFETIME_SECONDS = 300.0  # a token answered without expires_in
# Renewed this long before it expires (or at 90 % of a shorter lifetime), so a token is never
# sent in its last seconds, when it could expire on the way.
RENEW_BEFORE_SECONDS = 60.0
MAX_CACHED = 4096


@frozen
class OAuth2Client:
    """An endpoint's client credentials, the client secret revealed."""

    token_url: str
    client_id: str
    client_secret: str
    scope: str | None = None
    audience: str | None = None

    def cache_key(self, endpoint_id: str) -> tuple[str, str]:
        """Tokens are kept per endpoint and credentials: changed credentials fetch anew."""
        material = json.dumps(
            [self.token_url, self.client_id, self.client_secret, self.scope, self.audience]
        )
        return endpoint_id, hashlib.sha256(material.encode()).hexdigest()


def parse_oauth2(
    value: dict[str, Any], *, allow_private: bool, allow_http: bool
) -> tuple[dict[str, Any], str]:
    """Check an endpoint's `auth` as the API received it; returns what is stored in the clear
    and the client secret (to be sealed). Raises BadRequest naming the field."""
    if value.get("type") != GRANT:
        raise BadRequest(f"auth.type: must be {GRANT!r}")
    for field in ("token_url", "client_id", "client_secret"):
        if not isinstance(value.get(field), str) or not value[field]:
            raise BadRequest(f"auth.{field}: required")
    try:
        token_url = check_url(
            value["token_url"], allow_private=allow_private, allow_http=allow_http
        ).url
    except UnsafeURL as err:
        raise BadRequest(
            f"auth.token_url: {str(err).replace('endpoint URL', 'token URL')}"
        ) from None
    public = {
        "type": GRANT,
        "token_url": token_url,
        "client_id": value["client_id"],
        "scope": value.get("scope") or None,
        "audience": value.get("audience") or None,
    }
    return public, str(value["client_secret"])


@dataclass
class _Token:
    value: str
    renew_at: float  # monotonic


class TokenCache:
    """Bearer tokens per endpoint, kept in this container until shortly before they expire.

    One lock per endpoint: the threads of a batch that all need a token wait for one fetch.
    """

    def __init__(
        self,
        http: httpx.Client,
        *,
        timeout: httpx.Timeout,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """`http` is an SSRF-guarded httpx client (`hookline.guarded_http`)."""
        self.http = http
        self.timeout = timeout
        self.clock = clock
        self._tokens: dict[tuple[str, str], _Token] = {}
        self._locks: dict[tuple[str, str], threading.Lock] = {}
        self._guard = threading.Lock()

    def token(self, endpoint_id: str, client: OAuth2Client, *, rejected: str | None = None) -> str:
        """A token for the endpoint: the cached one, or a new one when there is none, it is
        about to expire, or it is `rejected` (the endpoint answered 401 to it)."""
        key = client.cache_key(endpoint_id)
        with self._guard:
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            cached = self._tokens.get(key)
            if cached and cached.value != rejected and self.clock() < cached.renew_at:
                return cached.value
            value, lifetime = self._fetch(client)
            with self._guard:
                if len(self._tokens) >= MAX_CACHED:
                    self._tokens.clear()  # rare: a container serving thousands of endpoints
                renew_in = min(lifetime - RENEW_BEFORE_SECONDS, lifetime * 0.9)
                self._tokens[key] = _Token(value, self.clock() + max(renew_in, 0.0))
            return value

    def _fetch(self, client: OAuth2Client) -> tuple[str, float]:
        form = {"grant_type": "client_credentials"}
        if client.scope:
            form["scope"] = client.scope
        if client.audience:
            form["audience"] = client.audience
        # RFC 6749 2.3.1: both parts are form-urlencoded before the Basic encoding.
        basic = (quote(client.client_id, safe=""), quote(client.client_secret, safe=""))
        try:
            with self.http.stream(
                "POST",
                client.token_url,
                data=form,
                auth=basic,
                headers={"accept": "application/json"},
                timeout=self.timeout,
            ) as response:
                body = _read_bounded(response)
                status = response.status_code
        except UnsafeURL:
            raise EndpointAuthFailed("oauth2 token: token URL is not a public address") from None
        except httpx.TimeoutException:
            raise EndpointAuthFailed("oauth2 token: timeout") from None
        except httpx.HTTPError as err:
            raise EndpointAuthFailed(f"oauth2 token: {type(err).__name__}") from None
        if status != 200:
            raise EndpointAuthFailed(f"oauth2 token: HTTP {status}")
        return _token_of(body)


def _read_bounded(response: httpx.Response) -> bytes:
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > ANSWER_LIMIT_BYTES:
            raise EndpointAuthFailed("oauth2 token: answer larger than 64 KiB")
        chunks.append(chunk)
    return b"".join(chunks)


def _token_of(body: bytes) -> tuple[str, float]:
    try:
        answer = json.loads(body)
    except ValueError:
        raise EndpointAuthFailed("oauth2 token: answer is not JSON") from None
    if not isinstance(answer, dict):
        raise EndpointAuthFailed("oauth2 token: answer is not a JSON object")
    token = answer.get("access_token")
    if not isinstance(token, str) or not _header_safe(token):
        raise EndpointAuthFailed("oauth2 token: answer has no usable access_token")
    kind = answer.get("token_type", "Bearer")
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise EndpointAuthFailed("oauth2 token: token_type is not Bearer")
    lifetime = answer.get("expires_in", DEFAULT_LIFETIME_SECONDS)
    if isinstance(lifetime, str) and lifetime.isdigit():
        lifetime = int(lifetime)
    if isinstance(lifetime, bool) or not isinstance(lifetime, int | float) or lifetime < 0:
        raise EndpointAuthFailed("oauth2 token: expires_in is not a number of seconds")
    return token, float(lifetime)


def _header_safe(token: str) -> bool:
    # Sent as a header value: printable ASCII, no spaces (RFC 6750's b64token and more).
    return bool(token) and token.isascii() and token.isprintable() and " " not in token
