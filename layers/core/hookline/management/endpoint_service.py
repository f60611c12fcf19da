"""Endpoints through the management API, each in the caller's scope: create (SSRF-checked),
read, list, update, enable/disable, rotate the signing secret, delete, and send a test event.

An endpoint of another tenant is answered exactly like one that does not exist (NotFound).
Changes (deletes too) and secret rotations are audited with the caller's principal. A deleted
endpoint is NotFound like a missing one; its deliveries stay readable
(docs/decisions/0019-soft-delete.md).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.db import Database
from hookline.destinations import HTTPS, OwnResources, check_destination
from hookline.endpoint_auth.inputs import audited, auth_change
from hookline.errors import BadRequest, Unauthorized
from hookline.filters import validate_filters
from hookline.ids import new_id
from hookline.management.access import Caller
from hookline.management.audit import audit
from hookline.management.inputs import parse_headers, parse_rate_limit
from hookline.management.paging import page_of, paged
from hookline.ordering import parse_ordering
from hookline.patterns import parse_pattern
from hookline.repositories import api as repo
from hookline.repositories import endpoint_auth as auth_repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.settings import Settings
from hookline.signing import generate_secret, generate_signing_key, public_key
from hookline.ssrf import check_url
from hookline.transformers import parse_transformer


def own_resources(settings: Settings) -> OwnResources:
    """What no endpoint of this deployment may target (decision 0061)."""
    return OwnResources(settings.account_id, settings.archive_bucket, settings.resource_prefix)


def _header_lines(headers: dict[str, str]) -> list[str]:
    return [f"{name}: {value}" for name, value in headers.items()]


def _content_filter(value: Any) -> dict[str, Any] | None:
    return None if value is None else parse_pattern(value)


def _input_transformer(value: Any) -> dict[str, Any] | None:
    return None if value is None else parse_transformer(value)


def _ordering(kind: str, value: Any) -> dict[str, Any] | None:
    ordering = parse_ordering(value)
    if ordering is not None and kind != HTTPS:
        # An AWS kind orders by its own means (a FIFO queue's message group, decision 0046).
        raise BadRequest("ordering: only https endpoints are ordered by Hookline")
    return ordering


# What an endpoint costs the deployment (slots held against a slow subscriber, its send
# rate) is the operator's to set; a tenant's own key gets the defaults (decision 0061).
OPERATOR_LIMITS = ("max_concurrency", "rate_limit_per_second", "clear_rate_limit")


def require_operator_for_limits(caller: Caller, given: Any) -> None:
    """Refuse (403, naming the field) a tenant-scoped caller that sets an operator's limit;
    `given` is the set of field names the request carries."""
    if caller.operator:
        return
    named = [name for name in OPERATOR_LIMITS if name in given]
    if named:
        raise Unauthorized(
            f"{named[0]}: an endpoint's limits are the operator's to set (max_concurrency, "
            "rate_limit_per_second); ask your operator"
        )


def create_endpoint(
    db: Database,
    settings: Settings,
    caller: Caller,
    body: dict[str, Any],
    *,
    given: Any = None,
) -> dict[str, Any]:
    """A new endpoint after the SSRF check, with its signing secret (returned once). `given`
    names the fields the caller set (default: the keys of `body`)."""
    require_operator_for_limits(caller, body.keys() if given is None else given)
    tenant_id = caller.tenant_for(body.get("tenant_id"))
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
    kind = body.get("kind") or HTTPS
    destination = check_destination(
        kind, body.get("target"), body.get("role_arn"), body.get("destination"),
        own_resources(settings),
    )  # fmt: skip
    if kind == HTTPS:
        if not body.get("url"):
            raise BadRequest("url: an https endpoint needs its URL")
        where = check_url(
            body["url"],
            allow_private=settings.allow_private_targets,
            allow_http=settings.allow_http_targets,
        ).url
    elif body.get("url"):
        raise BadRequest(f"url: an {kind} endpoint is given by its target ARN, not a URL")
    else:
        where = body["target"]
    max_concurrency = body.get("max_concurrency", 5)
    if not 1 <= max_concurrency <= 1000:
        raise BadRequest("max concurrency must be between 1 and 1000")
    rate = body.get("rate_limit_per_second")
    ed25519 = body.get("signing") == "ed25519"
    if body.get("signing") not in (None, "hmac", "ed25519"):
        raise BadRequest("signing: must be 'hmac' or 'ed25519'")
    signing = "ed25519" if ed25519 else None  # hmac is the default: nothing to change
    auth = auth_change(
        {"auth": body.get("auth"), "tls": body.get("tls"), "signing": signing},
        kind=kind, allow_private=settings.allow_private_targets,
        allow_http=settings.allow_http_targets,
    )  # fmt: skip
    secret = generate_signing_key() if ed25519 else generate_secret()
    with db.connection() as conn, conn.transaction():
        created = endpoint_repo.create_endpoint(
            conn,
            tenant_id=tenant_id,
            url=where,
            secret=secret,
            description=body.get("description") or "",
            event_types=validate_filters(list(body.get("event_types") or [])),
            max_concurrency=max_concurrency,
            rate_limit_per_second=parse_rate_limit(None if rate is None else f"{rate}/s"),
            headers=parse_headers(_header_lines(body.get("headers") or {})),
            retry_on_4xx=bool(body.get("retry_on_4xx")),
            content_filter=_content_filter(body.get("content_filter")),
            input_transformer=_input_transformer(body.get("input_transformer")),
            kind=kind,
            role_arn=body.get("role_arn"),
            destination=destination,
            ordering=_ordering(kind, body.get("ordering")),
        )
        if auth is not None:
            auth_repo.set_endpoint_auth(conn, created["id"], auth)
        audit(conn, caller, "create", "endpoint", created["id"], {"url": created["url"]})
    # An Ed25519 private key is never shown: receivers verify with the public keys.
    return {**get_endpoint(db, caller, created["id"]), "secret": None if ed25519 else secret}


def get_endpoint(db: Database, caller: Caller, endpoint_id: str) -> dict[str, Any]:
    """One endpoint in scope, without secrets."""
    with db.connection() as conn:
        return endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)


def keep_to_public_targets(db: Database, caller: Caller, endpoint_id: str) -> None:
    """From now on the endpoint (in scope) reaches public addresses only: the deliverer refuses
    a private one at connect time too, whatever the deployment allows (decision 0059, after
    0043's check at save). For what a tenant's customer adds or re-points in the portal."""
    with db.connection() as conn:
        endpoint_repo.keep_public(conn, caller.tenant, endpoint_id)


def list_endpoints(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    enabled: bool | None,
    cursor: str | None,
    limit: int,
) -> dict[str, Any]:
    """Endpoints in scope, without secrets."""
    with db.connection() as conn:
        rows = endpoint_repo.list_in_scope(
            conn, caller.tenant, page_of(cursor, limit), tenant_id=tenant_id, enabled=enabled
        )
    return paged(rows, limit)


def update_endpoint(
    db: Database, settings: Settings, caller: Caller, endpoint_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Change an endpoint's URL (SSRF-checked again), filters, limits or headers."""
    changes: dict[str, Any] = {k: v for k, v in body.items() if v is not None}
    require_operator_for_limits(
        caller, [k for k in changes if k != "clear_rate_limit" or changes[k]]
    )
    auth = None
    if any(changes.get(k) for k in ("auth", "tls", "clear_auth", "clear_tls")):
        with db.connection() as conn:
            kind = endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)["kind"]
        auth = auth_change(
            changes, kind=kind, allow_private=settings.allow_private_targets,
            allow_http=settings.allow_http_targets,
        )  # fmt: skip
    for part in ("auth", "tls", "clear_auth", "clear_tls"):
        changes.pop(part, None)
    if "role_arn" in changes or "destination" in changes or "url" in changes:
        with db.connection() as conn:
            current = endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)
        if current["kind"] != HTTPS:
            if "url" in changes:
                raise BadRequest(f"url: an {current['kind']} endpoint has a target, not a URL")
            changes["destination"] = check_destination(
                current["kind"], current["url"], changes.get("role_arn", current["role_arn"]),
                changes.get("destination", current["destination"]), own_resources(settings),
            )  # fmt: skip
        elif "role_arn" in changes or "destination" in changes:
            raise BadRequest("role_arn and destination are for AWS kinds, not https")
    if "url" in changes:
        changes["url"] = check_url(
            changes["url"],
            allow_private=settings.allow_private_targets,
            allow_http=settings.allow_http_targets,
        ).url
    if "event_types" in changes:
        changes["event_types"] = validate_filters(list(changes["event_types"]))
    if "headers" in changes:
        changes["headers"] = parse_headers(_header_lines(changes["headers"]))
    if "content_filter" in changes:
        if changes.get("clear_content_filter"):
            raise BadRequest("give content_filter or clear_content_filter, not both")
        changes["content_filter"] = _content_filter(changes["content_filter"])
    if "input_transformer" in changes:
        if changes.get("clear_input_transformer"):
            raise BadRequest("give input_transformer or clear_input_transformer, not both")
        changes["input_transformer"] = _input_transformer(changes["input_transformer"])
    if "ordering" in changes:
        if changes.get("clear_ordering"):
            raise BadRequest("give ordering or clear_ordering, not both")
        with db.connection() as conn:
            kind = endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)["kind"]
        changes["ordering"] = _ordering(kind, changes["ordering"])
    if changes.get("clear_rate_limit") and "rate_limit_per_second" in changes:
        raise BadRequest("give rate_limit_per_second or clear_rate_limit, not both")
    with db.connection() as conn, conn.transaction():
        endpoint_repo.update_in_scope(conn, caller.tenant, endpoint_id, changes)
        kept = {k: v for k, v in changes.items() if k != "headers"}
        if "headers" in changes:
            kept["headers"] = sorted(changes["headers"])  # names only: values may be tokens
        if auth is not None:
            auth_repo.set_endpoint_auth(conn, endpoint_id, auth)
            kept |= audited(auth)  # never the client secret or the key
        audit(conn, caller, "update", "endpoint", endpoint_id, kept)
    return get_endpoint(db, caller, endpoint_id)


