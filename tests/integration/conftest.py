"""Fixtures for the integration tier: the receiver wired to this test's database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hookline import admin
from hookline.config import HooklineConfig
from hookline.db import Database, reset_database
from tests.support.lambdas import ApiClient

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
def tenant(db: Database) -> dict[str, str]:
    """A tenant in the standard group."""
    return admin.add_tenant(db, HooklineConfig(), name="acme", group="standard")


@pytest.fixture
def stripe_source(db: Database, tenant: dict[str, str]) -> dict[str, str]:
    """A Stripe source of the tenant."""
    return admin.add_source(db, tenant_id=tenant["id"], scheme="stripe", secrets=[STRIPE_SECRET])
