"""Process-wide collaborators, built once per Lambda container (or local process) from the
settings: the delivery queues, the HTTP client, the deliverer, the reconciler, where a replay
runs, and the options of each service. Handlers call these; services receive what they build."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import lru_cache, partial
from typing import TYPE_CHECKING, Any

from hookline.aws import ClientOnFirstCall, client, on_request_client
from hookline.config import HooklineConfig
from hookline.db import Database, get_database
from hookline.retry import RetryPolicy
from hookline.settings import Settings, get_settings
from hookline.tracing import Tracing

if TYPE_CHECKING:
    import httpx

    from hookline.archive import S3Archive
    from hookline.delivery import Deliverer, DeliveryOptions
    from hookline.destinations.senders import AwsSenders
    from hookline.endpoint_auth import EndpointAuth
    from hookline.fanout import FanoutOptions, ReleasedHeads
    from hookline.operational.monitor import OperationalMonitor
    from hookline.queues import DeliveryQueues
    from hookline.reconcile import ReconcileOptions, Reconciler
    from hookline.replay import Continue, ReplayOptions
    from hookline.repositories.sources_cache import SourceCache
    from hookline.restore_requests import RestoreOptions
    from hookline.webhook_client import WebhookClient

# Each handler imports this module for a few factories; the services behind the others (the
# queues and fan-out, the archive, httpx and the SSRF guard, replay, reconcile, catch-up) are
# imported by the factory that builds them, so a handler's cold start loads only what its own
# factories build: the receiver's none of fan-out's, the fan-out's none of the deliverer's
# (docs/decisions/0048).

_lock = threading.Lock()


def delivery_queues(settings: Settings) -> DeliveryQueues:
    """The queues of every tenant group."""
    with _lock:
        return _queues(settings, on_request=False)


def receipt_queues(settings: Settings) -> DeliveryQueues:
    """The queues as the receiver sends an event's deliveries right after storing them
    (decision 0076): the provider waits, so two tries and ~3 s at most (`on_request_client`);
    what cannot be sent goes back to pending for the fan-out."""
    with _lock:
        return _queues(settings, on_request=True)


@lru_cache(maxsize=4)
def _queues(settings: Settings, *, on_request: bool) -> DeliveryQueues:
    make = on_request_client if on_request else client
    sqs = ClientOnFirstCall(partial(make, "sqs", settings))  # deliver may never send (0083)
    options: dict[str, Any] = {
        "url_prefix": settings.queue_url_prefix,
        "fair_queues": settings.sqs_fair_queues,
        "name_prefix": settings.resource_prefix,
    }
    if settings.otlp_traces_endpoint:
        # Each message of a traced event carries its trace to deliver (decision 0070).
        from hookline.event_traces import TracedDeliveryQueues

        return TracedDeliveryQueues(
            sqs, settings.config, tracing(settings), get_database(), **options
        )
    from hookline.queues import DeliveryQueues

    return DeliveryQueues(sqs, settings.config, **options)


def tracing(settings: Settings) -> Tracing:
    """The process's tracing (off unless an OTLP endpoint is configured; decision 0070)."""
    return Tracing(settings.otlp_traces_endpoint, settings.trace_sample_rate)


def fanout_options(settings: Settings) -> FanoutOptions:
    """Fan-out sizes and deadlines from the deployment configuration."""
    from hookline.fanout import FanoutOptions

    config = settings.config
    return FanoutOptions(
        deadline=timedelta(hours=config.delivery_deadline_hours),
        queued_lease=timedelta(seconds=config.delivery_queued_lease_seconds),
    )


def delivery_options(settings: Settings) -> DeliveryOptions:
    """Deliver timeouts and limits from the deployment configuration."""
    from hookline.delivery import DeliveryOptions

    config = settings.config
    return DeliveryOptions(
        timeout_seconds=config.deliver_timeout_seconds,
        connect_timeout_seconds=config.deliver_connect_timeout_seconds,
        in_sequence_seconds=config.deliver_in_sequence_ms / 1000,
        endpoint_disable_after=timedelta(days=config.endpoint_disable_after_days),
        queued_lease=timedelta(seconds=config.delivery_queued_lease_seconds),
    )


