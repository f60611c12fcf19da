"""Signed tokens: portal links, the portal's session cookie, and CSRF tokens.

A token is `<purpose>.<tenant>.<expires unix>.<nonce>.<HMAC-SHA256>` (base64url MAC) under
the portal session key. A portal link's nonce is its `portal_links` row's id and a portal
session's its `portal_sessions` row's (decision 0061): the MAC proves the token is ours, the
row whether it is still live (unused, unrevoked). The key is `HOOKLINE_PORTAL_SESSION_KEY`,
the Secrets Manager secret `HOOKLINE_PORTAL_SESSION_KEY_SECRET_ARN` (the stack's, on AWS),
or, locally, one derived from the local master key file (the same file seals the secrets, so
the CLI that makes a link and the dev stack that takes it agree). A CSRF token is the MAC of
the request's session value (the portal cookie, or the console's own random cookie): a page
rendered for one browser's session is useless in another's.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta
from pathlib import Path

from hookline.aws import client
from hookline.errors import SessionInvalid
from hookline.records import frozen
from hookline.secretbox import LocalWrapper, SecretsUnavailable
from hookline.settings import Settings

LINK = "link"
SESSION = "session"
MAX_TTL = timedelta(hours=24)
_secret_keys: dict[str, bytes] = {}  # per container: the secret is read once


@frozen
class TenantSession:
    """A verified token: which tenant, until when."""

    tenant_id: str
    expires_at: datetime
    nonce: str = ""


def session_key(settings: Settings) -> bytes:
    """The key every token is signed with (SecretsUnavailable when there is none)."""
    if settings.portal_session_key:
        return settings.portal_session_key.encode()
    arn = settings.portal_session_key_secret_arn
    if arn:
        if arn not in _secret_keys:
            answer = client("secretsmanager", settings).get_secret_value(SecretId=arn)
            _secret_keys[arn] = str(answer["SecretString"]).encode()
        return _secret_keys[arn]
    if settings.kms_key_id:
        raise SecretsUnavailable("set HOOKLINE_PORTAL_SESSION_KEY to sign portal sessions")
    path = Path(settings.local_key_file)
    LocalWrapper.from_file(path)  # creates the file as the secret box would
    return hmac.new(path.read_bytes().strip(), b"hookline portal sessions", "sha256").digest()


def _mac(key: bytes, text: str) -> str:
    digest = hmac.new(key, text.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def sign(
    key: bytes, purpose: str, tenant_id: str, expires_at: datetime, nonce: str | None = None
) -> str:
    """A token for `purpose` scoped to `tenant_id`, valid until `expires_at`; `nonce` names
    the row it stands for (default: random)."""
    nonce = nonce or secrets.token_urlsafe(12)
    if "." in tenant_id or "." in nonce:
        raise ValueError("a tenant id or nonce has no dots")
    body = f"{purpose}.{tenant_id}.{int(expires_at.timestamp())}.{nonce}"
    return f"{body}.{_mac(key, body)}"


def verify(key: bytes, purpose: str, token: str, now: datetime | None = None) -> TenantSession:
    """The session a token carries; SessionInvalid if forged, for another purpose, or expired."""
    parts = token.split(".")
    if len(parts) != 5 or parts[0] != purpose:
        raise SessionInvalid("this link is not a valid portal link")
    body, mac = ".".join(parts[:4]), parts[4]
    if not hmac.compare_digest(_mac(key, body).encode(), mac.encode()):
        raise SessionInvalid("this link is not a valid portal link")
    try:
        expires_at = datetime.fromtimestamp(int(parts[2]), UTC)
    except ValueError as err:
        raise SessionInvalid("this link is not a valid portal link") from err
    if expires_at <= (now or datetime.now(UTC)):
        raise SessionInvalid("this link has expired: ask for a new one")
    return TenantSession(parts[1], expires_at, parts[3])


def csrf_token(key: bytes, session_value: str) -> str:
    """The CSRF token that goes with one session value."""
    return _mac(key, f"csrf.{session_value}")


def csrf_ok(key: bytes, session_value: str | None, token: str | None) -> bool:
    """Whether `token` was made for this session value."""
    if not session_value or not token:
        return False
    return hmac.compare_digest(csrf_token(key, session_value).encode(), token.encode())


def link_expiry(ttl: timedelta, now: datetime | None = None) -> datetime:
    """When a link made now with `ttl` stops working (whole seconds); BadRequest past 24h."""
    if ttl <= timedelta(0) or ttl > MAX_TTL:
        from hookline.errors import BadRequest

        raise BadRequest("ttl must be more than 0 and at most 24h")
    return ((now or datetime.now(UTC)) + ttl).replace(microsecond=0)


def portal_link(
    settings: Settings, tenant_id: str, link_id: str, *, base_url: str, expires_at: datetime
) -> dict[str, str]:
    """The URL of the portal link `link_id` of one tenant, and when it stops working."""
    token = sign(session_key(settings), LINK, tenant_id, expires_at, nonce=link_id)
    return {
        "id": link_id,
        "url": f"{base_url.rstrip('/')}/portal/login?token={token}",
        "expires_at": expires_at.isoformat(),
    }
