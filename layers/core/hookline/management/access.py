"""Who is calling the management API, and which tenants they may see.

On AWS, API Gateway authenticates the caller with IAM (SigV4) and puts the principal ARN in
the request context; `api_principals` maps it (or, for an assumed-role session, its role) to a
scope: one tenant, or `*` for an operator. Principals in the `HOOKLINE_OPERATOR_PRINCIPALS`
setting are operators without a row (the bootstrap). Locally (`HOOKLINE_LOCAL_MODE`) a bearer
key works instead: the `HOOKLINE_API_KEY` setting is the operator's key, and keys stored as
`key:<sha256 hex>` principals are scoped like any other; with no key configured, local callers
are operators (a laptop's own stack).
"""

from __future__ import annotations

import hashlib
import hmac
import re

from hookline.db import Database
from hookline.errors import BadRequest, NotFound, Unauthorized
from hookline.records import frozen
from hookline.repositories import api as repo
from hookline.settings import Settings

OPERATOR = "*"
_ASSUMED_ROLE = re.compile(r"^arn:(aws[a-z-]*):sts::(\d{12}):assumed-role/([^/]+)/.+$")


@frozen
class Caller:
    """An authenticated caller: its principal and scope (a tenant id, or `*`)."""

    principal: str
    scope: str

    @property
    def operator(self) -> bool:
        """Sees and changes every tenant."""
        return self.scope == OPERATOR

    @property
    def tenant(self) -> str | None:
        """The tenant every query is scoped to; None for an operator."""
        return None if self.operator else self.scope

    def require_operator(self, action: str) -> None:
        """Refuse a tenant-scoped caller (403: the action itself is not theirs)."""
        if not self.operator:
            raise Unauthorized(f"only an operator may {action}")

    def tenant_for(self, requested: str | None) -> str:
        """The tenant a create acts on: an operator names it; a tenant caller may omit it, and
        another tenant's id is answered as unknown (nothing leaks across tenants)."""
        if self.operator:
            if not requested:
                raise BadRequest("tenant_id is required for an operator")
            return requested
        if requested and requested != self.scope:
            raise NotFound(f"no tenant {requested}")
        return self.scope


def key_principal(key: str) -> str:
    """The principal name of a local bearer key (only its hash is stored)."""
    return "key:" + hashlib.sha256(key.encode()).hexdigest()


def principal_candidates(arn: str) -> list[str]:
    """The principal, and for an assumed-role session also its role's ARN."""
    found = [arn]
    match = _ASSUMED_ROLE.match(arn)
    if match:
        partition, account, role = match.groups()
        found.append(f"arn:{partition}:iam::{account}:role/{role}")
    return found


def resolve_caller(
    db: Database, settings: Settings, *, identity_arn: str | None, authorization: str | None
) -> Caller:
    """The caller of a request, or Unauthorized (403)."""
    if identity_arn:
        candidates = principal_candidates(identity_arn)
        if any(c in settings.operator_principals for c in candidates):
            return Caller(identity_arn, OPERATOR)
        with db.connection() as conn:
            scope = repo.find_principal_scope(conn, candidates)
        if scope is None:
            raise Unauthorized("this principal is not allowed to use the Hookline API")
        return Caller(identity_arn, scope)
    if not settings.local_mode:
        raise Unauthorized("an authenticated identity is required")
    key = _bearer(authorization)
    if key is None:
        if settings.api_key:
            raise Unauthorized("send the local API key as 'Authorization: Bearer <key>'")
        return Caller("local", OPERATOR)
    if settings.api_key and hmac.compare_digest(key.encode(), settings.api_key.encode()):
        return Caller("local-operator-key", OPERATOR)
    principal = key_principal(key)
    with db.connection() as conn:
        scope = repo.find_principal_scope(conn, [principal])
    if scope is None:
        raise Unauthorized("unknown API key")
    return Caller(principal, scope)


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    kind, _, value = authorization.strip().partition(" ")
    if kind.lower() != "bearer" or not value.strip():
        raise Unauthorized("use 'Authorization: Bearer <key>'")
    return value.strip()
