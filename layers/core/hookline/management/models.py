"""What the management API takes and answers: pydantic models, which are also the OpenAPI
document's schemas. Secrets appear only in the `*Created` and `*Rotated` answers."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hookline.header_syntax import header_problem

STATES = Literal["pending", "queued", "delivering", "delivered", "failed", "dead"]
REPLAYED_NOTE = (
    "Set (and `secret` null) when this is a kept answer replayed for its Idempotency-Key: "
    "the secret was shown once, in the first answer (docs/decisions/0028)."
)


class Input(BaseModel):
    """A request body: unknown fields are refused, so a typo is an error, not a no-op."""

    model_config = ConfigDict(extra="forbid")


class Problem(BaseModel):
    """An error (RFC 9457 `application/problem+json`)."""

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    errors: list[dict[str, Any]] | None = None


class Page(BaseModel):
    """A page of a list; pass `next_cursor` as `cursor` for the next one (null: the end)."""

    next_cursor: str | None = None


# -- tenants ----------------------------------------------------------------------------------


class TenantCreate(Input):
    """A new tenant."""

    name: str = Field(min_length=1, max_length=200)
    group: str | None = Field(default=None, max_length=100, description="tenant group")


class Tenant(BaseModel):
    """A tenant."""

    id: str
    name: str
    group: str
    created_at: datetime
    external_id: str | None = Field(
        default=None,
        description="The ExternalId this tenant's AWS roles must require of Hookline "
        "(AWS destination kinds, decision 0046)",
    )


class TenantPage(Page):
    """Tenants, newest first."""

    items: list[Tenant]


# -- sources ----------------------------------------------------------------------------------


class SourceCreate(Input):
    """A new inbound source. Without `secret`, Hookline generates one (returned once)."""

    tenant_id: str | None = Field(default=None, max_length=100)
    scheme: str = Field(min_length=1, max_length=50)
    name: str | None = Field(default=None, max_length=200)
    secret: str | None = Field(
        default=None,
        min_length=1,
        max_length=1000,
        description="The verification material: a shared secret, or the provider's public key "
        "for Ed25519 (Discord) and ECDSA (SendGrid) schemes; checked against the scheme.",
    )
    secrets: list[str] | None = Field(
        default=None, min_length=2, max_length=2, description="Two secrets during a rotation."
    )
    tolerance_seconds: int = Field(default=300, ge=1, le=86_400)
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="Scheme options (`verify_token`, `public_url`, the hmac scheme's), and "
        "`catchup` (provider catch-up). An inline "
        "`catchup.api_key` is stored encrypted and never shown again, not even in this "
        'answer: every answer carries `"<redacted>"` in its place. `catchup.api_base` and '
        "`catchup.api_key_secret_arn` are an operator's to set (403 for a tenant).",
    )


class SourceActivity(BaseModel):
    """What a source last saw: handshakes and rejections store no event (decision 0038)."""

    last_received_at: datetime | None = Field(description="The latest of the three below.")
    last_accepted_at: datetime | None
    last_handshake_at: datetime | None
    last_handshake_kind: str | None
    handshakes: int
    last_rejected_at: datetime | None
    last_rejected_reason: str | None
    rejected: dict[str, int] = Field(description="Rejections by reason.")


class Source(BaseModel):
    """An inbound source (never with its secrets)."""

    id: str
    tenant_id: str
    name: str
    scheme: str
    tolerance_seconds: int
    options: dict[str, Any] = Field(
        description='An inline `catchup.api_key` is shown as `"<redacted>"`.'
    )
    enabled: bool
    path: str
    created_at: datetime
    activity: SourceActivity | None = Field(
        default=None, description="When it last accepted, handshook and rejected (one source)."
    )


class SourceCreated(Source):
    """A created source; `secret` only when Hookline generated it, shown this once (a
    repeat of the request with its Idempotency-Key answers null and `secret_note`)."""

    secret: str | None = None
    secret_note: str | None = Field(default=None, description=REPLAYED_NOTE)


class SourceUpdate(Input):
    """The fields to change; absent (or null) fields keep their value. Not the secret (rotate
    it) nor the scheme (create a new source): `options` replaces the scheme options whole and
    is checked against the scheme as on create."""

    name: str | None = Field(default=None, min_length=1, max_length=200)
    tolerance_seconds: int | None = Field(default=None, ge=1, le=86_400)
    options: dict[str, Any] | None = Field(
        default=None,
        description='Replaces the options whole. `catchup.api_key: "<redacted>"` (as read) '
        "keeps the stored key; any other value replaces it; leaving it out removes it. "
        "`catchup.api_base` and `catchup.api_key_secret_arn` are an operator's: a tenant that "
        "changes one gets 403, and what an operator set is kept, sent back or not.",
    )


class SourceDeleted(Source):
    """A deleted source: it no longer receives (404 to providers) and keeps no secret; the
    events it received stay readable."""

    deleted_at: datetime


class SourcePage(Page):
    """Sources, newest first."""

    items: list[Source]


class SourceRotate(Input):
    """A new secret for a source (generated when omitted). The previous one keeps verifying
    until the next rotation unless `keep_previous` is false."""

    secret: str | None = Field(default=None, min_length=1, max_length=1000)
    keep_previous: bool = True


class SourceRotated(BaseModel):
    """The rotated source; `secret` only when Hookline generated it, shown this once."""

    id: str
    secret: str | None = None
    previous_kept: bool


# -- endpoints --------------------------------------------------------------------------------


def _sendable_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    # At save, not at the first attempt: a header httpx cannot encode fails every attempt.
    for name, value in (headers or {}).items():
        problem = header_problem(name, value)
        if problem:
            raise ValueError(problem)
    return headers


class EndpointCreate(Input):
    """A new endpoint: an https URL, which must resolve to public addresses, or (`kind`) a
    target in the customer's AWS account reached through `role_arn` (decision 0046)."""

    tenant_id: str | None = Field(default=None, max_length=100)
    url: str | None = Field(default=None, min_length=1, max_length=2000)
    kind: Literal["https", "sqs", "sns", "eventbridge", "kinesis", "s3", "lambda"] = "https"
    target: str | None = Field(default=None, min_length=1, max_length=2000)
    role_arn: str | None = Field(default=None, min_length=1, max_length=2048)
    destination: dict[str, str] = Field(
        default_factory=dict,
        max_length=10,
        description="Options of the kind: message_group_path (FIFO sqs, sns), "
        "offload_bucket and offload_prefix (sqs, sns), source (eventbridge), "
        "partition_key_path (kinesis), prefix (s3).",
    )
    description: str = Field(default="", max_length=1000)
    event_types: list[str] = Field(default_factory=list, max_length=100)
    max_concurrency: int = Field(default=5, ge=1, le=1000)
    rate_limit_per_second: float | None = Field(default=None, gt=0, le=100_000)
    headers: dict[str, str] = Field(default_factory=dict, max_length=50)
    retry_on_4xx: bool = False
    content_filter: dict[str, Any] | None = Field(
        default=None,
        description="An EventBridge event pattern over {type, tenant_id, source_id, payload}; "
        "events it does not match get no delivery (docs/decisions/0044).",
    )
    input_transformer: dict[str, Any] | None = Field(
        default=None,
        description="An EventBridge input transformer, {InputPathsMap, InputTemplate}, over "
        "the same document: what is sent (and signed) instead of the payload (decision 0045).",
    )

    _headers = field_validator("headers")(_sendable_headers)


