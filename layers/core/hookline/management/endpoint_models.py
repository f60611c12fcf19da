"""The management API's models of endpoints: create, update, preview, disable, rotate, test
events, and what an endpoint reads as (never its signing secrets but once, on create)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from hookline.header_syntax import header_problem
from hookline.management.models import REPLAYED_NOTE, Input, Page


def _sendable_headers(headers: dict[str, str] | None) -> dict[str, str] | None:
    # At save, not at the first attempt: a header httpx cannot encode fails every attempt.
    for name, value in (headers or {}).items():
        problem = header_problem(name, value)
        if problem:
            raise ValueError(problem)
    return headers


class OAuth2ClientCredentials(Input):
    """OAuth2 client credentials (decision 0067): a token from `token_url` (fetched through
    the SSRF guard, the client authenticating with HTTP Basic) is sent as `Authorization:
    Bearer`. The client secret is sealed at rest and never shown again."""

    type: Literal["oauth2_client_credentials"]
    token_url: str = Field(min_length=1, max_length=2000)
    client_id: str = Field(min_length=1, max_length=500)
    client_secret: str = Field(min_length=1, max_length=2000)
    scope: str | None = Field(default=None, max_length=1000)
    audience: str | None = Field(default=None, max_length=1000)


class ClientTls(Input):
    """Mutual TLS (decision 0067): a client certificate and its key (PEM), a private CA bundle
    (PEM) the endpoint's server certificate must chain to, or both. The key is sealed at rest
    and never shown again."""

    client_certificate: str | None = Field(default=None, max_length=64_000)
    client_key: str | None = Field(default=None, max_length=64_000)
    ca_bundle: str | None = Field(default=None, max_length=256_000)


class Ordering(Input):
    """Ordered delivery (decision 0069): events with the same key are delivered one at a
    time, in ledger order; a failing head holds the events behind it until it is delivered or
    dies. `key` is a JSON path into the event document (`$.payload.customer_id`; dot names
    and `[index]`), or null for one order across the endpoint. An event without a value at
    the path is ordered with the others that have none."""

    key: str | None = Field(max_length=500)


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
    signing: Literal["hmac", "ed25519"] = Field(
        default="hmac",
        description="Standard Webhooks `v1` HMAC signatures under a `whsec_` secret (returned "
        "once), or `v1a` Ed25519 signatures under a key pair whose public key is returned.",
    )
    auth: OAuth2ClientCredentials | None = None
    tls: ClientTls | None = None
    ordering: Ordering | None = None

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
    auth: OAuth2ClientCredentials | None = Field(
        default=None, description="Replaces the whole OAuth2 client, its secret included."
    )
    clear_auth: bool = False
    tls: ClientTls | None = Field(
        default=None, description="Replaces the whole TLS material, its key included."
    )
    clear_tls: bool = False
    ordering: Ordering | None = Field(
        default=None,
        description="A new ordering key applies to deliveries made from now on; those "
        "already made keep their order.",
    )
    clear_ordering: bool = Field(
        default=False, description="Unordered from now on: held deliveries are released."
    )

    _headers = field_validator("headers")(_sendable_headers)


class OAuth2Shown(BaseModel):
    """An endpoint's OAuth2 client as the API shows it: never the client secret."""

    type: str
    token_url: str
    client_id: str
    scope: str | None = None
    audience: str | None = None
    has_client_secret: bool


class TlsShown(BaseModel):
    """An endpoint's TLS material as the API shows it: never the key."""

    has_client_certificate: bool
    has_ca_bundle: bool
    certificate_subject: str | None = None
    certificate_expires_at: datetime | None = Field(
        default=None,
        description="The client certificate's expiry; `endpoint.certificate_expiring` is "
        "published 14 days before.",
    )


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
    signing: Literal["hmac", "ed25519"] = "hmac"
    public_keys: list[str] = Field(
        default_factory=list,
        description="Ed25519 signing: the `whpk_` public keys that verify `v1a` signatures, "
        "newest first (two during a rotation's overlap).",
    )
    auth: OAuth2Shown | None = None
    tls: TlsShown | None = None
    ordering: Ordering | None = None
    enabled: bool
    disabled_reason: str | None
    failing_since: datetime | None = None
    created_at: datetime

    @model_validator(mode="before")
    @classmethod
    def _shown(cls, data: Any) -> Any:
        # A stored row holds the public parts and flags; the secret parts never reach here.
        if not isinstance(data, dict) or "has_client_key" not in data:
            return data
        shown = dict(data)
        if shown.get("auth") is not None:
            shown["auth"] = {**shown["auth"], "has_client_secret": shown["has_client_secret"]}
        tls = shown.get("tls")
        if tls is not None:
            shown["tls"] = {
                "has_client_certificate": bool(tls.get("client_certificate"))
                and shown["has_client_key"],
                "has_ca_bundle": bool(tls.get("ca_bundle")),
                "certificate_subject": tls.get("certificate_subject"),
                "certificate_expires_at": tls.get("certificate_expires_at"),
            }
        return shown


class EndpointCreated(Endpoint):
    """A created endpoint with its signing secret, shown this once (a repeat of the request
    with its Idempotency-Key answers null and `secret_note`)."""

    secret: str | None = Field(
        description="The `whsec_` secret; null for Ed25519 signing "
        "(verify with `public_keys`; the private key is never shown)"
    )
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
    """The new signing secret, shown this once (or, for Ed25519 signing, the new public key);
    earlier ones sign until `previous_secrets_expire_at`."""

    id: str
    secret: str | None
    public_key: str | None = None
    previous_secrets_expire_at: datetime | None


class TestEventRequest(Input):
    """A test event for one endpoint."""

    type: str = Field(default="hookline.test", min_length=1, max_length=255)
    payload: dict[str, Any] | None = None


class TestEventSent(BaseModel):
    """The test event and its one delivery."""

    event_id: str
    delivery_id: str
