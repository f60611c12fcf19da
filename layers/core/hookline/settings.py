"""Settings parsed once from the environment into a frozen object.

Services receive values from here; nothing else reads `os.environ`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import field
from functools import lru_cache

from hookline.catalogue_limits import CatalogueLimits
from hookline.config import HooklineConfig, load_config
from hookline.operational_options import OperationalOptions
from hookline.records import frozen


def _bool(value: str | None, default: bool = False) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in ("1", "true", "yes", "on")


def _api_bases(value: str) -> tuple[tuple[str, str], ...]:
    """`stripe=https://a,github=https://b` as sorted (provider, URL) pairs."""
    pairs: dict[str, str] = {}
    for item in value.split(","):
        if not item.strip():
            continue
        provider, sep, url = item.partition("=")
        if not sep or not provider.strip() or not url.strip().startswith(("https://", "http://")):
            raise ValueError(
                "HOOKLINE_CATCHUP_API_BASES takes provider=http(s)://… pairs, comma-separated"
            )
        pairs[provider.strip()] = url.strip().rstrip("/")
    return tuple(sorted(pairs.items()))


@frozen
class Settings:
    """Runtime settings of every Hookline process (Lambda or local)."""

    database_url: str
    # On AWS the database URL is assembled from this Secrets Manager secret (RDS managed).
    database_secret_arn: str | None = None
    database_host: str | None = None  # RDS Proxy endpoint, overrides the secret's host
    # IAM authentication to RDS Proxy as this database user (docs/decisions/0033): a token
    # per new connection, no secret read; the proxy holds the rotated secret.
    database_iam_user: str | None = None
    database_port: int = 5432
    database_name: str = "hookline"
    database_sslmode: str = "require"  # for a connection built from the secret's fields
    # Connections go through RDS Proxy: no statement may pin the session (decision 0036).
    database_proxied: bool = False
    db_pool_size: int = 4
    db_connect_timeout_seconds: float = 3.0
    max_body_bytes: int = 1024 * 1024
    local_mode: bool = False  # allows /v1 without an IAM identity; never on in AWS
    allow_private_targets: bool = False  # endpoint URLs on private/loopback addresses
    allow_http_targets: bool = False
    aws_endpoint_url: str | None = None
    # Where the customers' targets are reached (SQS, SNS, ..., Lambda); None: as
    # aws_endpoint_url. Locally an emulator of "their" account; never set on AWS.
    destination_endpoint_url: str | None = None
    aws_region: str = "us-east-1"
    queue_url_prefix: str | None = None  # base URL of the group queues
    # Physical names start with this (on AWS the stack's name, lowercased): queues, DLQs.
    resource_prefix: str = "hookline"
    # The deployment's own AWS account (the stack sets it): no endpoint may target it or
    # name a role in it (decision 0061). None on the dev stack, whose emulator's account is
    # the customers' too: there the resource names are checked instead.
    account_id: str | None = None
    # Where portal links may point besides the deployment's own URL (decision 0061):
    # https origins an operator lists, e.g. a custom domain in front of the console.
    portal_base_urls: tuple[str, ...] = ()
    fanout_function_name: str | None = None  # nudged asynchronously after an accept
    # The receiver fans an event out in the statement that stores it and sends its deliveries
    # itself (decision 0076); the stack turns it on. Off: every event waits for a fan-out run.
    fanout_at_receipt: bool = False
    # Runs replays created through the API (invoked asynchronously); none: a local thread.
    replay_function_name: str | None = None
    config_path: str | None = None
    archive_bucket: str | None = None  # the S3 bucket of the ledger archive (decision 0041)
    sqs_fair_queues: bool = True  # MessageGroupId = endpoint on the standard group queues
    # Management API (docs/decisions/0013): the KMS key that wraps the secrets' data key
    # (none: the local master key file, development only), the local operator bearer key,
    # and IAM principals that are operators before any api_principals row exists.
    kms_key_id: str | None = None
    local_key_file: str = ".hookline/master.key"
    api_key: str | None = field(default=None, repr=False)  # never in a log line
    operator_principals: tuple[str, ...] = ()
    # Provider catch-up (docs/decisions/0026): provider -> API base URL replacing the one in
    # the provider's code (tests and local fakes; an operator's setting, never a tenant's);
    # whether those APIs may be on private/loopback addresses and plain http (tests and local
    # development only: the SSRF guard refuses them otherwise); and the role the reconciler
    # assumes, with the source's tenant as a session tag, to read a catch-up key secret.
    catchup_api_bases: tuple[tuple[str, str], ...] = ()
    catchup_allow_private: bool = False
    catchup_secret_role_arn: str | None = None
    # How long the API keeps a create's answer for its Idempotency-Key (decision 0028).
    idempotency_ttl_seconds: int = 24 * 3600
    # Schemas and published payloads (docs/decisions/0027): HOOKLINE_SCHEMA_MAX_BYTES, …
    catalogue_limits: CatalogueLimits = field(default_factory=CatalogueLimits)
    # Signs portal links, console/portal sessions and CSRF tokens (docs/decisions/0042);
    # none: derived from the local master key file (development only).
    portal_session_key: str | None = field(default=None, repr=False)
    # On AWS the key is a Secrets Manager secret the stack generates (docs/decisions/0053).
    portal_session_key_secret_arn: str | None = None
    # Operators sign in through this Cognito user pool's hosted UI (docs/decisions/0053):
    # none configured, the console is open on loopback in local mode only. The JWKS URL is
    # the pool's own unless overridden (tests and emulators).
    cognito_user_pool_id: str | None = None
    cognito_client_id: str | None = None
    # Behind a function URL the client id is read from this SSM parameter instead: the app
    # client names the function's URL, so the function cannot name the client (decision 0053).
    cognito_client_id_parameter: str | None = None
    cognito_domain: str | None = None  # the hosted UI's base URL, https://…
    cognito_jwks_url: str | None = None
    # Operational events and notifications (docs/decisions/0068): thresholds, the operator.
    operational: OperationalOptions = field(default_factory=OperationalOptions)
    # Traces of one event from receive to each delivery (decision 0070): OTLP/HTTP to this URL
    # (on AWS the ADOT collector extension's), off when unset; the share of received events
    # traced.
    otlp_traces_endpoint: str | None = None
    trace_sample_rate: float = 1.0
    # The receiver keeps a source it verified with for this long in the process (decision
    # 0074): a disabled or deleted source, or a secret rotated out, stops being accepted within
    # it. 0: every request reads the source.
    source_cache_seconds: float = 5.0
    # Deliver keeps an endpoint it sends to without a claim for this long in the process
    # (decision 0108): a change to the endpoint reaches those sends within it. 0: every batch
    # of such messages reads its endpoints.
    endpoint_cache_seconds: float = 5.0

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read every setting from the environment (or a mapping, for tests)."""
        e = os.environ if env is None else env
        return cls(
            database_url=e.get("DATABASE_URL", ""),
            database_secret_arn=e.get("HOOKLINE_DATABASE_SECRET_ARN") or None,
            database_host=e.get("HOOKLINE_DATABASE_HOST") or None,
            database_iam_user=e.get("HOOKLINE_DATABASE_IAM_USER") or None,
            database_port=int(e.get("HOOKLINE_DATABASE_PORT", "5432")),
            database_name=e.get("HOOKLINE_DATABASE_NAME") or "hookline",
            database_sslmode=e.get("HOOKLINE_DATABASE_SSLMODE") or "require",
            database_proxied=_bool(e.get("HOOKLINE_DATABASE_PROXIED")),
            db_pool_size=int(e.get("HOOKLINE_DB_POOL_SIZE", "4")),
            db_connect_timeout_seconds=float(e.get("HOOKLINE_DB_CONNECT_TIMEOUT", "3")),
            max_body_bytes=int(e.get("HOOKLINE_MAX_BODY_BYTES", str(1024 * 1024))),
            local_mode=_bool(e.get("HOOKLINE_LOCAL_MODE")),
            allow_private_targets=_bool(e.get("HOOKLINE_ALLOW_PRIVATE_TARGETS")),
            allow_http_targets=_bool(e.get("HOOKLINE_ALLOW_HTTP_TARGETS")),
            aws_endpoint_url=e.get("AWS_ENDPOINT_URL") or None,
            destination_endpoint_url=e.get("HOOKLINE_DESTINATION_ENDPOINT_URL") or None,
            aws_region=e.get("AWS_REGION") or e.get("AWS_DEFAULT_REGION") or "us-east-1",
            queue_url_prefix=e.get("HOOKLINE_QUEUE_URL_PREFIX") or None,
            resource_prefix=e.get("HOOKLINE_RESOURCE_PREFIX") or "hookline",
            account_id=e.get("HOOKLINE_ACCOUNT_ID") or None,
            portal_base_urls=tuple(
                u.strip().rstrip("/")
                for u in e.get("HOOKLINE_PORTAL_BASE_URLS", "").split(",")
                if u.strip()
            ),
            fanout_function_name=e.get("HOOKLINE_FANOUT_FUNCTION") or None,
            fanout_at_receipt=_bool(e.get("HOOKLINE_FANOUT_AT_RECEIPT")),
            replay_function_name=e.get("HOOKLINE_REPLAY_FUNCTION") or None,
            config_path=e.get("HOOKLINE_CONFIG") or None,
            archive_bucket=e.get("HOOKLINE_ARCHIVE_BUCKET") or None,
            sqs_fair_queues=_bool(e.get("HOOKLINE_SQS_FAIR_QUEUES"), default=True),
            kms_key_id=e.get("HOOKLINE_KMS_KEY_ID") or None,
            local_key_file=e.get("HOOKLINE_LOCAL_KEY_FILE") or ".hookline/master.key",
            api_key=e.get("HOOKLINE_API_KEY") or None,
            operator_principals=tuple(
                p.strip() for p in e.get("HOOKLINE_OPERATOR_PRINCIPALS", "").split(",") if p.strip()
            ),
            catchup_api_bases=_api_bases(e.get("HOOKLINE_CATCHUP_API_BASES", "")),
            catchup_allow_private=_bool(e.get("HOOKLINE_CATCHUP_ALLOW_PRIVATE")),
            catchup_secret_role_arn=e.get("HOOKLINE_CATCHUP_SECRET_ROLE_ARN") or None,
            idempotency_ttl_seconds=int(e.get("HOOKLINE_IDEMPOTENCY_TTL_SECONDS", str(24 * 3600))),
            catalogue_limits=CatalogueLimits.from_env(e),
            portal_session_key=e.get("HOOKLINE_PORTAL_SESSION_KEY") or None,
            portal_session_key_secret_arn=e.get("HOOKLINE_PORTAL_SESSION_KEY_SECRET_ARN") or None,
            cognito_user_pool_id=e.get("HOOKLINE_COGNITO_USER_POOL_ID") or None,
            cognito_client_id=e.get("HOOKLINE_COGNITO_CLIENT_ID") or None,
            cognito_client_id_parameter=e.get("HOOKLINE_COGNITO_CLIENT_ID_PARAMETER") or None,
            cognito_domain=(e.get("HOOKLINE_COGNITO_DOMAIN") or "").rstrip("/") or None,
            cognito_jwks_url=e.get("HOOKLINE_COGNITO_JWKS_URL") or None,
            operational=OperationalOptions.from_env(e),
            otlp_traces_endpoint=e.get("HOOKLINE_OTLP_TRACES_ENDPOINT") or None,
            trace_sample_rate=float(e.get("HOOKLINE_TRACE_SAMPLE_RATE") or "1"),
            source_cache_seconds=float(e.get("HOOKLINE_SOURCE_CACHE_SECONDS") or "5"),
            endpoint_cache_seconds=float(e.get("HOOKLINE_ENDPOINT_CACHE_SECONDS") or "5"),
        )

    @property
    def config(self) -> HooklineConfig:
        """The deployment configuration (tenant groups, schedules, deadlines)."""
        return _config(self.config_path)


@lru_cache(maxsize=8)
def _config(path: str | None) -> HooklineConfig:
    return load_config(path)


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once."""
    return Settings.from_env()