class EndpointUpdate(Input):
    """The fields to change; absent fields keep their value."""

    url: str | None = Field(default=None, min_length=1, max_length=2000)
    description: str | None = Field(default=None, max_length=1000)
    event_types: list[str] | None = Field(default=None, max_length=100)
    max_concurrency: int | None = Field(default=None, ge=1, le=1000)
    rate_limit_per_second: float | None = Field(default=None, gt=0, le=100_000)
    clear_rate_limit: bool = False
    headers: dict[str, str] | None = Field(default=None, max_length=50)
    retry_on_4xx: bool | None = None
    content_filter: dict[str, Any] | None = None
    clear_content_filter: bool = False
    input_transformer: dict[str, Any] | None = None
    clear_input_transformer: bool = False
    role_arn: str | None = Field(default=None, min_length=1, max_length=2048)
    destination: dict[str, str] | None = Field(default=None, max_length=10)

    _headers = field_validator("headers")(_sendable_headers)


class Endpoint(BaseModel):
    """An endpoint (never with its secrets)."""

    id: str
    tenant_id: str
    url: str
    description: str
    event_types: list[str]
    max_concurrency: int
    rate_limit_per_second: float | None
    headers: dict[str, str]
    retry_on_4xx: bool
    content_filter: dict[str, Any] | None = None
    input_transformer: dict[str, Any] | None = None
    kind: str = "https"
    role_arn: str | None = None
    destination: dict[str, Any] = Field(default_factory=dict)
    external_id: str | None = Field(
        default=None, description="The ExternalId the customer's role must require (AWS kinds)"
    )
    enabled: bool
    disabled_reason: str | None
    failing_since: datetime | None = None
    created_at: datetime