def retry_policy(config: HooklineConfig) -> RetryPolicy:
    """The retry policy the deliverer runs: the configured schedule, jitter and deadline
    (whose defaults are `hookline.retry`'s)."""
    return RetryPolicy(
        schedule=tuple(timedelta(seconds=s) for s in config.retry_schedule_seconds),
        jitter=config.retry_jitter,
        deadline=timedelta(hours=config.delivery_deadline_hours),
    )


def http_client(settings: Settings) -> WebhookClient:
    """One shared, SSRF-guarded webhook client per process (connection reuse across
    messages)."""
    with _lock:
        return _http(settings)


@lru_cache(maxsize=4)
def _http(settings: Settings) -> WebhookClient:
    from hookline.webhook_client import WebhookClient

    return WebhookClient(
        allow_private=settings.allow_private_targets, allow_http=settings.allow_http_targets
    )


def public_http_client(settings: Settings) -> WebhookClient:
    """The client for endpoints that must reach public addresses only whatever the
    deployment allows (decision 0059): `http_client` itself where it refuses private ones."""
    if not settings.allow_private_targets:
        return http_client(settings)
    with _lock:
        return _public_http(settings)


@lru_cache(maxsize=4)
def _public_http(settings: Settings) -> WebhookClient:
    from hookline.webhook_client import WebhookClient

    return WebhookClient(allow_private=False, allow_http=settings.allow_http_targets)


def guarded_http_client(settings: Settings) -> httpx.Client:
    """An SSRF-guarded httpx client, guarded as the webhooks are, for the URLs that are not
    webhooks: chat notifications, SNS certificates and subscription confirmations."""
    with _lock:
        return _guarded_http(settings)


@lru_cache(maxsize=4)
def _guarded_http(settings: Settings) -> httpx.Client:
    from hookline.guarded_http import guarded_client

    return guarded_client(
        allow_private=settings.allow_private_targets,
        allow_http=settings.allow_http_targets,
        timeout=settings.config.deliver_timeout_seconds,
    )


def endpoint_auth(settings: Settings) -> EndpointAuth:
    """The process's OAuth2 tokens and mutual-TLS clients per endpoint (decision 0067)."""
    with _lock:
        return _endpoint_auth(settings)


@lru_cache(maxsize=4)
def _endpoint_auth(settings: Settings) -> EndpointAuth:
    from hookline.endpoint_auth import endpoint_auth_for

    return endpoint_auth_for(_http(settings), settings, delivery_options(settings))


def aws_senders(settings: Settings) -> AwsSenders:
    """The process's senders to AWS destinations, with their cache of assumed roles'
    credentials (decision 0046)."""
    with _lock:
        return _senders(settings)


@lru_cache(maxsize=4)
def _senders(settings: Settings) -> AwsSenders:
    from hookline.destinations import OwnResources
    from hookline.destinations.credentials import RoleCredentialCache
    from hookline.destinations.senders import AwsSenders

    credentials = RoleCredentialCache(client("sts", settings))
    endpoint = settings.destination_endpoint_url or settings.aws_endpoint_url
    own = OwnResources(settings.account_id, settings.archive_bucket, settings.resource_prefix)
    return AwsSenders(credentials, endpoint_url=endpoint, own=own)


def get_deliverer() -> Deliverer:
    """The process's deliverer."""
    from hookline.delivery import Deliverer

    settings = get_settings()
    return Deliverer(
        get_database(),
        delivery_queues(settings),
        http_client(settings),
        retry_policy(settings.config),
        delivery_options(settings),
        settings=settings,
        destinations=lambda: aws_senders(settings),
        endpoint_auth=endpoint_auth(settings),
        public_http=public_http_client(settings),
    )


