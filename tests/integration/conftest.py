"""Fixtures for the integration tier: the receiver wired to this test's database."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from hookline.config import HooklineConfig, load_config
from hookline.db import Database, reset_database
from hookline.runtime import reset_runtime
from tests.support import operator
from tests.support.lambdas import ApiClient
from tests.support.pipeline import Pipeline, write_config
from tests.support.sinks import Sink, running_sink

STRIPE_SECRET = "whsec_test_stripe_secret_0123456789"
STANDARD_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
GITHUB_SECRET = "gh-webhook-secret"


@pytest.fixture
def api(database_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[ApiClient]:
    """The receiver Lambda handler, as API Gateway would call it, on this test's database."""
    monkeypatch.setenv("DATABASE_URL", database_url)
    monkeypatch.delenv("HOOKLINE_FANOUT_FUNCTION", raising=False)
    reset_database()
    from functions.receiver.handler import lambda_handler

    yield ApiClient(lambda_handler)
    reset_database()


@pytest.fixture
def now() -> datetime:
    """This moment in UTC, taken when the test starts and at least two minutes before the next
    UTC midnight: what the test stamps lands in the day it computes from this moment (a
    module-level moment, taken at collection, was a day behind for tests run after midnight)."""
    moment = datetime.now(UTC)
    midnight = datetime.combine(moment.date() + timedelta(days=1), datetime.min.time(), UTC)
    if (left := (midnight - moment).total_seconds()) < 120:
        time.sleep(left + 1)
        moment = datetime.now(UTC)
    return moment


@pytest.fixture
def tenant(db: Database) -> dict[str, str]:
    """A tenant in the standard group."""
    return operator.add_tenant(db, HooklineConfig(), name="acme", group="standard")


@pytest.fixture
def stripe_source(db: Database, tenant: dict[str, str]) -> dict[str, str]:
    """A Stripe source of the tenant."""
    return operator.add_source(db, tenant_id=tenant["id"], scheme="stripe", secrets=[STRIPE_SECRET])


@pytest.fixture
def sink() -> Iterator[Sink]:
    """A real HTTP subscriber on loopback."""
    with running_sink() as s:
        yield s


@pytest.fixture
def make_pipeline(db, database_url, sqs, moto_endpoint, tmp_path, monkeypatch):
    """Builds the pipeline (fan-out, deliver per group, moto queues) on this test's database,
    with the fast test schedule and any config overrides."""
    made: list[Pipeline] = []

    def make(**config_overrides: Any) -> Pipeline:
        config_path = write_config(tmp_path / "hookline.json", **config_overrides)
        monkeypatch.setenv("DATABASE_URL", database_url)
        monkeypatch.setenv("AWS_ENDPOINT_URL", moto_endpoint)
        monkeypatch.setenv("HOOKLINE_CONFIG", str(config_path))
        monkeypatch.setenv("HOOKLINE_ALLOW_PRIVATE_TARGETS", "1")
        monkeypatch.setenv("HOOKLINE_ALLOW_HTTP_TARGETS", "1")
        monkeypatch.setenv("HOOKLINE_DB_POOL_SIZE", "12")
        monkeypatch.delenv("HOOKLINE_FANOUT_FUNCTION", raising=False)
        reset_database()
        reset_runtime()
        made.append(Pipeline(db, sqs, load_config(config_path)))
        return made[-1]

    yield make
    reset_database()
    reset_runtime()


@pytest.fixture
def pipeline(make_pipeline) -> Pipeline:
    """The pipeline with the fast test schedule."""
    return make_pipeline()
