"""AWS clients built once per process, pointed at the emulator when one is configured.

Clients come from botocore directly, imported on first use: boto3 adds nothing a client
needs here, and importing it (with s3transfer) costs a cold start ~0.1 s on Lambda, paid
by every container even when it never calls AWS (docs/decisions/0048).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from hookline.settings import Settings

# The oldest botocore Hookline's calls are known to work on. The layer does not ship the SDK:
# Lambda's runtime provides it (docs/decisions/0047), and an older one is logged at first use.
MIN_BOTOCORE = (1, 34)

_lock = threading.Lock()


def sdk_is_supported(version: str) -> bool:
    """Whether a botocore `version` ("1.40.4") is at least `MIN_BOTOCORE`."""
    parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
    return parts >= MIN_BOTOCORE


@lru_cache(maxsize=1)
def _session() -> Any:
    import botocore
    from botocore.session import get_session

    if not sdk_is_supported(botocore.__version__):
        from hookline.observability import logger

        logger.warning(
            "botocore older than Hookline supports",
            extra={"botocore": botocore.__version__, "minimum": ".".join(map(str, MIN_BOTOCORE))},
        )
    return get_session()


# How patient a client is: `default` for background work, `best_effort` for a call a request
# may lose (the nudge), `on_request` for one a request needs but must not wait long for (the
# receiver's send of an event's deliveries, decision 0076): a second try and ~3 s at most,
# since a send that fails puts the deliveries back to pending for the fan-out.
DEFAULT, BEST_EFFORT, ON_REQUEST = "default", "best_effort", "on_request"


def _config(kind: str) -> Any:
    from botocore.config import Config

    if kind == ON_REQUEST:
        return Config(
            retries={"total_max_attempts": 2, "mode": "standard"},
            connect_timeout=0.5,
            read_timeout=1,
        )
    if kind == BEST_EFFORT:
        # A call on a request's path that is best effort (the fan-out nudge): one attempt, and
        # at most ~100 ms of the request — 50 ms to connect (a warm container reuses the
        # connection), 50 ms for the answer (an asynchronous invoke is answered once queued).
        return Config(
            retries={"total_max_attempts": 1, "mode": "standard"},
            connect_timeout=0.05,
            read_timeout=0.05,
        )
    return Config(
        retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=3, read_timeout=10
    )


@lru_cache(maxsize=32)
def _client(service: str, region: str, endpoint_url: str | None, kind: str) -> Any:
    return _session().create_client(
        service, region_name=region, endpoint_url=endpoint_url, config=_config(kind)
    )


class ClientOnFirstCall:
    """A client made at its first call (by `make`, one of the cached client functions), for a
    path that may never call its service: deliver sends to SQS only to retry, defer or hand on
    an ordered delivery, and making the client (botocore, ~140 modules, and the service's
    model) took its first batch ~0.2 s (decision 0083)."""

    def __init__(self, make: Callable[[], Any]) -> None:
        self._make = make

    def __getattr__(self, name: str) -> Any:
        return getattr(self._make(), name)  # `make` is cached: the same client every time


def uncached_client(service: str, settings: Settings, **credentials: str) -> Any:
    """A new client for `service` with explicit `credentials` (an assumed role's session)."""
    with _lock:
        return _session().create_client(
            service,
            region_name=settings.aws_region,
            endpoint_url=settings.aws_endpoint_url,
            config=_config(DEFAULT),
            **credentials,
        )


def client(service: str, settings: Settings) -> Any:
    """A cached client for `service` (moto or LocalStack when AWS_ENDPOINT_URL is set)."""
    with _lock:  # a botocore session is not safe to create clients from concurrently
        return _client(service, settings.aws_region, settings.aws_endpoint_url, DEFAULT)


def best_effort_client(service: str, settings: Settings) -> Any:
    """A cached client for calls that may fail but must not slow a request: no retries,
    short timeouts (~100 ms at most)."""
    with _lock:
        return _client(service, settings.aws_region, settings.aws_endpoint_url, BEST_EFFORT)


def on_request_client(service: str, settings: Settings) -> Any:
    """A cached client for a call a request waits for but must not wait long for: two tries,
    ~3 s at most (`ON_REQUEST`)."""
    with _lock:
        return _client(service, settings.aws_region, settings.aws_endpoint_url, ON_REQUEST)