@lru_cache(maxsize=1)
def released_heads() -> ReleasedHeads:
    """The process's hand-on of ordered keys' next deliveries (decision 0069), with its cached
    answer to whether any endpoint is ordered."""
    from hookline.fanout import ReleasedHeads

    return ReleasedHeads()


_sources: list[tuple[Settings, SourceCache]] = []


def source_cache(settings: Settings) -> SourceCache:
    """The receiver's sources kept for `source_cache_seconds` (decision 0074); one per
    settings object, found by identity (hashing the settings costs more than the lookup)."""
    for known, cache in _sources:
        if known is settings:
            return cache
    from hookline.repositories.sources_cache import SourceCache

    with _lock:
        _sources[:] = [p for p in _sources if p[0] is not settings][-3:]
        cache = SourceCache(settings.source_cache_seconds)
        _sources.append((settings, cache))
        return cache


def reset_runtime() -> None:
    """Forget every cached collaborator (tests, local runner restarts)."""
    with _lock:
        _sources.clear()
        _queues.cache_clear()
        _http.cache_clear()
        _public_http.cache_clear()
        _guarded_http.cache_clear()
        _senders.cache_clear()
        _endpoint_auth.cache_clear()
        _provider_http.cache_clear()
        released_heads.cache_clear()


def replay_options(settings: Settings) -> ReplayOptions:
    """Replay deadlines and leases: a replayed delivery gets the configured deadline anew."""
    from hookline.replay import ReplayOptions

    config = settings.config
    return ReplayOptions(
        deadline=timedelta(hours=config.delivery_deadline_hours),
        queued_lease=timedelta(seconds=config.delivery_queued_lease_seconds),
    )


def reconcile_options(settings: Settings) -> ReconcileOptions:
    """Reconcile thresholds from the deployment configuration."""
    from hookline.reconcile import ReconcileOptions

    config = settings.config
    return ReconcileOptions(
        late_outbox_after=timedelta(seconds=config.reconcile_late_outbox_seconds),
        never_attempted_after=timedelta(minutes=config.reconcile_never_attempted_minutes),
        consistency_window=timedelta(hours=config.reconcile_consistency_window_hours),
        batch_size=config.reconcile_batch_size,
        repair_max_pages=config.reconcile_repair_max_pages,
        repair_max_seconds=config.reconcile_repair_max_seconds,
        repair_cycle_rest=timedelta(minutes=config.reconcile_repair_rest_minutes),
        report_retention=timedelta(days=config.reconcile_report_retention_days),
        fanout=fanout_options(settings),
    )


def provider_http_client(settings: Settings) -> httpx.Client:
    """The catch-up's client for the provider APIs: SSRF-guarded like a webhook's, since an
    operator's override or the deployment's base URL must not reach private addresses either
    (docs/decisions/0026); tests and local fakes allow them with HOOKLINE_CATCHUP_ALLOW_PRIVATE."""
    with _lock:
        return _provider_http(settings)


@lru_cache(maxsize=4)
def _provider_http(settings: Settings) -> httpx.Client:
    import httpx

    from hookline.guarded_http import guarded_client

    return guarded_client(
        allow_private=settings.catchup_allow_private,
        allow_http=settings.catchup_allow_private,
        timeout=httpx.Timeout(15.0, connect=5.0),
    )


def archive_store(settings: Settings) -> S3Archive | None:
    """The ledger archive bucket (decision 0041), or None when none is configured."""
    if not settings.archive_bucket:
        return None
    from hookline.archive import S3Archive

    return S3Archive(client("s3", settings), settings.archive_bucket)


