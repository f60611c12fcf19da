"""The management API's services: each takes the caller and acts only inside its scope.

An object of another tenant is answered exactly like one that does not exist (NotFound), so
nothing about other tenants leaks; an action no tenant may take (creating a tenant) is 403.
Changes to sources and endpoints (deletes too) and secret rotations are audited with the
caller's principal. A deleted source or endpoint is NotFound like a missing one; what refers to
it (events, deliveries) stays readable (docs/decisions/0019-soft-delete.md).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from hookline.catalogue_limits import DEFAULT_LIMITS, CatalogueLimits
from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.destinations import HTTPS, check_destination
from hookline.errors import BadRequest
from hookline.filters import validate_filters
from hookline.ids import new_id
from hookline.ingest import Accepted, publish
from hookline.management import source_rules
from hookline.management.access import Caller
from hookline.management.inputs import check_group, parse_headers, parse_rate_limit
from hookline.management.paging import MAX_PAGE as MAX_PAGE
from hookline.management.paging import decode_cursor, page_of, paged
from hookline.patterns import parse_pattern
from hookline.repositories import api as repo
from hookline.repositories import audit as audit_repo
from hookline.repositories import endpoints as endpoint_repo
from hookline.repositories import sources as source_repo
from hookline.repositories import tenants as tenant_repo
from hookline.repositories.source_activity import source_activity
from hookline.settings import Settings
from hookline.signing import generate_secret
from hookline.ssrf import check_url
from hookline.transformers import parse_transformer
from hookline.verifiers import SCHEMES, SourceConfig, verifier_for

# A stored payload nested deeper than this is answered as base64: pydantic's serializer stops
# near 255 levels, and what the API takes in is refused past it (hookline.api.inputs).
MAX_RENDERED_DEPTH = 200


# -- tenants ----------------------------------------------------------------------------------


def _tenant_out(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["id"],
        "name": row["name"],
        "group": row["tenant_group"],
        "created_at": row["created_at"],
        "external_id": row.get("external_id"),
    }


def create_tenant(
    db: Database, config: HooklineConfig, caller: Caller, *, name: str, group: str | None
) -> dict[str, Any]:
    """A new tenant (operators only)."""
    caller.require_operator("create tenants")
    group = check_group(config, group)
    if not name.strip():
        raise BadRequest("a tenant needs a name")
    with db.connection() as conn:
        row = tenant_repo.create_tenant(conn, name=name.strip(), tenant_group=group)
    return get_tenant(db, caller, row["id"])


def get_tenant(db: Database, caller: Caller, tenant_id: str) -> dict[str, Any]:
    """One tenant in scope."""
    with db.connection() as conn:
        return _tenant_out(repo.get_tenant(conn, caller.tenant, tenant_id))


def list_tenants(db: Database, caller: Caller, *, cursor: str | None, limit: int) -> dict[str, Any]:
    """Tenants in scope (a tenant caller sees itself)."""
    with db.connection() as conn:
        rows = repo.list_tenants(conn, caller.tenant, page_of(cursor, limit))
    return paged([_tenant_out(r) for r in rows], limit)


# -- sources ----------------------------------------------------------------------------------


def _source_out(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "path": f"/in/{row['id']}"}


def create_source(db: Database, caller: Caller, body: dict[str, Any]) -> dict[str, Any]:
    """A new inbound source; a secret is generated when none is given (returned once).
    Audited with its plain fields' values and its secrets' names."""
    tenant_id = caller.tenant_for(body.get("tenant_id"))
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
    options = source_rules.guard_catchup_options(
        caller, body.get("options") or {}, None, tenant_id=tenant_id
    )
    # One secret, or two (a rotation's newer and older); generated when none is given.
    given = [s for s in body.get("secrets") or [body.get("secret")] if s]
    generated = None if given else generate_secret()
    scheme = body["scheme"]
    secrets = given or [generated or ""]
    tolerance = body.get("tolerance_seconds", 300)
    if scheme not in SCHEMES:
        raise BadRequest(f"unknown scheme {scheme!r}; known: {', '.join(sorted(SCHEMES))}")
    _check_source(scheme, secrets, tolerance, options)
    with db.connection() as conn, conn.transaction():
        created = source_repo.create_source(
            conn, tenant_id=tenant_id, name=body.get("name") or scheme, scheme=scheme,
            secrets=secrets, tolerance_seconds=tolerance, options=options,
        )  # fmt: skip
        audit(
            conn, caller, "create", "source", created["id"],
            source_rules.created(created, secret_given=generated is None),
        )  # fmt: skip
    return {**get_source(db, caller, created["id"]), "secret": generated}


def get_source(db: Database, caller: Caller, source_id: str) -> dict[str, Any]:
    """One source in scope, without secrets, with its activity (decision 0038)."""
    with db.connection() as conn:
        row = source_repo.get_in_scope(conn, caller.tenant, source_id)
        activity = source_activity(conn, row["tenant_id"], source_id)
    return {**_source_out(row), "activity": activity}


def list_sources(
    db: Database, caller: Caller, *, tenant_id: str | None, cursor: str | None, limit: int
) -> dict[str, Any]:
    """Sources in scope, without secrets."""
    with db.connection() as conn:
        rows = source_repo.list_in_scope(
            conn, caller.tenant, page_of(cursor, limit), tenant_id=tenant_id
        )
    return paged([_source_out(r) for r in rows], limit)


def set_source_enabled(
    db: Database, caller: Caller, source_id: str, *, enabled: bool
) -> dict[str, Any]:
    """Enable or disable a source (a disabled source answers 404 to providers)."""
    with db.connection() as conn:
        source_repo.set_enabled_in_scope(conn, caller.tenant, source_id, enabled)
        audit(conn, caller, "enable" if enabled else "disable", "source", source_id, {})
    return get_source(db, caller, source_id)


def rotate_source_secret(
    db: Database, caller: Caller, source_id: str, *, secret: str | None, keep_previous: bool
) -> dict[str, Any]:
    """A new secret for a source; the previous one keeps verifying unless told otherwise."""
    new_secret = secret or generate_secret()
    with db.connection() as conn, conn.transaction():
        source = source_repo.lock_in_scope(conn, caller.tenant, source_id)
        stored = source.secrets
        secrets = [new_secret] + ([stored[0]] if keep_previous and stored else [])
        _check_source(source.scheme, secrets, source.tolerance_seconds, source.options)
        source_repo.set_secrets_in_scope(conn, caller.tenant, source_id, secrets)
        audit(conn, caller, "rotate_secret", "source", source_id, {"keep_previous": keep_previous})
    return {
        "id": source_id,
        "secret": None if secret else new_secret,
        "previous_kept": keep_previous and len(secrets) == 2,
    }


def update_source(
    db: Database, caller: Caller, source_id: str, body: dict[str, Any]
) -> dict[str, Any]:
    """Change a source's name, timestamp tolerance or scheme options, checked as on create.
    Never its secret (rotate it) nor its scheme (that is a new source)."""
    changes: dict[str, Any] = {k: v for k, v in body.items() if v is not None}
    if "name" in changes:
        changes["name"] = changes["name"].strip()
        if not changes["name"]:
            raise BadRequest("a source's name cannot be blank")
    with db.connection() as conn, conn.transaction():
        source = source_repo.lock_in_scope(conn, caller.tenant, source_id)
        if "options" in changes:
            changes["options"] = source_rules.guard_catchup_options(
                caller, changes["options"], source.options, tenant_id=source.tenant_id
            )
        _check_source(
            source.scheme,
            list(source.secrets),
            changes.get("tolerance_seconds", source.tolerance_seconds),
            changes.get("options", source.options),
        )
        source_repo.update_in_scope(
            conn, caller.tenant, source_id, changes, stored_options=source.options
        )
        before = {k: getattr(source, k) for k in source_rules.PLAIN_FIELDS} | {
            "options": source.options
        }
        params = source_rules.changed(before, changes, stored_options=source.options)
        audit(conn, caller, "update", "source", source_id, params)
    return get_source(db, caller, source_id)


def delete_source(db: Database, caller: Caller, source_id: str) -> dict[str, Any]:
    """Soft-delete a source: providers posting to it get 404 as for an unknown source, its
    secrets are wiped, and the events it received stay readable."""
    with db.connection() as conn, conn.transaction():
        had_key = source_rules.has_catchup_key(
            source_repo.lock_in_scope(conn, caller.tenant, source_id).options
        )
        deleted = source_repo.delete_in_scope(conn, caller.tenant, source_id)
        params = source_rules.deleted(deleted, had_key=had_key)
        audit(conn, caller, "delete", "source", source_id, params)
    return _source_out(deleted)


def _check_source(scheme: str, secrets: list[str], tolerance_seconds: int, options: Any) -> None:
    if tolerance_seconds <= 0:
        raise BadRequest("tolerance must be a positive number of seconds")
    try:
        verifier_for(scheme, SourceConfig(tuple(secrets), tolerance_seconds, options))
    except ValueError as err:
        raise BadRequest(str(err)) from err


# -- endpoints --------------------------------------------------------------------------------


def _header_lines(headers: dict[str, str]) -> list[str]:
    return [f"{name}: {value}" for name, value in headers.items()]


def _content_filter(value: Any) -> dict[str, Any] | None:
    return None if value is None else parse_pattern(value)


def _input_transformer(value: Any) -> dict[str, Any] | None:
    return None if value is None else parse_transformer(value)


def create_endpoint(
    db: Database, settings: Settings, caller: Caller, body: dict[str, Any]
) -> dict[str, Any]:
    """A new endpoint after the SSRF check, with its signing secret (returned once)."""
    tenant_id = caller.tenant_for(body.get("tenant_id"))
    with db.connection() as conn:
        repo.get_tenant(conn, caller.tenant, tenant_id)
    kind = body.get("kind") or HTTPS
    destination = check_destination(
        kind, body.get("target"), body.get("role_arn"), body.get("destination")
    )
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
    secret = generate_secret()
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
        )
        audit(conn, caller, "create", "endpoint", created["id"], {"url": created["url"]})
    return {**get_endpoint(db, caller, created["id"]), "secret": secret}


def get_endpoint(db: Database, caller: Caller, endpoint_id: str) -> dict[str, Any]:
    """One endpoint in scope, without secrets."""
    with db.connection() as conn:
        return endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)


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
    if "role_arn" in changes or "destination" in changes or "url" in changes:
        with db.connection() as conn:
            current = endpoint_repo.get_in_scope(conn, caller.tenant, endpoint_id)
        if current["kind"] != HTTPS:
            if "url" in changes:
                raise BadRequest(f"url: an {current['kind']} endpoint has a target, not a URL")
            changes["destination"] = check_destination(
                current["kind"], current["url"], changes.get("role_arn", current["role_arn"]),
                changes.get("destination", current["destination"]),
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
    if changes.get("clear_rate_limit") and "rate_limit_per_second" in changes:
        raise BadRequest("give rate_limit_per_second or clear_rate_limit, not both")
    with db.connection() as conn, conn.transaction():
        endpoint_repo.update_in_scope(conn, caller.tenant, endpoint_id, changes)
        audited = {k: v for k, v in changes.items() if k != "headers"}
        if "headers" in changes:
            audited["headers"] = sorted(changes["headers"])  # names only: values may be tokens
        audit(conn, caller, "update", "endpoint", endpoint_id, audited)
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
    secret = generate_secret()
    with db.connection() as conn, conn.transaction():
        endpoint_repo.lock_in_scope(conn, caller.tenant, endpoint_id)  # a delete waits, or won
        endpoint_repo.rotate_secret(conn, endpoint_id, secret, overlap)
        expire_at = repo.previous_secrets_expire_at(conn, endpoint_id)
        audit(conn, caller, "rotate_secret", "endpoint", endpoint_id, {"overlap": str(overlap)})
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
    event_id, delivery_id = new_id("evt"), new_id("dlv")
    with db.connection() as conn, conn.transaction():
        endpoint = endpoint_repo.lock_in_scope(conn, caller.tenant, endpoint_id)
        repo.insert_test_event(
            conn,
            event_id=event_id,
            delivery_id=delivery_id,
            tenant_id=endpoint["tenant_id"],
            endpoint_id=endpoint_id,
            type=type,
            payload=encode_payload(body),
            deadline=timedelta(hours=settings.config.delivery_deadline_hours),
        )
        audit(conn, caller, "send_test_event", "endpoint", endpoint_id, {"event_id": event_id})
    return {"event_id": event_id, "delivery_id": delivery_id}


# -- events -----------------------------------------------------------------------------------


def publish_event(
    db: Database,
    caller: Caller,
    *,
    tenant_id: str | None,
    type: Any,
    payload: Any,
    idempotency_key: str | None,
    limits: CatalogueLimits = DEFAULT_LIMITS,
) -> Accepted:
    """A tenant's own event into the ledger; the Idempotency-Key is its dedupe key. A payload
    over `limits` (size, depth, integers, validation steps) is refused, nothing stored."""
    tenant = caller.tenant_for(tenant_id)
    if not isinstance(tenant, str):
        raise BadRequest("tenant_id must be a string")
    with db.connection() as conn:
        return publish(
            conn,
            tenant_id=tenant,
            type=type,
            payload=payload,
            idempotency_key=idempotency_key,
            limits=limits,
        )


def get_event(db: Database, caller: Caller, event_id: str) -> dict[str, Any]:
    """One event in scope, with its payload (JSON when it is JSON, else base64)."""
    with db.connection() as conn:
        row = repo.get_event(conn, caller.tenant, event_id)
    raw = bytes(row.pop("payload"))
    try:
        payload = json.loads(raw)
    except (UnicodeDecodeError, ValueError, RecursionError):
        row["payload_base64"] = base64.b64encode(raw).decode()
    else:
        if nesting_depth(payload) <= MAX_RENDERED_DEPTH:
            row["payload"] = payload
        else:
            row["payload_base64"] = base64.b64encode(raw).decode()
    row["headers"] = {str(k): str(v) for k, v in dict(row["headers"]).items()}
    return row


def nesting_depth(value: Any) -> int:
    """How deeply arrays and objects nest in a JSON value (a scalar: 0), without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def list_events(
    db: Database, caller: Caller, *, filters: dict[str, Any], cursor: str | None, limit: int
) -> dict[str, Any]:
    """Events in scope, newest first, filtered by tenant, type, source and time window."""
    _check_window(filters)
    with db.connection() as conn:
        rows = repo.list_events(conn, caller.tenant, page_of(cursor, limit), filters)
    return paged(rows, limit)


