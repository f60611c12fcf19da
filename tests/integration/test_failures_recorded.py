"""An endpoint's failure streak (decision 0104): the first failed attempt starts it, later ones
keep its start without writing the endpoint's row, so the failures of a failing endpoint's
deliveries never wait for one another's row lock."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.rows import dict_row

from hookline.config import HooklineConfig
from hookline.db import Database
from hookline.repositories import endpoints as endpoint_repo
from hookline.settings import get_settings
from tests.support import operator

pytestmark = pytest.mark.integration


def an_endpoint(db: Database) -> str:
    """A new tenant's endpoint (the `pipeline` fixture's settings allow a loopback URL)."""
    tenant = operator.add_tenant(db, HooklineConfig(), name="streak", group="standard")["id"]
    return str(
        operator.add_endpoint(db, get_settings(), tenant_id=tenant, url="http://127.0.0.1:9/")["id"]
    )


def test_the_first_failure_starts_the_streak_and_later_ones_keep_its_start(
    pipeline, db: Database
) -> None:
    # Given an endpoint that has not failed
    endpoint_id = an_endpoint(db)
    # When one of its attempts fails, and later another
    with db.connection() as conn:
        first = endpoint_repo.record_failure(conn, endpoint_id)
    with db.connection() as conn:
        second = endpoint_repo.record_failure(conn, endpoint_id)
        stored = conn.execute(
            "SELECT failing_since, enabled FROM endpoints WHERE id = %s", (endpoint_id,)
        ).fetchone()
    # Then the streak started at the first failure and still dates from it
    assert first is not None and first["failing_since"] is not None and first["enabled"]
    assert second == first == stored


def test_a_failing_endpoints_failures_do_not_wait_for_one_another(
    pipeline, db: Database, database_url: str
) -> None:
    # Given an endpoint already failing, and one deliver worker recording a failure of it in
    # a transaction that has not committed yet (its commit waits for the disk)
    endpoint_id = an_endpoint(db)
    with db.connection() as conn:
        started = endpoint_repo.record_failure(conn, endpoint_id)
    with (
        psycopg.connect(database_url, row_factory=dict_row) as first,
        psycopg.connect(database_url, row_factory=dict_row, autocommit=True) as second,
    ):
        assert endpoint_repo.record_failure(first, endpoint_id) == started
        # When another worker records a failure of the same endpoint meanwhile
        second.execute("SET lock_timeout = '2s'")
        streak = endpoint_repo.record_failure(second, endpoint_id)
        first.rollback()
    # Then it reads the same streak at once instead of waiting for the first's row lock (a
    # wait would end in lock_timeout's error)
    assert streak == started