def build_reconciler(settings: Settings, db: Database) -> Reconciler:
    """A reconciler on `db`, with provider catch-up wired to Secrets Manager."""
    from hookline.catchup import CatchupContext
    from hookline.catchup.secrets import secret_reader
    from hookline.reconcile import Reconciler
    from hookline.replay import sweep
    from hookline.restore_requests import fail_stale_restores
    from hookline.retention import policy_from_config, scheduled_retention

    continuation = replay_continuation(settings)
    groups = settings.config.group_names
    archive = archive_store(settings)
    policy = policy_from_config(settings.config)

    every = timedelta(minutes=settings.config.schedules.reconcile_minutes)

    def retention(as_of: datetime, keep_going: Callable[[], bool]) -> dict[str, Any]:
        # The run that starts in the first schedule interval of each hour is the hour's.
        first = as_of - as_of.replace(minute=0, second=0, microsecond=0) < every
        return scheduled_retention(
            db, archive, policy, as_of=as_of, keep_going=keep_going, first_of_hour=first
        )

    return Reconciler(
        db,
        delivery_queues(settings),
        reconcile_options(settings),
        catchup=CatchupContext(
            db,
            provider_http_client(settings),
            secret_reader(settings),
            api_bases=dict(settings.catchup_api_bases),
        ),
        sweep_replays=lambda: {
            **sweep(db, start=continuation, groups=groups),
            **fail_stale_restores(db),
        },
        retention=retention,
        operational=operational_monitor(settings, db).run,
    )


def operational_monitor(settings: Settings, db: Database) -> OperationalMonitor:
    """The operational monitor on `db`, with SES and the SSRF-guarded client for its
    notifications (decision 0068)."""
    from hookline.operational.monitor import OperationalMonitor
    from hookline.operational.notify import Notifier

    options = settings.operational
    ses = client("ses", settings) if options.notify_from else None
    return OperationalMonitor(
        db, settings, Notifier(ses, guarded_http_client(settings), options.notify_from)
    )


def get_reconciler() -> Reconciler:
    """The process's reconciler."""
    return build_reconciler(get_settings(), get_database())


def replay_continuation(settings: Settings) -> Continue:
    """Where a run of a recorded replay starts: the replay function when one is configured
    (AWS), else a background thread of this process (local)."""
    from hookline.replay import in_thread, run_recorded_replay

    if settings.replay_function_name:
        return replay_invoker(settings, settings.replay_function_name)

    def run_here(replay_id: str, run: int) -> None:
        run_recorded_replay(
            get_database(), delivery_queues(settings), replay_options(settings), replay_id, run=run
        )

    return in_thread(run_here)


def replay_invoker(settings: Settings, function_name: str) -> Continue:
    """Start a run of a recorded replay in the function `function_name`, asynchronously."""
    from hookline.replay import invoker

    return invoker(lambda: client("lambda", settings), function_name)


def restore_options(settings: Settings, db: Database) -> RestoreOptions:
    """A restore's retention hold and its fan-out run on `db` (decision 0051)."""
    from hookline.fanout import run_fanout
    from hookline.restore_requests import RestoreOptions

    return RestoreOptions(
        hold_days=settings.config.restore_hold_days,
        fan_out=lambda: run_fanout(db, delivery_queues(settings), fanout_options(settings)),
    )


def restore_starter(settings: Settings) -> Callable[[str], None]:
    """How the API starts a restore it recorded: the replay function when one is configured
    (AWS), else a background thread of this process (local)."""
    from hookline import restore_requests

    if settings.replay_function_name:
        return restore_requests.invoker(
            lambda: client("lambda", settings), settings.replay_function_name
        )
    db = get_database()
    return restore_requests.in_thread(
        lambda restore_id: restore_requests.run_recorded_restore(
            db, archive_store(settings), restore_id, restore_options(settings, db)
        )
    )


def replay_starter(settings: Settings) -> Callable[[str], None]:
    """How the API starts a replay it recorded: its first run, as `replay_continuation`."""
    start = replay_continuation(settings)
    return lambda replay_id: start(replay_id, 1)