# -- deliveries -------------------------------------------------------------------------------


def get_delivery(db: Database, caller: Caller, delivery_id: str) -> dict[str, Any]:
    """One delivery in scope."""
    with db.connection() as conn:
        return repo.get_delivery(conn, caller.tenant, delivery_id)


def list_deliveries(
    db: Database, caller: Caller, *, filters: dict[str, Any], cursor: str | None, limit: int
) -> dict[str, Any]:
    """Deliveries in scope, newest first, by state, endpoint, event and time window."""
    _check_window(filters)
    with db.connection() as conn:
        rows = repo.list_deliveries(conn, caller.tenant, page_of(cursor, limit), filters)
    return paged(rows, limit)


def list_attempts(
    db: Database, caller: Caller, delivery_id: str, *, cursor: str | None, limit: int
) -> dict[str, Any]:
    """Attempts of a delivery in scope, oldest first."""
    after = decode_cursor(cursor)
    if after is not None and not isinstance(after, int):
        raise BadRequest("cursor is not valid: pass next_cursor from the previous page")
    bounded = min(max(limit, 1), MAX_PAGE)
    with db.connection() as conn:
        repo.get_delivery(conn, caller.tenant, delivery_id)
        rows = repo.list_attempts(conn, caller.tenant, delivery_id, after, bounded + 1)
    return paged(rows, limit)


