"""The environment `hookline dev` gives the handlers, as AWS would give it to them: the
variables they read their settings from, a database on the embedded Postgres, the SQS client."""

from __future__ import annotations

from collections.abc import MutableMapping
from pathlib import Path
from typing import TYPE_CHECKING

import boto3
import psycopg
from botocore.config import Config

from hookline_dev.local.devstate import operator_key

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient

    from hookline.config import HooklineConfig


def configure_environment(
    env: MutableMapping[str, str],
    state_dir: Path,
    database_url: str,
    aws_endpoint: str,
    emulator: str,
) -> None:
    """Set what the handlers' settings are read from: the database and SQS found or started,
    local mode with the operator key, dummy credentials for the emulator, local defaults."""
    env["DATABASE_URL"] = database_url
    env["AWS_ENDPOINT_URL"] = aws_endpoint
    env.setdefault("AWS_REGION", env.get("AWS_DEFAULT_REGION", "us-east-1"))
    env.setdefault("AWS_DEFAULT_REGION", env["AWS_REGION"])
    if emulator == "moto":
        # moto takes any credentials; real ones (or an expired SSO profile) must not matter.
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN"):
            env.pop(name, None)
        env["AWS_ACCESS_KEY_ID"] = "testing"
        env["AWS_SECRET_ACCESS_KEY"] = "testing"  # noqa: S105 - moto's dummy credential
    else:
        env.setdefault("AWS_ACCESS_KEY_ID", "test")
        env.setdefault("AWS_SECRET_ACCESS_KEY", "test")  # LocalStack's documented dummy
    env["HOOKLINE_LOCAL_MODE"] = "1"  # /v1 without an IAM identity: local only
    # ... but with a key: a caller of the front's /v1 is an operator only with it (or from
    # the front's own origin), so a web page cannot drive the stack (decision 0030).
    env["HOOKLINE_API_KEY"] = env.get("HOOKLINE_API_KEY") or operator_key(state_dir)
    env.setdefault("HOOKLINE_ALLOW_PRIVATE_TARGETS", "1")  # subscribers on this machine
    env.setdefault("HOOKLINE_ALLOW_HTTP_TARGETS", "1")
    # On AWS each container has its own small pool; here the front's threads, every
    # container's deliver threads and the fan-out share one.
    env.setdefault("HOOKLINE_DB_POOL_SIZE", "32")
    # Traces (decision 0070) go to HOOKLINE_OTLP_TRACES_ENDPOINT when it is set (a local
    # collector's OTLP/HTTP port, e.g. http://127.0.0.1:4318/v1/traces), else nowhere.
    # Whoever talks to this stack (CLI, demo, tests, from any folder) must seal and open
    # secrets with the same local master key: an absolute path, shared through dev.json.
    key_file = Path(env.get("HOOKLINE_LOCAL_KEY_FILE") or state_dir / "master.key")
    env["HOOKLINE_LOCAL_KEY_FILE"] = str(key_file.absolute())
    # As deployed, the receiver fans an event out as it stores it and sends its deliveries
    # (decision 0076).
    env.setdefault("HOOKLINE_FANOUT_AT_RECEIPT", "1")
    # Nudges are in-process; queue URLs are looked up on the emulator.
    env.pop("HOOKLINE_FANOUT_FUNCTION", None)
    env.pop("HOOKLINE_QUEUE_URL_PREFIX", None)


def ensure_database(admin_url: str, name: str) -> str:
    """Create database `name` on the server of `admin_url` if missing; its URL."""
    from psycopg import sql

    with psycopg.connect(admin_url, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return admin_url.rsplit("/", 1)[0] + "/" + name  # a URL other tools understand too


def sqs_client(endpoint: str, region: str, config: HooklineConfig) -> SQSClient:
    """The SQS client of the event sources and the status line."""
    # One pooled connection per poller thread, plus the status line's.
    pool = sum(g.max_concurrency for g in config.tenant_groups) + 4
    client: SQSClient = boto3.client(
        "sqs",
        endpoint_url=endpoint,
        region_name=region,
        config=Config(
            max_pool_connections=pool,
            retries={"max_attempts": 3, "mode": "standard"},
            connect_timeout=3,
            read_timeout=30,  # above the longest long poll
        ),
    )
    return client
