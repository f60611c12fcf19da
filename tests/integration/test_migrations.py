"""Migrations give the schema the code expects, and are safe to run twice or at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import psycopg
import pytest
from psycopg import sql

from hookline.migrate import available_migrations, current_version, migrate
from hookline.sqlfiles import queries

pytestmark = pytest.mark.integration

EXPECTED_TABLES = {
    "tenants", "sources", "endpoints", "endpoint_secrets", "events", "outbox",
    "deliveries", "attempts", "audit_log", "schema_migrations",
}  # fmt: skip


@pytest.fixture
def empty_db(pg_admin_url):
    name = "hookline_empty_migrate"
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    yield psycopg.conninfo.make_conninfo(pg_admin_url, dbname=name)
    with psycopg.connect(pg_admin_url, autocommit=True) as conn:
        conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(sql.Identifier(name)))


def test_concurrent_migrators_apply_each_migration_once(empty_db):
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: migrate(empty_db), range(4)))
    versions = [m.version for m in available_migrations()]
    assert sorted(v for r in results for v in r) == versions
    assert current_version(empty_db) == versions[-1]
    assert migrate(empty_db) == []


def test_the_schema_has_every_domain_table(database_url):
    with psycopg.connect(database_url) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
            )
        }
    assert tables >= EXPECTED_TABLES


def test_every_named_query_is_valid_sql_against_the_migrated_schema(database_url):
    # PREPARE parses and plans each statement: a column or table the schema lacks fails here.
    with psycopg.connect(database_url, autocommit=True) as conn:
        for name, statement in queries().items():
            placeholders = statement.replace("%%", "%")
            import re

            params = sorted(set(re.findall(r"%\((\w+)\)s", placeholders)))
            numbered = placeholders
            for i, p in enumerate(params, start=1):
                numbered = numbered.replace(f"%({p})s", f"${i}")
            conn.execute(f"PREPARE q_{name} AS {numbered}".encode())
            conn.execute(f"DEALLOCATE q_{name}".encode())


def test_the_ledger_refuses_updates(database_url, db, tenant):
    import hookline

    with psycopg.connect(database_url) as conn, conn.transaction():
        hookline.publish(conn, tenant_id=tenant["id"], type="a", payload={})
    with psycopg.connect(database_url) as conn, pytest.raises(psycopg.errors.RestrictViolation):
        conn.execute("UPDATE events SET type = 'b'")