class EndpointCreated(Endpoint):
    """A created endpoint with its signing secret, shown this once (a repeat of the request
    with its Idempotency-Key answers null and `secret_note`)."""

    secret: str | None
    secret_note: str | None = Field(default=None, description=REPLAYED_NOTE)


class EndpointDeleted(Endpoint):
    """A deleted endpoint: disabled for good, its signing secrets wiped; its deliveries stay
    readable."""

    deleted_at: datetime


class EndpointPage(Page):
    """Endpoints, newest first."""

    items: list[Endpoint]


class EndpointPreview(Input):
    """An event to try an endpoint's content filter and input transformer on; either may be
    given here to try it before saving it."""

    type: str = Field(min_length=1, max_length=255)
    payload: Any = None
    source_id: str | None = None
    content_filter: dict[str, Any] | None = None
    input_transformer: dict[str, Any] | None = None


class EndpointPreviewed(BaseModel):
    """What the event would become: whether it matches, and the body that would be sent (and
    signed), or why it cannot render."""

    matches: bool
    body: str | None
    content_type: str | None
    error: str | None


class EndpointDisable(Input):
    """Why an endpoint is disabled."""

    reason: str = Field(default="disabled through the API", min_length=1, max_length=500)


class EndpointRotated(BaseModel):
    """The new signing secret, shown this once; earlier ones sign until
    `previous_secrets_expire_at`."""

    id: str
    secret: str
    previous_secrets_expire_at: datetime | None


class TestEventRequest(Input):
    """A test event for one endpoint."""

    type: str = Field(default="hookline.test", min_length=1, max_length=255)
    payload: dict[str, Any] | None = None


class TestEventSent(BaseModel):
    """The test event and its one delivery."""

    event_id: str
    delivery_id: str


# -- events -----------------------------------------------------------------------------------


class EventPublish(Input):
    """A tenant's own event."""

    model_config = ConfigDict(extra="ignore")
    tenant_id: str | None = Field(default=None, max_length=100)
    type: str
    payload: Any


class Published(BaseModel):
    """The published event's id; `duplicate` when its Idempotency-Key was seen before."""

    id: str
    duplicate: bool


class EventSummary(BaseModel):
    """An event in a list."""

    id: str
    tenant_id: str
    source_id: str | None
    origin: str
    type: str
    received_at: datetime
    size: int


class Event(BaseModel):
    """One event: its payload as JSON when it is JSON (nested at most 200 levels deep), else
    the exact bytes in base64."""

    id: str
    tenant_id: str
    source_id: str | None
    origin: str
    type: str
    content_type: str
    headers: dict[str, str]
    received_at: datetime
    fanned_out_at: datetime | None
    payload: Any = None
    payload_base64: str | None = None


class EventPage(Page):
    """Events, newest first."""

    items: list[EventSummary]


# -- deliveries -------------------------------------------------------------------------------


class Delivery(BaseModel):
    """One event x one endpoint."""

    id: str
    event_id: str
    endpoint_id: str
    tenant_id: str
    state: str
    attempt_count: int
    next_attempt_at: datetime
    deadline_at: datetime
    last_status: int | None
    last_error: str | None
    created_at: datetime
    updated_at: datetime
    finished_at: datetime | None


