"""Operators' sign-in through a Cognito user pool's hosted UI (docs/decisions/0053).

The authorization-code flow with PKCE for a public app client: the console sends the browser
to `<domain>/oauth2/authorize`, Cognito sends it back to the callback with a code, the console
exchanges the code (and its PKCE verifier) at `<domain>/oauth2/token` for tokens and keeps only
what the ID token proves. The ID token is verified with PyJWT: RS256 against the pool's JWKS,
the pool's issuer, this app client as audience, not expired, `token_use` = `id`.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
import threading
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from hookline.aws import client
from hookline.errors import SessionInvalid, UpstreamUnavailable
from hookline.records import frozen
from hookline.settings import Settings

# PyJWT (and cryptography's RSA and x509 under it) loads at a sign-in's callback: every other
# request carries a session, and the console's cold start need not pay for it (decision 0073);
# so does httpx, which only that callback uses here (decision 0079).
if TYPE_CHECKING:
    import jwt

TOKEN_TIMEOUT_SECONDS = 5.0
# Cognito stamps `iat` in whole seconds from its own clock: without leeway a token can look
# issued a fraction of a second in the future here.
CLOCK_SKEW_SECONDS = 30
JWKS_LIFESPAN_SECONDS = 3600  # keys are fetched again after an hour, or for an unknown kid
_jwks_lock = threading.Lock()
_jwks_clients: dict[str, jwt.PyJWKClient] = {}
_client_ids: dict[str, str] = {}  # SSM parameter name -> app client id, read once


@frozen
class UserPool:
    """Where the console's operators sign in: the pool, its app client and hosted UI."""

    pool_id: str
    client_id: str
    domain: str  # the hosted UI's base URL
    region: str
    jwks_override: str | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> UserPool | None:
        """The configured user pool, or None (local mode: no sign-in). The app client's id
        is a setting, or read once from its SSM parameter (behind a function URL)."""
        pool_id, domain = settings.cognito_user_pool_id, settings.cognito_domain
        parameter = settings.cognito_client_id_parameter
        if not (pool_id and domain and (settings.cognito_client_id or parameter)):
            return None
        client_id = settings.cognito_client_id or _parameter_value(settings, str(parameter))
        return cls(
            pool_id=pool_id,
            client_id=client_id,
            domain=domain,
            region=settings.aws_region,
            jwks_override=settings.cognito_jwks_url,
        )

    @property
    def issuer(self) -> str:
        """The `iss` of the pool's tokens."""
        return f"https://cognito-idp.{self.region}.amazonaws.com/{self.pool_id}"

    @property
    def jwks_url(self) -> str:
        """Where the pool publishes its signing keys."""
        return self.jwks_override or f"{self.issuer}/.well-known/jwks.json"


@frozen
class SignedInUser:
    """What a verified ID token says about who signed in."""

    subject: str
    email: str | None
    groups: tuple[str, ...]
    expires_at: datetime

    @property
    def principal(self) -> str:
        """How the audit log names this operator."""
        return f"cognito:{self.email or self.subject}"


def new_verifier() -> str:
    """A fresh PKCE code verifier (43 characters of base64url, RFC 7636's minimum length)."""
    return secrets.token_urlsafe(32)


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a verifier."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def authorize_url(pool: UserPool, *, redirect_uri: str, state: str, verifier: str) -> str:
    """The hosted UI's sign-in page for this browser's attempt."""
    query = urlencode(
        {
            "response_type": "code",
            "client_id": pool.client_id,
            "redirect_uri": redirect_uri,
            "scope": "openid email",
            "state": state,
            "code_challenge": pkce_challenge(verifier),
            "code_challenge_method": "S256",
        }
    )
    return f"{pool.domain}/oauth2/authorize?{query}"


def logout_url(pool: UserPool, *, return_to: str) -> str:
    """The hosted UI's sign-out, which ends its own session too and comes back to `return_to`
    (one of the app client's sign-out URLs)."""
    return (
        f"{pool.domain}/logout?{urlencode({'client_id': pool.client_id, 'logout_uri': return_to})}"
    )


def exchange_code(pool: UserPool, code: str, *, redirect_uri: str, verifier: str) -> str:
    """The ID token the token endpoint gives for an authorization code (SessionInvalid when
    the code is refused, UpstreamUnavailable when the endpoint cannot be reached)."""
    import httpx

    try:
        answer = httpx.post(
            f"{pool.domain}/oauth2/token",
            data={
                "grant_type": "authorization_code",
                "client_id": pool.client_id,
                "code": code,
                "redirect_uri": redirect_uri,
                "code_verifier": verifier,
            },
            headers={"Accept": "application/json"},
            timeout=TOKEN_TIMEOUT_SECONDS,
            follow_redirects=False,
        )
    except httpx.HTTPError as err:
        raise UpstreamUnavailable("the sign-in service cannot be reached") from err
    if answer.status_code >= 500:
        raise UpstreamUnavailable("the sign-in service cannot answer right now")
    try:
        body: Any = answer.json()
    except ValueError:
        body = {}
    token = body.get("id_token") if isinstance(body, dict) else None
    if answer.status_code != 200 or not isinstance(token, str):
        raise SessionInvalid("this sign-in did not work (the code was refused): sign in again")
    return token


def verify_id_token(pool: UserPool, token: str) -> SignedInUser:
    """Who an ID token says signed in, once it is proven to be this pool's, for this app
    client, current, and an ID token; SessionInvalid otherwise."""
    import jwt

    try:
        key = _jwks(pool.jwks_url).get_signing_key_from_jwt(token)
        claims = jwt.decode(
            token,
            key.key,
            algorithms=["RS256"],
            audience=pool.client_id,
            issuer=pool.issuer,
            leeway=CLOCK_SKEW_SECONDS,
            options={"require": ["exp", "iat", "iss", "aud", "sub", "token_use"]},
        )
    except jwt.PyJWKClientConnectionError as err:
        raise UpstreamUnavailable("the sign-in service's keys cannot be fetched") from err
    except jwt.PyJWTError as err:
        raise SessionInvalid("this sign-in could not be verified: sign in again") from err
    if claims.get("token_use") != "id":
        raise SessionInvalid("this sign-in could not be verified: sign in again")
    groups = claims.get("cognito:groups") or []
    if isinstance(groups, str):
        groups = groups.replace(",", " ").split()
    email = claims.get("email")
    return SignedInUser(
        subject=str(claims["sub"]),
        email=str(email) if email else None,
        groups=tuple(str(g) for g in groups),
        expires_at=datetime.fromtimestamp(int(claims["exp"]), UTC),
    )


def _parameter_value(settings: Settings, name: str) -> str:
    """An SSM parameter's value, read once per container."""
    if name not in _client_ids:
        answer = client("ssm", settings).get_parameter(Name=name)
        _client_ids[name] = str(answer["Parameter"]["Value"])
    return _client_ids[name]


def _jwks(url: str) -> jwt.PyJWKClient:
    """One key client per JWKS URL and container (it caches the key set)."""
    import jwt

    with _jwks_lock:
        found = _jwks_clients.get(url)
        if found is None:
            found = jwt.PyJWKClient(
                url, cache_keys=True, lifespan=JWKS_LIFESPAN_SECONDS, timeout=TOKEN_TIMEOUT_SECONDS
            )
            _jwks_clients[url] = found
        return found
