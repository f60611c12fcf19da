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


@lru_cache(maxsize=32)
def _client(service: str, region: str, endpoint_url: str | None) -> Any:
    return boto3.client(  # type: ignore[call-overload]
        service, region_name=region, endpoint_url=endpoint_url, config=_CONFIG
    )


def client(service: str, settings: Settings) -> Any:
    """A cached boto3 client for `service` (moto or LocalStack when AWS_ENDPOINT_URL is set)."""
    return _client(service, settings.aws_region, settings.aws_endpoint_url)
