"""Shared fixtures: a real Postgres server for the session, and a fresh database per test
cloned from a migrated template (fast and isolated)."""

from __future__ import annotations

import itertools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from hookline.db import Database
from hookline.migrate import migrate
from hookline_dev.local.powertools import isolate_resolver_state, serialize_metrics
from hookline_dev.localpg import LocalPostgres

# Tests never talk to real AWS: boto3 gets dummy credentials and the emulator's endpoint.
os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "Hookline")
# The local master key that wraps the secrets' data key: one per test session, not the repo's.
os.environ.setdefault(
    "HOOKLINE_LOCAL_KEY_FILE", os.path.join(tempfile.mkdtemp(prefix="hookline-key-"), "master.key")
)

# The tests invoke handlers from several threads at once, as the local runner does: give them
# the same per-thread Powertools state (decision 0009), or concurrent invocations would read
# each other's events and race on the metric set.
isolate_resolver_state()
serialize_metrics()

pytest_plugins = ["tests.support.aws", "tests.support.management"]

_counter = itertools.count()


def _with_db(url: str, dbname: str) -> str:
    return psycopg.conninfo.make_conninfo(url, dbname=dbname)


@pytest.fixture(scope="session")
def pg_admin_url() -> Iterator[str]:
    """DATABASE_URL when given, else a throwaway local server for this session."""
    given = os.environ.get("DATABASE_URL")
    if given:
        yield given
        return
    root = Path(tempfile.mkdtemp(prefix="hookline-test-pg-"))
    root.chmod(0o755)  # the postgres system user must reach its data dir
    server = LocalPostgres(root / "data", durable=False)
    try:
        yield server.start()
    finally:
        server.stop("immediate")


@pytest.fixture(scope="session")
def template_db(pg_admin_url: str) -> str:
    """A database with every migration applied, cloned by each test."""
    name = f"hookline_tpl_{os.getpid()}"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    migrate(_with_db(pg_admin_url, name))
    return name


@pytest.fixture
def database_url(pg_admin_url: str, template_db: str) -> Iterator[str]:
    """A fresh, migrated database of this test's own."""
    name = f"hookline_t_{os.getpid()}_{next(_counter)}"
    ident = sql.Identifier(name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("CREATE DATABASE {} TEMPLATE {}").format(ident, sql.Identifier(template_db))
        )
    try:
        yield _with_db(pg_admin_url, name)
    finally:
        with psycopg.connect(pg_admin_url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    """A connection pool on this test's database."""
    database = Database(database_url, max_size=8, timeout=5)
    try:
        yield database
    finally:
        database.close()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Each tier is a folder: mark every test with its folder's tier."""
    for item in items:
        tier = item.path.parent.name
        if tier in ("unit", "integration", "infra", "e2e", "browser"):
            item.add_marker(getattr(pytest.mark, tier))
