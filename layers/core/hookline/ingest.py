"""Ingest: verify an inbound request, or take a published event, and store it in the
ledger with its outbox row. Nothing unverified is ever stored."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from hookline.carried import CarriedEvent
from hookline.catalogue_limits import (
    DEFAULT_LIMITS,
    CatalogueLimits,
    check_json_shape,
    check_payload_size,
    screen_received_body,
)
from hookline.db import Connection, Database
from hookline.errors import (
    BadRequest,
    HandshakeRefused,
    MethodNotAllowed,
    NotFound,
    PayloadTooLarge,
    UnsupportedMediaType,
    VerificationFailed,
)
from hookline.ids import new_id
from hookline.nudge import nudge_on_commit
from hookline.postgres_text import storable_text
from hookline.records import frozen
from hookline.repositories.ledger import NewEvent, Received, accept_event, store_event
from hookline.repositories.source_activity import (
    adopt_handshake_secret,
    record_handshake,
    record_rejection,
)
from hookline.repositories.sources import Source, get_source
from hookline.repositories.sources_cache import SourceCache
from hookline.settings import Settings
from hookline.verifiers import (
    HandshakeAnswer,
    Headers,
    RequestContext,
    SourceConfig,
    VerifiedRequest,
    Verifier,
    answer_handshake,
    verifier_for,
)

if TYPE_CHECKING:
    from hookline.fanout import FanoutOptions
    from hookline.repositories.deliveries import Enqueued

MAX_TYPE_LENGTH = 255
MAX_IDEMPOTENCY_KEY_LENGTH = 255
PUBLISH_ORIGIN = "publish"
# A caller's rejections, counted on the source's activity (a 503 or 404 is not the caller's).
REJECTIONS = (VerificationFailed, BadRequest, UnsupportedMediaType, HandshakeRefused)
# What a source's secrets, tolerance or options decide: a kept copy that refuses a request is
# read again before the refusal stands (decision 0074).
RECHECKED = (VerificationFailed, UnsupportedMediaType)


@frozen
class Accepted:
    """The answer to an accepted request: the event id, and whether it was a duplicate."""

    id: str
    duplicate: bool
    tenant_id: str
    answer: str | None = None  # the body the provider needs instead (Discord's deferral)
    # Fanned out as it was stored (decision 0076): its deliveries, queued, to send now.
    fanned_out: bool = False
    to_send: list[Enqueued] = field(default_factory=list)
    # What those deliveries' messages carry, so deliver may send them without a claim
    # (decision 0108); None: too large to carry, or nothing to send.
    carried: CarriedEvent | None = None


@frozen
class Handshook:
    """A provider handshake, answered: nothing was stored (decision 0038)."""

    answer: HandshakeAnswer
    tenant_id: str
    scheme: str


def receive_inbound(
    db: Database,
    source_id: str,
    headers: Mapping[str, str],
    body: bytes,
    *,
    max_body_bytes: int,
    method: str = "POST",
    query: Mapping[str, str] | None = None,
    url: str | None = None,
    http: Callable[[], Any] | None = None,
    max_depth: int = DEFAULT_LIMITS.payload_max_depth,
    traceparent: str | None = None,
    fanout: FanoutOptions | None = None,
    sources: SourceCache | None = None,
) -> Accepted | Handshook:
    """Answer a provider's handshake, or verify its request against its source and store it
    once. `url` is the URL the request reached; a source's `public_url` option replaces it
    (the URL the provider was given, which is what URL-signing providers sign). `http` is the
    function giving the SSRF-guarded client a scheme may need (SNS: its certificates and
    confirmations), called only when one does. A verified
    body that would parse deeper than `max_depth` is refused, for every scheme (decision 0059).
    `traceparent` (the receive span's, when traced) is kept on the outbox row (decision 0070).
    With `fanout`, an event of a tenant without content-filtered or ordered endpoints is
    fanned out in the statement that stores it, and `Accepted.to_send` holds its deliveries,
    queued under `fanout.queued_lease`, for the caller to send (decision 0076).
    `sources` keeps sources for a few seconds (decision 0074); without it each request reads
    its source.

    Raises NotFound (unknown or disabled source), PayloadTooLarge, MethodNotAllowed (a GET
    that is not the source's handshake), UnsupportedMediaType, VerificationFailed,
    HandshakeRefused, BadRequest or DatabaseUnavailable; stores no event when it raises, and
    never stores a handshake.
    """
    if len(body) > max_body_bytes:
        raise PayloadTooLarge(f"body exceeds {max_body_bytes} bytes")
    hdrs = Headers(headers)
    with db.connection() as conn:
        if sources is None:
            source, kept = get_source(conn, source_id), False
        else:
            source, kept = sources.get(conn, source_id)
        request = _Request(hdrs, body, method, query, url, http, max_depth)
        source, (verifier, answer, verified) = _verify(conn, source, kept, sources, request)
        if answer is not None:
            if answer.adopt_secret is not None and sources is not None:
                sources.forget(source.id)
            record_handshake(conn, source.id, answer.kind)
            return Handshook(answer, source.tenant_id, source.scheme)
        assert verified is not None
        # Types, ids and headers are text the signature may not cover: bound and clean them.
        event = NewEvent(
            tenant_id=source.tenant_id,
            origin=source.id,
            source_id=source.id,
            type=storable_text(verified.event_type, MAX_TYPE_LENGTH) or "unknown",
            dedupe_key=storable_text(verified.dedupe_key, 512),
            payload=body,
            content_type=storable_text(hdrs.get("content-type", "application/json"), 255),
            headers={k: storable_text(v, 1024) for k, v in verified.kept_headers.items()},
            traceparent=traceparent,
        )
        began = datetime.now(UTC)
        received = _store(conn, fanout, event)
    reply = verifier.accepted_answer(verified.payload)
    return _accepted(received, event, reply, fanout, began)


def _accepted(
    received: Received,
    event: NewEvent,
    reply: str | None,
    fanout: FanoutOptions | None,
    began: datetime,
) -> Accepted:
    """The answer for a stored event; when it was fanned out as it was stored, with what its
    deliveries' messages carry (the event stored at `began` or later, decision 0108)."""
    stored = received.stored
    carried = None
    if received.to_send and fanout is not None:
        carried = CarriedEvent.at_receipt(
            stored.id, event.tenant_id, event.source_id, event.type, event.content_type,
            event.payload, began=began, deadline=fanout.deadline, lease=fanout.queued_lease,
        )  # fmt: skip
    return Accepted(
        stored.id, stored.duplicate, event.tenant_id, reply, received.fanned_out,
        received.to_send, carried,
    )  # fmt: skip


def _store(conn: Connection, fanout: FanoutOptions | None, event: NewEvent) -> Received:
    """Store the event with its outbox row; with `fanout`, fanned out in the same statement."""
    if fanout is None:
        return Received(store_event(conn, event))
    return accept_event(conn, event, deadline=fanout.deadline, lease=fanout.queued_lease)


@frozen
class _Request:
    headers: Headers
    body: bytes
    method: str
    query: Mapping[str, str] | None
    url: str | None
    http: Callable[[], Any] | None
    max_depth: int


Checked = tuple[Verifier, HandshakeAnswer | None, VerifiedRequest | None]


def _verify(
    conn: Connection, source: Source, kept: bool, sources: SourceCache | None, request: _Request
) -> tuple[Source, Checked]:
    """`_check` the request against its source; a refusal is recorded on the source's activity.
    A kept copy (`kept`) may predate a rotation's new secret or changed options, so before a
    refusal of what those decide stands, the source is read again and, if it changed, the
    request checked once more against it (decision 0074)."""
    try:
        return source, _check(conn, source, request)
    except RECHECKED as err:
        fresh = sources.read(conn, source.id) if kept and sources is not None else source
        if fresh == source:
            record_rejection(conn, source.id, type(err).__name__)
            raise
    except REJECTIONS as err:
        record_rejection(conn, source.id, type(err).__name__)
        raise
    try:
        return fresh, _check(conn, fresh, request)
    except REJECTIONS as err:
        record_rejection(conn, fresh.id, type(err).__name__)
        raise


def _check(conn: Connection, source: Source, request: _Request) -> Checked:
    """The source's verifier, and the handshake's answer or the verified request. Raises
    NotFound for a disabled source, MethodNotAllowed, or one of REJECTIONS."""
    if not source.enabled:
        raise NotFound("unknown source")
    config = SourceConfig(source.secrets, source.tolerance_seconds, source.options)
    verifier = verifier_for(source.scheme, config)
    query = request.query
    context = RequestContext(
        request.method, dict(query or {}), public_url(source, request.url, query), request.http
    )
    answer = answer_handshake(verifier, request.headers, request.body, context)
    if answer is None and request.method != "POST":
        raise MethodNotAllowed("use POST")
    adopt = answer.adopt_secret if answer is not None else None
    if adopt is not None and not adopt_handshake_secret(conn, source.id, adopt):
        raise HandshakeRefused("this source already took its secret by handshake")
    if answer is not None:
        return verifier, answer, None
    verified = verifier.verify(request.headers, request.body, context)
    screen_received_body(request.body, request.max_depth)
    return verifier, None, verified


def public_url(source: Source, url: str | None, query: Mapping[str, str] | None) -> str | None:
    """The URL the provider posted to: the source's `public_url` (with the request's query)
    when set, else the one the request reached."""
    configured = source.options.get("public_url")
    if not isinstance(configured, str) or not configured:
        return url
    return configured + ("?" + urlencode(dict(query)) if query else "")


def publish(
    conn: Connection,
    *,
    tenant_id: str,
    type: str,
    payload: Any,
    settings: Settings,
    idempotency_key: str | None = None,
    limits: CatalogueLimits = DEFAULT_LIMITS,
    traceparent: str | None = None,
    fanout: FanoutOptions | None = None,
) -> Accepted:
    """Write a tenant's own event and its outbox row on `conn`, in the caller's transaction.

    This is the outbox pattern: call it inside your own `with conn.transaction():` next to
    your business write; if that transaction rolls back, the event never existed. Locally the
    dev stack's fan-out is woken when it commits (decision 0022); on AWS call
    `hookline.nudge_fanout()` after the commit to have it fanned out at once rather than on the
    next schedule. `settings` say whether this is the dev stack (`nudge_on_commit`).

    When the tenant's event-type catalogue gives `type` a schema, a payload that breaks it is
    refused (SchemaViolation, a BadRequest) before anything is written. So is a payload over
    `limits` (size 413; depth or an integer's digits 400), whatever its type. A
    `traceparent` (a span of the caller's, W3C) continues into fan-out and delivery (decision
    0070). With `fanout` (the API's own connection, never a producer's transaction: the
    deliveries must be sent once it commits) the event is fanned out as it is stored, as the
    receiver's are (decision 0076).
    """
    check_json_shape(
        payload,
        root="payload",
        max_depth=limits.payload_max_depth,
        max_integer_digits=limits.max_integer_digits,
        depth_limit="payload_max_depth",
    )
    body = encode_payload(payload)
    check_payload_size(len(body), limits)
    validate_event_type(type)
    if idempotency_key is not None and not (0 < len(idempotency_key) <= MAX_IDEMPOTENCY_KEY_LENGTH):
        raise BadRequest(f"Idempotency-Key must be 1 to {MAX_IDEMPOTENCY_KEY_LENGTH} characters")
    if idempotency_key is not None and not idempotency_key.isprintable():
        raise BadRequest("Idempotency-Key must contain printable characters only")
    # jsonschema only where a payload is checked: the receiver never does (inbound is a fact).
    from hookline.event_catalogue import check_payload

    check_payload(conn, tenant_id, type, body, limits)
    dedupe_key = f"idem:{idempotency_key}" if idempotency_key else f"auto:{new_id('pub')}"
    event = NewEvent(
        tenant_id=tenant_id,
        origin=PUBLISH_ORIGIN,
        type=type,
        dedupe_key=dedupe_key,
        payload=body,
        traceparent=traceparent,
    )
    began = datetime.now(UTC)
    received = _store(conn, fanout, event)
    if not received.stored.duplicate and not received.fanned_out:
        nudge_on_commit(conn, settings)
    return _accepted(received, event, None, fanout, began)


def validate_event_type(type: Any) -> None:
    """An event type is a non-empty string of at most 255 printable characters, no spaces."""
    if not isinstance(type, str) or not type or len(type) > MAX_TYPE_LENGTH:
        raise BadRequest(f"type must be a string of 1 to {MAX_TYPE_LENGTH} characters")
    if any(c.isspace() for c in type):
        raise BadRequest("type must not contain whitespace")
    if not type.isprintable() or storable_text(type, MAX_TYPE_LENGTH) != type:
        raise BadRequest("type must contain printable characters only")


def encode_payload(payload: Any) -> bytes:
    """The canonical JSON bytes of a published payload."""
    try:
        return json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode()
    except (TypeError, ValueError) as err:
        raise BadRequest("payload must be JSON-serialisable") from err


def store_fetched(
    conn: Connection,
    source: Source,
    body: bytes,
    *,
    headers: Mapping[str, str] | None = None,
    content_type: str = "application/json",
) -> Accepted:
    """Store an event fetched from the provider's own API (catch-up) as if its webhook came.

    The API call authenticated it, so there is no signature to check; the type and dedupe key
    are the ones the source's verifier computes for a pushed copy (Stripe: the event `id`), so
    an event that arrives both ways is stored once.
    """
    hdrs = Headers(headers or {})
    config = SourceConfig(source.secrets, source.tolerance_seconds, source.options)
    verifier = verifier_for(source.scheme, config)
    payload = verifier.parse_payload(hdrs, body)
    stored = store_event(
        conn,
        NewEvent(
            tenant_id=source.tenant_id,
            origin=source.id,
            source_id=source.id,
            type=storable_text(verifier.event_type(hdrs, payload), MAX_TYPE_LENGTH) or "unknown",
            dedupe_key=storable_text(verifier.dedupe_key(hdrs, payload, body), 512),
            payload=body,
            content_type=storable_text(content_type, 255),
            headers={
                k: storable_text(v, 1024)
                for k, v in {
                    **verifier.kept_headers(hdrs),
                    **{k.lower(): v for k, v in hdrs.items()},
                }.items()
            },
        ),
    )
    return Accepted(stored.id, stored.duplicate, source.tenant_id)
