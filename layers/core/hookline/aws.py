"""boto3 clients built once per process, pointed at the emulator when one is configured."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import boto3
from botocore.config import Config

from hookline.settings import Settings

_CONFIG = Config(
    retries={"max_attempts": 3, "mode": "standard"}, connect_timeout=3, read_timeout=10
)
# For a call on a request's path that is best effort (the fan-out nudge): one attempt, and at
# most ~100 ms of the request — 50 ms to connect (a warm container reuses the connection),
# 50 ms for the answer (an asynchronous invoke is answered as soon as it is queued).
_BEST_EFFORT = Config(
    retries={"total_max_attempts": 1, "mode": "standard"},
    connect_timeout=0.05,
    read_timeout=0.05,
)


@lru_cache(maxsize=32)
def _client(service: str, region: str, endpoint_url: str | None, best_effort: bool) -> Any:
    return boto3.client(  # type: ignore[call-overload]
        service,
        region_name=region,
        endpoint_url=endpoint_url,
        config=_BEST_EFFORT if best_effort else _CONFIG,
    )


def client(service: str, settings: Settings) -> Any:
    """A cached boto3 client for `service` (moto or LocalStack when AWS_ENDPOINT_URL is set)."""
    return _client(service, settings.aws_region, settings.aws_endpoint_url, False)


def best_effort_client(service: str, settings: Settings) -> Any:
    """A cached client for calls that may fail but must not slow a request: no retries,
    short timeouts (~100 ms at most)."""
    return _client(service, settings.aws_region, settings.aws_endpoint_url, True)