def resend_delivery(
    db: Database,
    caller: Caller,
    delivery_id: str,
    run_replay: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """Send one delivery again (a replay by id: same webhook-id, new run, audited)."""
    get_delivery(db, caller, delivery_id)
    summary = run_replay(
        {
            "delivery_ids": [delivery_id],
            "requested_by": caller.principal,
            "reason": "resend through the API",
        }
    )
    return {
        "delivery_id": delivery_id,
        "enqueued": int(summary.get("enqueued", 0)),
        "skipped": dict(summary.get("skipped", {})),
        "audit_id": summary.get("audit_id"),
    }


def status(db: Database, caller: Caller) -> dict[str, Any]:
    """Deliveries per state, events of the last day, the outbox and endpoints, in scope."""
    with db.connection() as conn:
        summary = repo.status_summary(conn, caller.tenant)
    oldest = summary.get("outbox_oldest_seconds")
    summary["outbox_oldest_seconds"] = float(oldest) if oldest is not None else None
    return summary


# -- helpers ----------------------------------------------------------------------------------


def _check_window(filters: dict[str, Any]) -> None:
    since, until = filters.get("since"), filters.get("until")
    for name in ("since", "until"):
        value = filters.get(name)
        if value is not None and value.tzinfo is None:
            filters[name] = value.replace(tzinfo=UTC)
    since, until = filters.get("since"), filters.get("until")
    if since is not None and until is not None and until <= since:
        raise BadRequest("until must be after since")


def audit(
    conn: Any,
    caller: Caller,
    action: str,
    object_type: str,
    object_id: str,
    params: dict[str, Any],
) -> None:
    """One audit entry of a change, filed under the caller's principal."""
    audit_repo.write_audit(
        conn,
        actor=caller.principal,
        action=action,
        object_type=object_type,
        object_id=object_id,
        params=params,
    )
