"""An endpoint's `auth`, `tls` and `signing` as the management API receives them, checked and
turned into one change for the repository (decision 0067). Every refusal is a BadRequest
naming its field."""

from __future__ import annotations

from typing import Any

from hookline.endpoint_auth.oauth2 import parse_oauth2
from hookline.endpoint_auth.tls import parse_tls
from hookline.errors import BadRequest
from hookline.repositories.endpoint_auth import AuthChange


def auth_change(
    body: dict[str, Any], *, kind: str, allow_private: bool, allow_http: bool
) -> AuthChange | None:
    """The change `body` asks for (`auth`, `clear_auth`, `tls`, `clear_tls`, `signing`), or
    None when it asks for none. OAuth2 and TLS are for https endpoints only."""
    auth, tls = body.get("auth"), body.get("tls")
    clear_auth, clear_tls = bool(body.get("clear_auth")), bool(body.get("clear_tls"))
    if auth is not None and clear_auth:
        raise BadRequest("give auth or clear_auth, not both")
    if tls is not None and clear_tls:
        raise BadRequest("give tls or clear_tls, not both")
    if kind != "https":
        for field, value in (("auth", auth), ("tls", tls)):
            if value is not None:
                raise BadRequest(f"{field}: only https endpoints take it, not {kind}")
    signing = body.get("signing")
    if signing not in (None, "hmac", "ed25519"):
        raise BadRequest("signing: must be 'hmac' or 'ed25519'")
    if auth is None and tls is None and not clear_auth and not clear_tls and signing is None:
        return None
    change = AuthChange(signing=signing)
    if auth is not None:
        public, secret = parse_oauth2(auth, allow_private=allow_private, allow_http=allow_http)
        change = AuthChange(set_auth=True, auth=public, client_secret=secret, signing=signing)
    elif clear_auth:
        change = AuthChange(set_auth=True, signing=signing)
    if tls is not None:
        parsed = parse_tls(tls)
        return AuthChange(
            change.set_auth, change.auth, change.client_secret, True, parsed.public,
            parsed.client_key, parsed.not_after, signing,
        )  # fmt: skip
    if clear_tls:
        return AuthChange(change.set_auth, change.auth, change.client_secret, True, signing=signing)
    return change


def audited(change: AuthChange) -> dict[str, Any]:
    """What the audit log keeps of a change: never the client secret or the key."""
    kept: dict[str, Any] = {}
    if change.set_auth:
        kept["auth"] = None if change.auth is None else {
            k: change.auth[k] for k in ("type", "token_url", "client_id")
        }  # fmt: skip
    if change.set_tls:
        kept["tls"] = None if change.tls is None else {
            "certificate_subject": change.tls.get("certificate_subject"),
            "certificate_expires_at": change.tls.get("certificate_expires_at"),
            "ca_bundle": change.tls.get("ca_bundle") is not None,
        }  # fmt: skip
    if change.signing is not None:
        kept["signing"] = change.signing
    return kept