def set_endpoint_enabled(
    db: Database, caller: Caller, endpoint_id: str, *, enabled: bool, reason: str | None = None
) -> dict[str, Any]:
    """Enable (clearing its failure streak) or disable an endpoint."""
    with db.connection() as conn:
        endpoint_repo.set_enabled_in_scope(conn, caller.tenant, endpoint_id, enabled, reason)
        params = {} if enabled else {"reason": reason}
        audit(conn, caller, "enable" if enabled else "disable", "endpoint", endpoint_id, params)
    return get_endpoint(db, caller, endpoint_id)


def rotate_endpoint_secret(
    db: Database, settings: Settings, caller: Caller, endpoint_id: str
) -> dict[str, Any]:
    """A new signing secret; the earlier ones keep signing for the configured overlap."""
    overlap = timedelta(hours=settings.config.secret_rotation_overlap_hours)
    with db.connection() as conn, conn.transaction():
        endpoint_repo.lock_in_scope(conn, caller.tenant, endpoint_id)  # a delete waits, or won
        # Ed25519 endpoints rotate their key pair; both keys sign during the overlap.
        ed25519 = auth_repo.endpoint_signing(conn, endpoint_id) == "ed25519"
        secret = generate_signing_key() if ed25519 else generate_secret()
        endpoint_repo.rotate_secret(conn, endpoint_id, secret, overlap)
        expire_at = repo.previous_secrets_expire_at(conn, endpoint_id)
        audit(conn, caller, "rotate_secret", "endpoint", endpoint_id, {"overlap": str(overlap)})
    if ed25519:
        return {"id": endpoint_id, "secret": None, "public_key": public_key(secret),
                "previous_secrets_expire_at": expire_at}  # fmt: skip
    return {"id": endpoint_id, "secret": secret, "previous_secrets_expire_at": expire_at}