class DeliveryPage(Page):
    """Deliveries, newest first."""

    items: list[Delivery]


class Attempt(BaseModel):
    """One HTTP try."""

    id: int
    delivery_id: str
    attempted_at: datetime
    duration_ms: int
    status_code: int | None
    response_excerpt: str | None
    error_class: str | None


class AttemptPage(Page):
    """Attempts of a delivery, oldest first."""

    items: list[Attempt]


class Resent(BaseModel):
    """What a resend did (the replay summary of one delivery)."""

    delivery_id: str
    enqueued: int
    skipped: dict[str, int]
    audit_id: int | None


class Status(BaseModel):
    """How the caller's part of the pipeline stands."""

    deliveries: dict[str, int]
    events_24h: int
    outbox_pending: int
    outbox_oldest_seconds: float | None
    endpoints_enabled: int
    endpoints_disabled: int


# -- event types ------------------------------------------------------------------------------


class EventTypeCreate(Input):
    """A new catalogue entry. With a `schema` (a JSON Schema, Draft 2020-12 unless `$schema`
    says otherwise), payloads published with this type must match it."""

    tenant_id: str | None = Field(default=None, max_length=100)
    name: str = Field(
        min_length=1, max_length=255, description="dotted lowercase, such as invoice.paid"
    )
    description: str = Field(default="", max_length=2000)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class EventTypeUpdate(Input):
    """The fields to change; absent fields keep their value. `schema: null` removes the
    schema (payloads are then no longer validated)."""

    description: str | None = Field(default=None, max_length=2000)
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")


class EventType(BaseModel):
    """A catalogue entry. `archived` types no longer validate and are hidden from lists
    unless asked for."""

    model_config = ConfigDict(populate_by_name=True)

    id: str
    tenant_id: str
    name: str
    description: str
    schema_: dict[str, Any] | None = Field(default=None, alias="schema")
    archived: bool
    archived_at: datetime | None
    created_at: datetime
    updated_at: datetime


class EventTypePage(Page):
    """Event types, newest first."""

    items: list[EventType]


# -- replays ----------------------------------------------------------------------------------

REPLAY_STATES = Literal["accepted", "running", "succeeded", "failed"]


class ReplayCreate(Input):
    """A replay: exactly one selector (`delivery_ids`, `event_ids`, `endpoint_id` + `since`,
    `since` [+ `tenant_id`, `event_type`], or `redrive_dlq`, operators only) and a reason.
    Times are ISO 8601 or a duration ago (`2h`, `7d`). The caller is recorded as requester."""

    delivery_ids: list[str] | None = Field(default=None, max_length=100_000)
    event_ids: list[str] | None = Field(default=None, max_length=100_000)
    endpoint_id: str | None = Field(default=None, max_length=100)
    tenant_id: str | None = Field(default=None, max_length=100)
    event_type: str | None = Field(default=None, max_length=255)
    since: str | None = Field(default=None, max_length=64)
    until: str | None = Field(default=None, max_length=64)
    states: list[STATES] | None = Field(default=None, max_length=6)
    refanout: bool = False
    redrive_dlq: str | None = Field(default=None, max_length=100)
    dry_run: bool = False
    max_per_second: float | None = Field(
        default=None, ge=0.01, le=10_000, description="deliveries per second (none: no limit)"
    )
    limit: int | None = Field(default=None, ge=1, le=100_000)
    reason: str = Field(min_length=1, max_length=2000)


class Replay(BaseModel):
    """A replay and how far it is. `result` is the replay summary once it has finished
    (`error` says why when it failed). A replay larger than one run of the replay function
    continues in the next; `runs` counts them, `done`/`total` count across them."""

    id: str
    state: REPLAY_STATES
    tenant_id: str | None
    requested_by: str
    reason: str
    request: dict[str, Any]
    total: int | None
    done: int
    runs: int = Field(description="runs of the replay function so far (0: not started)")
    result: dict[str, Any] | None
    audit_id: int | None
    created_at: datetime
    started_at: datetime | None
    heartbeat_at: datetime | None
    finished_at: datetime | None


class ReplayPage(Page):
    """Replays, newest first."""

    items: list[Replay]
