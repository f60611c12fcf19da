"""An endpoint's OAuth2 client, mutual TLS material and signing scheme (decision 0067): the
secret parts sealed here, as the endpoint's signing secrets are."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from hookline.db import Connection
from hookline.errors import NotFound
from hookline.records import frozen
from hookline.secretbox import seal
from hookline.sqlfiles import query


@frozen
class AuthChange:
    """What to change: `auth`/`tls` replace the whole part when their `set_` flag is on (None
    with the flag clears it); `signing` None keeps the scheme."""

    set_auth: bool = False
    auth: dict[str, Any] | None = None
    client_secret: str | None = None
    set_tls: bool = False
    tls: dict[str, Any] | None = None
    client_key: str | None = None
    tls_not_after: datetime | None = None
    signing: str | None = None


def set_endpoint_auth(conn: Connection, endpoint_id: str, change: AuthChange) -> None:
    """Store an endpoint's OAuth2 client and TLS material, sealing the secret and the key."""
    params = {
        "id": endpoint_id,
        "set_auth": change.set_auth,
        "auth": None if change.auth is None else Jsonb(change.auth),
        "auth_secret": None if change.client_secret is None else seal(conn, change.client_secret),
        "set_tls": change.set_tls,
        "tls": None if change.tls is None else Jsonb(change.tls),
        "tls_key": None if change.client_key is None else seal(conn, change.client_key),
        "tls_not_after": change.tls_not_after,
        "signing": change.signing,
    }
    if conn.execute(query("set_endpoint_auth"), params).fetchone() is None:
        raise NotFound(f"no endpoint {endpoint_id}")


def endpoint_signing(conn: Connection, endpoint_id: str) -> str:
    """The endpoint's signing scheme: `hmac` or `ed25519`."""
    row = conn.execute(query("endpoint_signing"), {"id": endpoint_id}).fetchone()
    if row is None:
        raise NotFound(f"no endpoint {endpoint_id}")
    return str(row["signing"])


def claim_expiring_certificates(
    conn: Connection, *, before: datetime, limit: int
) -> list[dict[str, Any]]:
    """Endpoints whose client certificate expires before `before` and was not announced yet,
    marked announced (in the caller's transaction)."""
    params = {"before": before, "limit": limit}
    return [dict(r) for r in conn.execute(query("claim_expiring_certificates"), params)]