def delete_endpoint(db: Database, caller: Caller, endpoint_id: str) -> dict[str, Any]:
    """Soft-delete an endpoint: disabled for good (no new deliveries; queued ones fail with
    "endpoint deleted" when claimed), its signing secrets wiped, its deliveries readable."""
    with db.connection() as conn, conn.transaction():
        deleted = endpoint_repo.delete_in_scope(conn, caller.tenant, endpoint_id)
        audit(conn, caller, "delete", "endpoint", endpoint_id, {"url": deleted["url"]})
    return deleted


def send_test_event(
    db: Database,
    settings: Settings,
    caller: Caller,
    endpoint_id: str,
    *,
    type: str,
    payload: dict[str, Any] | None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> dict[str, Any]:
    """An event for this one endpoint (not fanned out to the tenant's others), due now."""
    from hookline.ingest import encode_payload, validate_event_type

    validate_event_type(type)
    body = (
        payload
        if payload is not None
        else {
            "message": "a test event from Hookline",
            "endpoint_id": endpoint_id,
            "sent_at": now().isoformat(),
        }
    )
    event_id = new_id("evt")
    with db.connection() as conn, conn.transaction():
        endpoint = endpoint_repo.lock_in_scope(conn, caller.tenant, endpoint_id)
        delivery_id = repo.insert_test_event(
            conn,
            event_id=event_id,
            tenant_id=endpoint["tenant_id"],
            endpoint_id=endpoint_id,
            type=type,
            payload=encode_payload(body),
            deadline=timedelta(hours=settings.config.delivery_deadline_hours),
        )
        audit(conn, caller, "send_test_event", "endpoint", endpoint_id, {"event_id": event_id})
    return {"event_id": event_id, "delivery_id": delivery_id}
