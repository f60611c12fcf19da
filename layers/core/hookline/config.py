"""The one typed configuration of a Hookline deployment.

The CDK app and the local runner read the same object, so tenant groups, their caps,
schedules, deadlines and retention are declared once.
"""

from __future__ import annotations

import json
from dataclasses import asdict, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from hookline.records import frozen
from hookline.retry import DEFAULT_DEADLINE, DEFAULT_JITTER, DEFAULT_SCHEDULE

DEFAULT_RESOURCE_PREFIX = "hookline"
# The front door (docs/decisions/0035): API Gateway REST, HTTP API, or Lambda function URLs.
INGRESSES = ("rest", "http", "function_url")
# `wal_compression`'s values in Postgres 15 and later ("on" is pglz)
WAL_COMPRESSIONS = ("off", "on", "pglz", "lz4", "zstd")


# Regions with every resource type the AWS stack uses (decision 0062): cfn-lint's region
# schemas hold every synthesized template to this list (tests/infra). Left out: ap-east-2 (no
# RDS Proxy), ca-west-1 (no db.t4g instances), China, GovCloud and the isolated partitions
# (untested). Lambda function URLs (`ingress: function_url`) are missing in a few more.
SUPPORTED_REGIONS: tuple[str, ...] = (
    "af-south-1", "ap-east-1", "ap-northeast-1", "ap-northeast-2", "ap-northeast-3",
    "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2", "ap-southeast-3",
    "ap-southeast-4", "ap-southeast-5", "ap-southeast-6", "ap-southeast-7", "ca-central-1",
    "eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1", "eu-south-2", "eu-west-1",
    "eu-west-2", "eu-west-3", "il-central-1", "me-central-1", "me-south-1", "mx-central-1",
    "sa-east-1", "us-east-1", "us-east-2", "us-west-1", "us-west-2",
)  # fmt: skip
NO_FUNCTION_URLS: tuple[str, ...] = (
    "ap-south-2", "ap-southeast-4", "ap-southeast-5", "ap-southeast-6", "ap-southeast-7",
    "eu-central-2", "il-central-1", "me-central-1", "mx-central-1",
)  # fmt: skip


# Regions where CDK (aws-cdk-lib's region facts) names no ADOT collector layer: `tracing`
# without `tracing_collector_layer_arn` does not deploy there (decision 0070; a test holds
# this list to CDK's).
NO_ADOT_COLLECTOR: tuple[str, ...] = (
    "af-south-1", "ap-east-1", "ap-northeast-3", "ap-south-2", "ap-southeast-3",
    "ap-southeast-4", "ap-southeast-5", "ap-southeast-6", "ap-southeast-7", "eu-central-2",
    "eu-south-1", "eu-south-2", "il-central-1", "me-central-1", "me-south-1", "mx-central-1",
)  # fmt: skip


def supported_regions(config: HooklineConfig) -> tuple[str, ...]:
    """Where a stack with this configuration deploys."""
    infra = config.infrastructure
    missing: set[str] = set()
    if infra.ingress == "function_url":
        missing.update(NO_FUNCTION_URLS)
    if infra.tracing and infra.tracing_collector_layer_arn is None:
        missing.update(NO_ADOT_COLLECTOR)
    return tuple(r for r in SUPPORTED_REGIONS if r not in missing)


@frozen
class TenantGroup:
    """An isolation class: its own queue, DLQ, deliver function and concurrency cap."""

    name: str
    max_concurrency: int = 10  # SQS event source MaximumConcurrency (>= 2 on AWS)
    batch_size: int = 10
    batching_window_seconds: int = 0
    max_receive_count: int = 5  # receives before SQS moves a message to the DLQ

    @property
    def queue_name(self) -> str:
        """Name of the group's delivery queue (with the default resource prefix)."""
        return self.queue_name_for(DEFAULT_RESOURCE_PREFIX)

    @property
    def dlq_name(self) -> str:
        """Name of the group's dead-letter queue (with the default resource prefix)."""
        return self.dlq_name_for(DEFAULT_RESOURCE_PREFIX)

    def queue_name_for(self, prefix: str) -> str:
        """The delivery queue's name in the deployment whose names start with `prefix`
        (on AWS the stack's name, so two stacks live side by side in one account)."""
        return f"{prefix}-deliver-{self.name}"

    def dlq_name_for(self, prefix: str) -> str:
        """The dead-letter queue's name under `prefix`."""
        return f"{prefix}-deliver-{self.name}-dlq"


