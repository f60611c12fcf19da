"""Process-wide collaborators, built once per Lambda container (or local process) from the
settings: the delivery queues, the HTTP client, the deliverer and the fan-out options."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from functools import lru_cache
from typing import Any

import httpx

from hookline.archive import S3Archive
from hookline.aws import client
from hookline.catchup import CatchupContext
from hookline.db import Database, get_database
from hookline.delivery import Deliverer, DeliveryOptions
from hookline.fanout import FanoutOptions
from hookline.queues import DeliveryQueues
from hookline.reconcile import ReconcileOptions, Reconciler
from hookline.replay import ReplayOptions
from hookline.retention import apply_retention, ensure_partitions, policy_from_config
from hookline.retry import RetryPolicy
from hookline.settings import Settings, get_settings
from hookline.ssrf import guarded_client

_lock = threading.Lock()


def delivery_queues(settings: Settings) -> DeliveryQueues:
    """The queues of every tenant group."""
    with _lock:
        return _queues(settings)


@lru_cache(maxsize=4)
def _queues(settings: Settings) -> DeliveryQueues:
    return DeliveryQueues(
        client("sqs", settings),
        settings.config,
        url_prefix=settings.queue_url_prefix,
        fair_queues=settings.sqs_fair_queues,
    )


def fanout_options(settings: Settings) -> FanoutOptions:
    """Fan-out sizes and deadlines from the deployment configuration."""
    config = settings.config
    return FanoutOptions(
        deadline=timedelta(hours=config.delivery_deadline_hours),
        queued_lease=timedelta(seconds=config.delivery_queued_lease_seconds),
    )


def delivery_options(settings: Settings) -> DeliveryOptions:
    """Deliver timeouts and limits from the deployment configuration."""
    config = settings.config
    return DeliveryOptions(
        timeout_seconds=config.deliver_timeout_seconds,
        connect_timeout_seconds=config.deliver_connect_timeout_seconds,
        endpoint_disable_after=timedelta(days=config.endpoint_disable_after_days),
        queued_lease=timedelta(seconds=config.delivery_queued_lease_seconds),
    )


def retry_policy(settings: Settings) -> RetryPolicy:
    """The retry schedule with the configured deadline."""
    config = settings.config
    return RetryPolicy(
        schedule=tuple(timedelta(seconds=s) for s in config.retry_schedule_seconds),
        jitter=config.retry_jitter,
        deadline=timedelta(hours=config.delivery_deadline_hours),
    )


def http_client(settings: Settings) -> httpx.Client:
    """One shared, SSRF-guarded client per process (connection reuse across messages)."""
    with _lock:
        return _http(settings)


@lru_cache(maxsize=4)
def _http(settings: Settings) -> httpx.Client:
    return guarded_client(
        allow_private=settings.allow_private_targets,
        allow_http=settings.allow_http_targets,
        timeout=settings.config.deliver_timeout_seconds,
    )


def get_deliverer() -> Deliverer:
    """The process's deliverer."""
    settings = get_settings()
    return Deliverer(
        get_database(),
        delivery_queues(settings),
        http_client(settings),
        retry_policy(settings),
        delivery_options(settings),
    )


def reset_runtime() -> None:
    """Forget every cached collaborator (tests, local runner restarts)."""
    with _lock:
        _queues.cache_clear()
        _http.cache_clear()


def replay_options(settings: Settings) -> ReplayOptions:
    """Replay deadlines and leases: a replayed delivery gets the configured deadline anew."""
    config = settings.config
    return ReplayOptions(
        deadline=timedelta(hours=config.delivery_deadline_hours),
        queued_lease=timedelta(seconds=config.delivery_queued_lease_seconds),
    )


def reconcile_options(settings: Settings) -> ReconcileOptions:
    """Reconcile thresholds from the deployment configuration."""
    config = settings.config
    return ReconcileOptions(
        late_outbox_after=timedelta(seconds=config.reconcile_late_outbox_seconds),
        never_attempted_after=timedelta(minutes=config.reconcile_never_attempted_minutes),
        consistency_window=timedelta(hours=config.reconcile_consistency_window_hours),
        batch_size=config.reconcile_batch_size,
        report_retention=timedelta(days=config.reconcile_report_retention_days),
        fanout=fanout_options(settings),
    )


@lru_cache(maxsize=1)
def provider_http_client() -> httpx.Client:
    """A plain client for the fixed provider APIs of catch-up (Stripe, GitHub): not the
    SSRF-guarded one, which exists for tenant-supplied URLs."""
    return httpx.Client(timeout=httpx.Timeout(15.0, connect=5.0), follow_redirects=False)


def archive_store(settings: Settings) -> S3Archive | None:
    """The ledger archive bucket (decision 0041), or None when none is configured."""
    if not settings.archive_bucket:
        return None
    return S3Archive(client("s3", settings), settings.archive_bucket)


def build_reconciler(settings: Settings, db: Database) -> Reconciler:
    """A reconciler on `db`, with provider catch-up wired to Secrets Manager."""

    def read_secret(arn: str) -> str:
        answer = client("secretsmanager", settings).get_secret_value(SecretId=arn)
        return str(answer["SecretString"])

    archive = archive_store(settings)
    policy = policy_from_config(settings.config)

    every = timedelta(minutes=settings.config.schedules.reconcile_minutes)

    def retention(as_of: datetime) -> dict[str, Any]:
        # Partitions ahead on every run; retention in the run that starts in the first
        # schedule interval of each hour (a day kept for a long-retention tenant is read on
        # each retention run, so not every five minutes).
        if as_of - as_of.replace(minute=0, second=0, microsecond=0) >= every:
            made = ensure_partitions(db, as_of=as_of, ahead_days=policy.partitions_ahead_days)
            return {"partitions_created": made, "retention": "next hour"}
        return apply_retention(db, archive, policy, as_of=as_of).as_dict()

    return Reconciler(
        db,
        delivery_queues(settings),
        reconcile_options(settings),
        catchup=CatchupContext(db, provider_http_client(), read_secret),
        retention=retention,
    )


def get_reconciler() -> Reconciler:
    """The process's reconciler."""
    return build_reconciler(get_settings(), get_database())