@frozen
class Schedules:
    """EventBridge schedule expressions (the local runner reads the same periods)."""

    fanout_minutes: int = 1
    reconcile_minutes: int = 5


@frozen
class Infrastructure:
    """Sizes, switches and alarm thresholds of the AWS stack (read by the CDK app in infra/)."""

    nat_gateways: int = 2  # one per AZ; their Elastic IPs are the static delivery source addresses
    # Existing Elastic IP allocations (eipalloc-...) for the NAT gateways, one per gateway, so
    # the allowlisted addresses outlive any stack; empty: the stack allocates (and retains) them.
    nat_eip_allocation_ids: tuple[str, ...] = ()
    deletion_protection: bool = True  # RDS deletion protection and snapshot-on-delete
    python_version: str = "3.12"  # Lambda runtime and the layer's wheels (--python-version)
    # The major version only: RDS picks its current minor and upgrades it automatically, so a
    # fresh deploy never names a retired minor (decision 0062).
    db_engine_version: str = "16"
    # Full-page images compressed in the WAL (decision 0094): after each checkpoint the first
    # change to a page logs the whole page, and the dedupe keys' index, keyed by providers'
    # random ids, pays one for nearly every event. "on" (pglz) is a value every engine
    # version takes; lz4 is as small and ~50 us of server CPU per event cheaper where the
    # engine accepts it.
    db_wal_compression: str = "on"
    db_instance_type: str = "t4g.small"
    db_allocated_storage_gb: int = 20
    db_max_allocated_storage_gb: int = 100
    db_multi_az: bool = False
    db_backup_retention_days: int = 7
    # UTC windows ("hh24:mi-hh24:mi", "ddd:hh24:mi-ddd:hh24:mi"); None: RDS picks them.
    db_backup_window: str | None = None
    db_maintenance_window: str | None = None
    ingress: str = "rest"  # one of INGRESSES
    # With `function_url` the receiver's reserved concurrency is its only throttle.
    receiver_reserved_concurrency: int = 50
    console_reserved_concurrency: int = 10  # likewise the console's public function URL
    waf_enabled: bool = True  # the REST API's web ACL (the other fronts take no WAF)
    waf_rate_limit_per_5min: int = 10_000  # per source IP, for everything but /in/
    # /in/: per source IP *and* source path — a large provider sends from a few addresses,
    # to one path per source; 100,000 per 5 minutes is ~330 requests/s per address and source.
    waf_inbound_rate_limit_per_5min: int = 100_000
    # /in/ per source IP across every source (made-up source ids cycle past the rule above).
    waf_inbound_ip_rate_limit_per_5min: int = 500_000
    api_throttle_rate_per_second: int = 1_000
    api_throttle_burst: int = 2_000
    receiver_memory_mb: int = 256
    fanout_memory_mb: int = 256
    deliver_memory_mb: int = 256
    worker_memory_mb: int = 256  # reconcile, replay and migrate
    receiver_timeout_seconds: int = 10
    api_timeout_seconds: int = 29  # the management API; at most API Gateway's 29 s
    fanout_timeout_seconds: int = 60
    reconcile_timeout_seconds: int = 120
    replay_timeout_seconds: int = 300
    migrate_timeout_seconds: int = 300
    fanout_reserved_concurrency: int = 5  # nudges beyond this coalesce instead of piling up
    # Reserved concurrency guarantees each tenant group its capacity; a fresh account (a
    # concurrency quota of 10) cannot reserve any: false deploys without it, each group still
    # capped by its event source's MaximumConcurrency (docs/operations.md, "Concurrency").
    reserve_concurrency: bool = True
    # The share of invocations X-Ray records (a fixed rate after a 1 request/s reservoir), and
    # with `tracing` the share of received events traced end to end (decision 0070).
    xray_sampling_rate: float = 0.01
    # OpenTelemetry spans that follow one event from receive to each delivery attempt, sent
    # to a collector extension layer in each function that exports them to X-Ray (decision
    # 0070): CDK's ADOT collector layer, or this layer ARN (a region CDK has none for).
    tracing: bool = False
    tracing_collector_layer_arn: str | None = None
    # Where alarms go (at least one, or nobody is told; `hookline preflight` says so): an
    # e-mail subscribed to the stack's topic, an existing SNS topic (of PagerDuty, Opsgenie,
    # AWS Chatbot...) that every alarm also notifies, and/or a chat incoming-webhook URL
    # (Slack, Teams, Chime, Mattermost) posted to by a small subscriber function.
    alarm_email: str | None = None
    alarm_topic_arn: str | None = None
    alarm_chat_webhook_url: str | None = None
    alarm_oldest_message_age_seconds: int = 900
    alarm_fanout_lag_seconds: int = 300
    alarm_receiver_5xx_per_5min: int = 5
    # A source whose requests are rejected (401/403/404) this often in 5 minutes: a rotated
    # provider secret, a changed URL, or a blocked caller.
    alarm_rejections_per_source_per_5min: int = 20
    alarm_waf_blocked_per_5min: int = 100
    alarm_function_errors_per_5min: int = 1
    alarm_db_free_storage_percent: int = 10  # of db_max_allocated_storage_gb
    alarm_db_cpu_percent: int = 80
    alarm_db_connections: int = 150  # instance connections (t4g.small allows ~190)
    alarm_proxy_client_connections: int = 500
    # Operational events' messages (docs/decisions/0068), set on the reconcile function: the
    # verified SES identity they come from (none: no e-mail), the operator tenant that gets a
    # copy of every tenant's operational events, the operator's addresses (comma-separated)
    # and chat webhook. The reconcile role may send as `notify_from` only.
    notify_from: str | None = None
    operator_tenant: str | None = None
    operator_emails: str = ""
    operator_chat_url: str | None = None

    def db_parameters(self) -> dict[str, str]:
        """What the stack's RDS parameter group changes from RDS's defaults (and what the
        benches' local server is given, `bench/common.py`): full-page images compressed
        (decision 0094), and no JIT compilation (decision 0102): a statement planned over
        hundreds of day partitions crosses `jit_above_cost` and compiled thousands of
        functions at every call, 1.8 s for one with nothing to do."""
        return {"wal_compression": self.db_wal_compression, "jit": "0"}


MFA_CHOICES = ("required", "optional")


@frozen
class Console:
    """The operator console on AWS (docs/decisions/0053): its Cognito user pool's first
    operator and hosted UI."""

    # Invited by Cognito (a temporary password by e-mail) and put in the operators group.
    admin_email: str | None = None
    # The hosted UI at https://<prefix>.auth.<region>.amazoncognito.com; none: "<stack>-<account>".
    cognito_domain_prefix: str | None = None
    mfa: str = "required"  # one of MFA_CHOICES; the second factor is TOTP (no SMS)


@frozen
class HooklineConfig:
    """Everything that sizes and names a deployment."""

    tenant_groups: tuple[TenantGroup, ...] = (
        TenantGroup("standard", max_concurrency=10),
        TenantGroup("priority", max_concurrency=5),
        TenantGroup("bulk", max_concurrency=3),
    )
    default_group: str = "standard"
    schedules: Schedules = field(default_factory=Schedules)
    delivery_deadline_hours: int = DEFAULT_DEADLINE // timedelta(hours=1)
    # A queued delivery whose message nobody consumed this long (lost, or a worker died) is
    # re-enqueued by reconcile; also the lease of a deferral or a short retry beyond its delay.
    delivery_queued_lease_seconds: int = 900
    deliver_timeout_seconds: int = 15
    deliver_function_timeout_seconds: int = 60
    log_retention_days: int = 30
    # Bounded storage (docs/decisions/0039-0041): events and their deliveries leave the
    # database this long after they arrived (a tenant may override it), archived to S3 first;
    # dedupe keys are kept at least `dedupe_retention_days`; day partitions are made this many
    # days ahead; a restored window is held this long before retention may take it again.
    ledger_retention_days: int = 90
    dedupe_retention_days: int = 30
    partitions_ahead_days: int = 7
    restore_hold_days: int = 7
    archive_glacier_after_days: int = 90
    deliver_connect_timeout_seconds: int = 5
    # A deliver batch whose endpoints answer within this many ms together is sent in turn on
    # one thread, not at once on the pool (decision 0093); 0: always at once.
    deliver_in_sequence_ms: int = 50
    endpoint_disable_after_days: int = 5  # failing continuously this long disables it
    secret_rotation_overlap_hours: int = 24  # old signing secrets keep signing this long
    # The retry rule is stated once, in hookline.retry (Standard Webhooks' schedule).
    retry_schedule_seconds: tuple[float, ...] = tuple(
        s // timedelta(seconds=1) for s in DEFAULT_SCHEDULE
    )
    retry_jitter: float = DEFAULT_JITTER
    # Reconcile: an outbox row unfanned this long is late; an unfinished delivery never tried
    # this long is a finding; missing deliveries are looked for among this window's events.
    reconcile_late_outbox_seconds: int = 120
    reconcile_never_attempted_minutes: int = 60
    reconcile_consistency_window_hours: int = 24
    reconcile_batch_size: int = 500  # rows per repair statement
    # Pages of the missing-delivery walk per run; the next run resumes where it stopped.
    reconcile_repair_max_pages: int = 200
    # Seconds of a run the walk may take (it reads at least one page); then it stops until the
    # next run, leaving the rest of the run to the steps after it.
    reconcile_repair_max_seconds: int = 30
    # Minutes the walk rests after reaching the window's end before it starts it again.
    reconcile_repair_rest_minutes: int = 55
    reconcile_report_retention_days: int = 30
    infrastructure: Infrastructure = field(default_factory=Infrastructure)
    console: Console = field(default_factory=Console)

    def group(self, name: str) -> TenantGroup:
        """The tenant group called `name`."""
        for group in self.tenant_groups:
            if group.name == name:
                return group
        known = ", ".join(g.name for g in self.tenant_groups)
        raise KeyError(f"unknown tenant group {name!r}; known: {known}")

    @property
    def group_names(self) -> tuple[str, ...]:
        """Names of every tenant group."""
        return tuple(g.name for g in self.tenant_groups)

    def to_json(self) -> str:
        """The configuration as JSON (for the CDK app's context and the docs)."""
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> HooklineConfig:
        """Build from a parsed JSON document; unspecified fields keep their defaults."""
        groups = tuple(TenantGroup(**g) for g in data.get("tenant_groups", []))
        schedules = Schedules(**data.get("schedules", {}))
        infra_data = dict(data.get("infrastructure", {}))
        if "nat_eip_allocation_ids" in infra_data:
            infra_data["nat_eip_allocation_ids"] = tuple(infra_data["nat_eip_allocation_ids"])
        infrastructure = Infrastructure(**infra_data)
        nested = ("tenant_groups", "schedules", "infrastructure", "console")
        rest = {k: v for k, v in data.items() if k not in nested}
        rest["console"] = Console(**data.get("console", {}))
        if "retry_schedule_seconds" in rest:
            rest["retry_schedule_seconds"] = tuple(rest["retry_schedule_seconds"])
        config = cls(schedules=schedules, infrastructure=infrastructure, **rest)
        if groups:
            config = cls(
                tenant_groups=groups, schedules=schedules, infrastructure=infrastructure, **rest
            )
        layer_arn = config.infrastructure.tracing_collector_layer_arn
        if layer_arn is not None and not layer_arn.startswith("arn:"):
            raise ValueError("infrastructure.tracing_collector_layer_arn must be a layer ARN")
        if config.infrastructure.ingress not in INGRESSES:
            known = ", ".join(INGRESSES)
            raise ValueError(f"infrastructure.ingress must be one of {known}")
        if config.console.mfa not in MFA_CHOICES:
            raise ValueError(f"console.mfa must be one of {', '.join(MFA_CHOICES)}")
        if config.default_group not in config.group_names:
            raise ValueError(f"default_group {config.default_group!r} is not a tenant group")
        for name in ("ledger_retention_days", "dedupe_retention_days", "restore_hold_days"):
            if getattr(config, name) <= 0:
                raise ValueError(f"{name} must be at least 1 day, not {getattr(config, name)}")
        if not config.infrastructure.db_engine_version.isdigit():
            raise ValueError(
                'infrastructure.db_engine_version must be a major version such as "16": RDS '
                "retires minor versions, and a template naming one fails to deploy then"
            )
        if config.infrastructure.db_wal_compression not in WAL_COMPRESSIONS:
            raise ValueError(
                f"infrastructure.db_wal_compression must be one of {', '.join(WAL_COMPRESSIONS)}"
            )
        if config.reconcile_repair_max_pages < 1:
            raise ValueError("reconcile_repair_max_pages must be at least 1")
        if config.reconcile_repair_max_seconds < 0:
            raise ValueError("reconcile_repair_max_seconds must be 0 or more")
        if config.reconcile_repair_rest_minutes < 0:
            raise ValueError("reconcile_repair_rest_minutes must be 0 or more")
        return config


def load_config(path: str | Path | None = None) -> HooklineConfig:
    """Read `hookline.json` (or `path`) when present, else the defaults."""
    candidate = Path(path) if path else Path("hookline.json")
    if candidate.exists():
        return HooklineConfig.from_dict(json.loads(candidate.read_text()))
    return HooklineConfig()
